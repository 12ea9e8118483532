"""Settings read once from the environment (the template's Parameters land here)."""

from __future__ import annotations

import os
from dataclasses import dataclass

# The template's ToolModules default too. The conformance fixtures come first: the
# suite calls whichever tool is listed first, with no arguments.
DEFAULT_TOOL_MODULES = "taskgate_conformance,taskgate_tools"


def _int(name: str, default: int) -> int:
    raw = os.environ.get(name)
    return int(raw) if raw not in (None, "") else default


@dataclass(frozen=True)
class Settings:
    table_name: str
    state_machine_arn: str
    default_ttl_ms: int
    max_ttl_ms: int
    poll_interval_ms: int
    anonymous_owner: str
    tool_modules: tuple[str, ...]
    max_body_bytes: int
    stream_max_seconds: float
    max_active_per_owner: int
    max_argument_bytes: int
    max_input_response_bytes: int
    max_inline_result_bytes: int
    max_task_runtime_seconds: int
    stale_after_seconds: int
    result_bucket: str
    step_yield_margin_ms: int

    @classmethod
    def from_env(cls) -> Settings:
        return cls(
            table_name=os.environ.get("TASK_TABLE", "taskgate-tasks"),
            state_machine_arn=os.environ.get("STATE_MACHINE_ARN", ""),
            default_ttl_ms=_int("DEFAULT_TTL_MS", 3_600_000),
            max_ttl_ms=_int("MAX_TTL_MS", 86_400_000),
            poll_interval_ms=_int("POLL_INTERVAL_MS", 1_000),
            anonymous_owner=os.environ.get("ANONYMOUS_OWNER", "anonymous"),
            tool_modules=tuple(
                m.strip()
                for m in os.environ.get("TOOL_MODULES", DEFAULT_TOOL_MODULES).split(",")
                if m.strip()
            ),
            max_body_bytes=_int("MAX_BODY_BYTES", 1_048_576),
            # Under API Gateway's 29 s, with room for the Lambda's own overhead.
            stream_max_seconds=float(os.environ.get("STREAM_MAX_SECONDS") or 20),
            max_active_per_owner=_int("MAX_ACTIVE_TASKS_PER_OWNER", 100),
            max_argument_bytes=_int("MAX_ARGUMENT_BYTES", 262_144),
            max_input_response_bytes=_int("MAX_INPUT_RESPONSE_BYTES", 65_536),
            max_inline_result_bytes=_int("MAX_INLINE_RESULT_BYTES", 262_144),
            max_task_runtime_seconds=_int("MAX_TASK_RUNTIME_SECONDS", 86_400),
            stale_after_seconds=_int("STALE_AFTER_SECONDS", 300),
            result_bucket=os.environ.get("RESULT_BUCKET", ""),
            # A checkpoint with less time than this left in the invocation ends the step.
            step_yield_margin_ms=_int("STEP_YIELD_MARGIN_MS", 60_000),
        )
