"""Settings, read once from the environment and validated at start.

The template's Parameters land in these variables. A function whose settings
are missing or malformed fails its cold start with a message naming the
variable, instead of answering "please retry" to every request later. Every
default lives here, once.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

# The template's ToolModules default too. The conformance fixtures come first: the
# suite calls whichever tool is listed first, with no arguments.
DEFAULT_TOOL_MODULES = "taskgate_conformance,taskgate_tools"

Positive = Annotated[int, Field(gt=0)]
NonNegative = Annotated[int, Field(ge=0)]


class ConfigurationError(RuntimeError):
    """The environment does not describe a working deployment."""


class Settings(BaseModel):
    # Field names are the environment variables, lowercased.
    model_config = ConfigDict(frozen=True, extra="ignore")

    task_table: str = Field(min_length=1)
    state_machine_arn: str = Field(min_length=1)
    result_bucket: str = ""
    default_ttl_ms: Positive = 3_600_000
    max_ttl_ms: Positive = 86_400_000
    poll_interval_ms: Positive = 1_000
    anonymous_owner: str = Field(default="anonymous", min_length=1)
    tool_modules: tuple[str, ...] = tuple(DEFAULT_TOOL_MODULES.split(","))
    max_body_bytes: Positive = 1_048_576
    # How long a waiting 2025 tasks/result stream may hold its API Lambda (reading
    # the task at its pollInterval) before the client reconnects. 0: read once and
    # end with retry = pollInterval, which costs what polling tasks/get does.
    # At most 28: under API Gateway's 29 s, with room for the Lambda's own overhead.
    stream_max_seconds: Annotated[float, Field(ge=0, le=28)] = 0.0
    # How long a stream's event log outlives its last event, for clients resuming it.
    stream_log_ttl_ms: Positive = 3_600_000
    # How long a 2025-11-25 session (Mcp-Session-Id) stays valid.
    session_ttl_ms: Positive = 24 * 3_600_000
    max_active_tasks_per_owner: NonNegative = 100
    # Plain tool calls (and streams holding on) one process runs at once; past it,
    # 503 + Retry-After. Under the server's 40 worker threads, so other requests always
    # find one. A Lambda instance serves one request at a time: only the local server
    # (or one process serving many) ever reaches it.
    max_inline_calls: Annotated[int, Field(gt=0, le=32)] = 16
    max_argument_bytes: Positive = 262_144
    # Every answer one task holds, all rounds together.
    max_input_response_bytes: Positive = 65_536
    # The state a tool saves with ctx.checkpoint.
    max_checkpoint_bytes: Positive = 65_536
    max_inline_result_bytes: Positive = 262_144
    max_task_runtime_seconds: NonNegative = 86_400
    stale_after_seconds: Positive = 300
    # A checkpoint with less time than this left in the invocation ends the step.
    step_yield_margin_ms: NonNegative = 60_000

    @field_validator("tool_modules", mode="before")
    @classmethod
    def _split_modules(cls, value: object) -> object:
        if isinstance(value, str):
            return tuple(m.strip() for m in value.split(",") if m.strip())
        return value

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Settings:
        env = os.environ if environ is None else environ
        # An empty variable is "not set": the template passes "" for optional Parameters.
        values = {name: env[name.upper()] for name in cls.model_fields if env.get(name.upper(), "") != ""}
        try:
            return cls.model_validate(values)
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(str(p) for p in e['loc']).upper()}: {e['msg']}" for e in exc.errors()
            )
            raise ConfigurationError(f"taskgate is misconfigured: {problems}") from None
