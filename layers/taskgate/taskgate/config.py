"""Settings, read once from the environment and validated at start.

The template's Parameters land in these variables. A function whose settings
are missing or malformed fails its cold start with a message naming the
variable, instead of answering "please retry" to every request later. Every
default lives here, once.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Annotated, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)

# The template's ToolModules default too: the deployer's own package. The conformance
# fixtures (taskgate_conformance) are loaded only where they are asked for: the tests, the
# conformance suite and this repository's local server (Makefile, `make serve`).
DEFAULT_TOOL_MODULES = "taskgate_tools"
# The examples and the fixtures, as this repository's local server and tests serve them. The
# fixtures come first: the conformance suite calls whichever tool is listed first, with no arguments.
EXAMPLE_TOOL_MODULES = "taskgate_conformance,taskgate_tools"

# Transport security (DNS rebinding): who may be named in Host and Origin. A host without a
# port matches any port; "*" allows anything. Deployed, the API's own domain is allowed too.
LOCAL_HOSTS = ("localhost", "127.0.0.1", "[::1]")
LOCAL_ORIGINS = tuple(f"{scheme}://{host}" for scheme in ("http", "https") for host in LOCAL_HOSTS)

Positive = Annotated[int, Field(gt=0)]
NonNegative = Annotated[int, Field(ge=0)]


class ConfigurationError(RuntimeError):
    """The environment does not describe a working deployment."""


class Settings(BaseModel):
    # Field names are the environment variables, lowercased.
    model_config = ConfigDict(frozen=True, extra="ignore")

    task_table: str = Field(min_length=1)
    # The API and the sweeper start, resume and stop executions; the worker, which the
    # state machine invokes (a reference back would be circular), is given none.
    state_machine_arn: str = ""
    result_bucket: str = ""
    default_ttl_ms: Positive = 3_600_000
    max_ttl_ms: Positive = 86_400_000
    poll_interval_ms: Positive = 1_000
    anonymous_owner: str = Field(default="anonymous", min_length=1)
    tool_modules: tuple[str, ...] = tuple(DEFAULT_TOOL_MODULES.split(","))
    # JSON files declaring tools that each start one job (tools/declared.py), as
    # package:file.json in a tools package, after ToolModules' tools.
    tool_declarations: tuple[str, ...] = ()
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
    # How many of them one owner may hold (the anonymous owner, with sign-in off, may hold
    # them all): one caller cannot leave every other one a 503.
    max_inline_calls_per_owner: Annotated[int, Field(gt=0, le=32)] = 4
    max_argument_bytes: Positive = 262_144
    # Every answer one task holds, all rounds together.
    max_input_response_bytes: Positive = 65_536
    # The state a tool saves with ctx.checkpoint.
    max_checkpoint_bytes: Positive = 65_536
    max_inline_result_bytes: Positive = 262_144
    # A task result larger than this is delivered as resource_links to its parts (a Lambda
    # response is at most 6 MB); each part is read with resources/read.
    max_result_response_bytes: Annotated[int, Field(ge=2048, le=4_194_304)] = 2_097_152
    max_task_runtime_seconds: NonNegative = 86_400
    stale_after_seconds: Positive = 300
    # A checkpoint with less time than this left in the invocation ends the step.
    step_yield_margin_ms: NonNegative = 60_000
    # Where clients reach this deployment (template Parameter PublicUrl: a custom domain; else
    # the API's own URL), without a trailing slash. Callback URLs (tools.jobs.Callback) are
    # made from it.
    public_url: str = ""
    # How often reads of a task that waits on a job may ask the job's service for its
    # status (per task, however many clients poll).
    job_status_interval_ms: Positive = 10_000
    allowed_hosts: tuple[str, ...] = LOCAL_HOSTS
    allowed_origins: tuple[str, ...] = LOCAL_ORIGINS
    # The Secrets Manager secret whose value seals a plain call's requestState (every
    # instance must share it); unset: a key made by this process (one local server).
    request_state_secret_arn: str = ""
    request_state_ttl_seconds: Positive = 600

    # Sign-in (template Parameter AuthMode). NONE: every caller is anonymous_owner; IAM: API
    # Gateway checks SigV4 and names the caller; JWT: ApiFunction checks bearer tokens
    # (taskgate/auth), publishing RFC 9728 metadata for MCP clients.
    auth_mode: Literal["NONE", "JWT", "IAM"] = "NONE"
    # JWT only. The canonical URL of /mcp (the tokens' audience, the metadata's resource).
    oauth_resource: str = ""
    # The token issuer (iss), also the authorization server the metadata names.
    oauth_issuer: str = ""
    # Audiences accepted besides oauth_resource (aud), and the clients whose tokens may carry
    # no aud at all (client_id; Cognito access tokens).
    oauth_audiences: tuple[str, ...] = ()
    oauth_client_ids: tuple[str, ...] = ()
    # Scopes every request needs (and the metadata's scopes_supported).
    oauth_scopes: tuple[str, ...] = ()
    # The issuer's JWKS; discovered from its metadata when empty.
    oauth_jwks_uri: str = ""
    # Cognito: "access" (its access tokens say token_use: access).
    oauth_token_use: str = ""

    @field_validator(
        "tool_modules",
        "tool_declarations",
        "allowed_hosts",
        "allowed_origins",
        "oauth_audiences",
        "oauth_client_ids",
        "oauth_scopes",
        mode="before",
    )
    @classmethod
    def _split_modules(cls, value: object) -> object:
        if isinstance(value, str):
            return tuple(m.strip() for m in value.split(",") if m.strip())
        return value

    @field_validator("allowed_hosts", "allowed_origins")
    @classmethod
    def _entries_parse(cls, value: tuple[str, ...], info: ValidationInfo) -> tuple[str, ...]:
        # An entry the request parser cannot read would never match: say so at start instead.
        from .protocol.transport_security import valid_host_entry, valid_origin_entry

        valid = valid_host_entry if info.field_name == "allowed_hosts" else valid_origin_entry
        what = "host[:port]" if info.field_name == "allowed_hosts" else "scheme://host[:port]"
        bad = [entry for entry in value if not valid(entry)]
        if bad:
            raise ValueError(f"not a {what} or '*': {', '.join(bad)}")
        return value

    @model_validator(mode="after")
    def _sign_in_is_complete(self) -> Settings:
        if self.auth_mode == "JWT":
            missing = [n.upper() for n in ("oauth_resource", "oauth_issuer") if not getattr(self, n)]
            if missing:
                raise ValueError(f"AUTH_MODE JWT needs {' and '.join(missing)}")
            for name in ("oauth_resource", "oauth_issuer"):
                if not str(getattr(self, name)).startswith(("https://", "http://")):
                    raise ValueError(f"{name.upper()} must be an http(s) URL")
        return self

    def require(self, *names: str) -> Settings:
        """These settings, if the named ones are set (a function that needs them calls this at init)."""
        missing = [name.upper() for name in names if not getattr(self, name)]
        if missing:
            raise ConfigurationError(
                "taskgate is misconfigured: " + "; ".join(f"{name}: Field required" for name in missing)
            )
        return self

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Settings:
        env = os.environ if environ is None else environ
        # An empty variable is "not set": the template passes "" for optional Parameters.
        values = {name: env[name.upper()] for name in cls.model_fields if env.get(name.upper(), "") != ""}
        try:
            return cls.model_validate(values)
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(str(p) for p in e['loc']).upper()}: {e['msg']}" if e["loc"] else e["msg"]
                for e in exc.errors()
            )
            raise ConfigurationError(f"taskgate is misconfigured: {problems}") from None
