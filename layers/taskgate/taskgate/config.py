"""Settings, read once from the environment and validated at start.

The template's Parameters land in these variables. A function whose settings
are missing or malformed fails its cold start with a message naming the
variable, instead of answering "please retry" to every request later. Every
default lives here, once.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from typing import Annotated, Any, Literal
from urllib.parse import urlsplit

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)

from .domain.limits import MAX_PAYLOAD_BODY_BYTES, Limits, WorkTimes
from .protocol.calls.policy import CallPolicy, ListenPolicy
from .tuning import KEYS, STRICTEST_FRONT, TuningError, parse_pairs, with_tuning

# The template's ToolModules default too: the deployer's own package. The conformance
# fixtures (taskgate_conformance) are loaded only where they are asked for: the tests, the
# conformance suite and this repository's local server (Makefile, `make serve`).
DEFAULT_TOOL_MODULES = "taskgate_tools"
# The examples and the fixtures, as this repository's local server and tests serve them. The
# fixtures come first: the conformance suite calls whichever tool is listed first, with no arguments.
EXAMPLE_TOOL_MODULES = "taskgate_conformance,taskgate_tools"

# ToolEnvironment's names: capitals, digits and _; never one the platform or taskgate owns,
# whose value a tool's must not replace.
_TOOL_VARIABLE = re.compile(r"[A-Z][A-Z0-9_]*")
_RESERVED_PREFIXES = ("AWS_", "LAMBDA_", "POWERTOOLS_", "_")


def parse_tool_environment(value: str, reserved: frozenset[str] = frozenset()) -> dict[str, str]:
    """ToolEnvironment's ``NAME=value,NAME2=value2`` as a dict; ValueError naming what is wrong."""
    pairs: dict[str, str] = {}
    for item in filter(None, (part.strip() for part in value.split(","))):
        name, sep, val = item.partition("=")
        name = name.strip()
        if not sep or not _TOOL_VARIABLE.fullmatch(name):
            raise ValueError(f"{item!r} is not NAME=value (NAME in capitals, digits and _)")
        if name.startswith(_RESERVED_PREFIXES) or name in reserved:
            raise ValueError(f"{name} is a name taskgate or Lambda sets; pick another for your tool")
        pairs[name] = val
    return pairs


# Transport security (DNS rebinding): who may be named in Host and Origin. A host without a
# port matches any port; "*" allows anything. Deployed, the API's own domain is allowed too.
LOCAL_HOSTS = ("localhost", "127.0.0.1", "[::1]")
LOCAL_ORIGINS = tuple(f"{scheme}://{host}" for scheme in ("http", "https") for host in LOCAL_HOSTS)

Positive = Annotated[int, Field(gt=0)]
AuthMember = Literal["USER", "CLIENT", "IAM"]
AUTH_MEMBERS: tuple[AuthMember, ...] = ("USER", "CLIENT", "IAM")
NonNegative = Annotated[int, Field(ge=0)]


class ConfigurationError(RuntimeError):
    """The environment does not describe a working deployment."""


def _listed(value: object) -> object:
    """A comma-separated variable as a tuple of its entries."""
    if isinstance(value, str):
        return tuple(m.strip() for m in value.split(",") if m.strip())
    return value


Listed = Annotated[tuple[str, ...], BeforeValidator(_listed)]


class Group(BaseModel):
    """Settings that make one value (``value()``). A field is the environment variable its
    ``validation_alias`` names, or its own name, upper-cased: so a field may carry the name
    its value has (``CallPolicy.wait_seconds``) and the variable keep its own
    (CALL_WAIT_SECONDS). Adding a setting to a group is adding its field here (and to the
    value, where the value uses it): nothing else maps it."""

    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True)

    @classmethod
    def variables(cls) -> dict[str, str]:
        """Each variable (lower-cased) and the field it sets."""
        return {
            field.validation_alias if isinstance(field.validation_alias, str) else name: name
            for name, field in cls.model_fields.items()
        }


class LimitSettings(Group):
    """The bounds the task lifecycle enforces (domain/limits.py ``Limits``)."""

    default_ttl_ms: Positive = 3_600_000
    max_ttl_ms: Positive = 86_400_000
    poll_interval_ms: Positive = 1_000
    max_active_per_owner: NonNegative = Field(default=100, validation_alias="max_active_tasks_per_owner")
    max_argument_bytes: Positive = 262_144
    # Every answer one task holds, all rounds together.
    max_input_response_bytes: Positive = 65_536
    # The state a tool saves with ctx.checkpoint.
    max_checkpoint_bytes: Positive = 65_536

    def value(self) -> Limits:
        return Limits(**self.model_dump())


class CallSettings(Group):
    """What a plain call of a long tool becomes (protocol/calls/policy.py ``CallPolicy``)."""

    # Plain (non-task) calls of long tools (protocol/calls/plan.py). Only a tool known to run
    # no longer than inline_call_max_seconds (its @tool expected_seconds, or learned from its
    # runs: domain/durations.py) runs inside the request; any other runs as a hidden task.
    inline_max_seconds: float = Field(default=10.0, ge=0, le=25, validation_alias="inline_call_max_seconds")
    # How long a 2025-11-25 plain caller (or one whose answer streams) is assumed to wait for
    # its answer (the TypeScript SDK's request timeout is 60 s); past it, the call is answered
    # with a handle the model drives (status, result and cancel tools). A client may say how
    # long it waits (header Taskgate-Wait-Seconds). 0: always a handle.
    wait_seconds: float = Field(default=50.0, ge=0, le=86_400, validation_alias="call_wait_seconds")
    # How long any other plain caller that does not say is assumed to wait for one response
    # (a request waiting on a hidden task's row, taskgate_task_result), from the request's
    # arrival: 2026-07-28 hosts cannot be told apart, and OpenAI Agents gives up at 5 s (a
    # cold start and the network come before the arrival).
    answer_wait_seconds: float = Field(
        default=3.5, ge=0, le=86_400, validation_alias="call_answer_wait_seconds"
    )
    # Whether a long plain call may be answered with such a handle at all ("tasks as tools").
    handles: bool = Field(default=True, validation_alias="call_handles")
    # The longest one response of a plain call's resumable stream (2025-11-25) runs before
    # the client reconnects with Last-Event-ID: well inside the front's cut.
    piece_seconds: float = Field(default=20.0, gt=0, le=840, validation_alias="call_piece_seconds")
    # A plain call's hidden task whose caller has not come back for this long is cancelled.
    hang_up_seconds: Annotated[float, Field(gt=0)] = 90.0
    # The front before this server: whether it passes a response on as it is written
    # (API Gateway's REST API with ResponseTransferMode STREAM, a function URL) or
    # buffers it whole (the HTTP API), and when it cuts a response. The defaults are
    # the default deployment's: buffered, cut at 29 s (local is as strict as deployed).
    front_streaming: bool = False
    front_timeout_seconds: Annotated[float, Field(gt=0, le=900)] = 29.0
    # Plain tool calls (and streams holding on) one process runs at once; past it,
    # 503 + Retry-After. Under the server's 40 worker threads, so other requests always
    # find one. A Lambda instance serves one request at a time: only the local server
    # (or one process serving many) ever reaches it.
    max_inline_calls: Annotated[int, Field(gt=0, le=32)] = 16
    # How many of them one owner may hold (the anonymous owner, with sign-in off, may hold
    # them all): one caller cannot leave every other one a 503.
    max_inline_calls_per_owner: Annotated[int, Field(gt=0, le=32)] = 4
    # Requests one owner may hold open at once for their whole length (held calls and
    # subscriptions/listen streams on a front that streams: each a Lambda execution of up to
    # 15 minutes), one count for both, kept in the table across instances (domain/holds.py).
    # Past it, a held call is handed over at once as a task handle and a listen is refused
    # before its stream opens. The anonymous owner (sign-in off) is not capped.
    max_held_calls_per_owner: Annotated[int, Field(gt=0, le=100)] = 4

    def value(self) -> CallPolicy:
        return CallPolicy(**self.model_dump())


class ListenSettings(Group):
    """subscriptions/listen streams on a front that streams (protocol/calls/policy.py
    ``ListenPolicy``; protocol/v2026/listen.py)."""

    # How long one stream lasts before it ends with its result and the client re-listens;
    # within the front's hold, so well before API Gateway's 15-minute cut.
    seconds: float = Field(default=840.0, gt=0, le=870, validation_alias="listen_seconds")
    # How often a stream reads the tasks it watches (all in one batch) and looks at the
    # resources: what a poll at this interval would read, at polling's price.
    interval_ms: int = Field(default=1_000, ge=100, le=60_000, validation_alias="listen_interval_ms")

    def value(self) -> ListenPolicy:
        return ListenPolicy(seconds=self.seconds, interval_seconds=self.interval_ms / 1000)


class JobSettings(Group):
    """How long a task's work may run, and how the work it waits on is watched
    (domain/limits.py ``WorkTimes``)."""

    max_task_runtime_seconds: NonNegative = 86_400
    stale_after_seconds: Positive = 300
    # A checkpoint with less time than this left in the invocation ends the step.
    step_yield_margin_ms: NonNegative = 60_000
    # How often reads of a task that waits on a job may ask the job's service for its
    # status (per task, however many clients poll).
    job_status_interval_ms: Positive = 10_000

    def value(self) -> WorkTimes:
        return WorkTimes(
            max_runtime_ms=self.max_task_runtime_seconds * 1000,
            stale_after_ms=self.stale_after_seconds * 1000,
            yield_margin_ms=self.step_yield_margin_ms,
            job_status_interval_ms=self.job_status_interval_ms,
        )


class SignInSettings(Group):
    """Who may call, and where they reach this deployment: what ``auth/build.py`` builds
    sign-in from (its value is this group itself)."""

    # Where clients reach this deployment (template Parameter PublicUrl: a custom domain; else
    # the API's own URL), without a trailing slash. The protected resource is <public_url>/mcp;
    # with AuthMode USER it is also this stack's OAuth issuer, whose endpoints and callback are
    # <public_url>/oauth/…: never built from a request's Host header.
    public_url: str = ""
    # StreamingApi: where the stack's second, streaming endpoint is (the REST API's stage URL,
    # e.g. https://<id>.execute-api.<region>.amazonaws.com/stream), without a trailing slash.
    # Its /mcp is a second resource the stack's authorization server issues tokens for
    # (sign_in_resources); the function serving it names that /mcp as its OAUTH_RESOURCE.
    stream_public_url: str = ""

    # Sign-in (template Parameter AuthMode, taskgate/auth): the set of callers /mcp accepts.
    # USER: people, signed in through this stack's own authorization server, which delegates
    # the sign-in to the issuer below; CLIENT: access tokens the issuer itself minted for this
    # endpoint (machine callers with client credentials; "JWT" is its former name); IAM:
    # SigV4-signed requests on /iam/mcp, checked by API Gateway. Empty (NONE): every caller is
    # anonymous_owner.
    auth_mode: frozenset[AuthMember] = frozenset()
    # The canonical URL of /mcp (the tokens' audience, the metadata's resource); public_url +
    # "/mcp" when empty.
    oauth_resource: str = ""
    # The upstream issuer (iss): the stack's user pool or any OpenID Connect provider. USER
    # signs people in there; CLIENT accepts its access tokens.
    oauth_issuer: str = ""
    # CLIENT: audiences accepted besides oauth_resource (aud), and, kept apart from them, the
    # clients whose tokens may carry no aud at all (client_id; Cognito access tokens). A client
    # id is never an audience: an OpenID Connect ID token's aud is its client's id.
    oauth_audiences: Listed = ()
    oauth_client_ids: Listed = ()
    # Scopes every request needs (and the metadata's scopes_supported).
    oauth_scopes: Listed = ("taskgate/tasks",)
    # The issuer's JWKS; discovered from its metadata when empty.
    oauth_jwks_uri: str = ""
    # Cognito: "access" (its access tokens say token_use: access).
    oauth_token_use: str = ""
    # USER: the one static client this stack signs people in with at the issuer (its
    # callback is public_url + /oauth/callback), its secret if it has one (a Secrets Manager
    # secret), the scopes asked for, and the issuer's endpoints (discovered when empty).
    oauth_upstream_client_id: str = ""
    oauth_upstream_client_secret_arn: str = ""
    oauth_upstream_scopes: Listed = ("openid", "email")
    oauth_authorization_endpoint: str = ""
    oauth_token_endpoint: str = ""
    # USER: the Secrets Manager secret whose versions (AWSCURRENT, AWSPREVIOUS) sign this
    # stack's access tokens; unset: a key made by this process (one local server only).
    oauth_signing_secret_arn: str = ""
    oauth_access_token_ttl_seconds: Annotated[int, Field(ge=60, le=86_400)] = 3600
    oauth_refresh_token_ttl_days: Annotated[int, Field(ge=1, le=365)] = 30
    # Dynamic client registration is open to anyone: at most this many a rolling hour, from
    # everyone and from one address; a client never used expires after a day.
    oauth_registrations_per_hour: Positive = 200
    oauth_registrations_per_address_per_hour: Positive = 20
    # USER and CLIENT: machine clients that authenticate with private_key_jwt (auth/machines.py),
    # each with where its public keys are: client_id=<https JWKS URL or a JWKS file>, comma-separated.
    oauth_client_keys: str = ""

    @field_validator("oauth_client_keys")
    @classmethod
    def _client_keys_parse(cls, value: str) -> str:
        parse_client_keys(value)  # a ValueError names the entry
        return value

    @field_validator("auth_mode", mode="before")
    @classmethod
    def _auth_set(cls, value: object) -> object:
        if not isinstance(value, str):
            return value
        names = {n.strip().upper() for n in value.split(",") if n.strip()}
        if names in (set(), {"NONE"}):
            return frozenset()
        names = {"CLIENT" if n == "JWT" else n for n in names}  # the former name: the issuer's tokens
        if not names <= set(AUTH_MEMBERS):
            raise ValueError("must be NONE or a comma-separated set of USER, CLIENT and IAM")
        return frozenset(names)

    @field_validator("public_url", "stream_public_url")
    @classmethod
    def _public_url_is_an_origin(cls, value: str) -> str:
        # As issue 20 defines it (template Parameter PublicUrl): an origin, or an origin and
        # the base path of a custom domain's API mapping; no trailing slash.
        if value and (not value.startswith(("https://", "http://")) or value.endswith("/")):
            raise ValueError("must be an http(s) URL without a trailing slash")
        parts = urlsplit(value)
        if value and (not parts.netloc or parts.query or parts.fragment):
            raise ValueError("must be an http(s) URL without a query or fragment")
        return value

    @model_validator(mode="after")
    def _sign_in_is_complete(self) -> SignInSettings:
        tokens = self.auth_mode & {"USER", "CLIENT"}
        if not tokens:
            return self
        missing = [] if self.oauth_issuer else ["OAUTH_ISSUER"]
        if not self.resource_url:
            missing.append("PUBLIC_URL (or OAUTH_RESOURCE)")
        if "USER" in tokens and not self.oauth_upstream_client_id:
            missing.append("OAUTH_UPSTREAM_CLIENT_ID")
        if "USER" in tokens and self.is_streaming_endpoint and not self.public_url:
            # Its people's tokens come from the stack's issuer, which is the public URL's.
            missing.append("PUBLIC_URL (the stack's issuer)")
        if missing:
            raise ValueError(f"AUTH_MODE {','.join(sorted(tokens))} needs {' and '.join(missing)}")
        for name in ("oauth_resource", "oauth_issuer"):
            value = str(getattr(self, name))
            if value and not value.startswith(("https://", "http://")):
                raise ValueError(f"{name.upper()} must be an http(s) URL")
        if set(self.oauth_audiences) & set(self.oauth_client_ids):
            raise ValueError(
                "OAUTH_AUDIENCES must not name a client id (OAUTH_CLIENT_IDS): an ID token's aud is its"
                " client's id, and would pass as an access token"
            )
        if not self.oauth_scopes:
            raise ValueError("OAUTH_SCOPES must name at least one scope every request needs")
        return self

    @property
    def resource_url(self) -> str:
        """The canonical URL of /mcp: the tokens' audience and the metadata's resource."""
        if self.oauth_resource:
            return self.oauth_resource
        return f"{self.public_url}/mcp" if self.public_url else ""

    @property
    def stream_resource_url(self) -> str:
        """The streaming endpoint's /mcp (StreamingApi), or empty."""
        return f"{self.stream_public_url}/mcp" if self.stream_public_url else ""

    @property
    def is_streaming_endpoint(self) -> bool:
        """Whether this server is the streaming endpoint (StreamFunction: OAUTH_RESOURCE is its
        /mcp): it checks tokens for that resource and leaves the authorization server to the
        stack's issuer, the HTTP API's origin."""
        return bool(self.stream_resource_url) and self.resource_url == self.stream_resource_url

    @property
    def sign_in_resources(self) -> tuple[str, ...]:
        """The resources the stack's authorization server (USER) issues tokens for, the default
        first: this endpoint's /mcp and, with StreamingApi, the streaming endpoint's. A token
        names the one its client asked for (RFC 8707) and is good there only."""
        return tuple(dict.fromkeys(url for url in (self.resource_url, self.stream_resource_url) if url))

    @property
    def issuer_url(self) -> str:
        """This stack's own authorization server (USER): its public URL, or the origin of an
        explicitly configured resource URL."""
        if self.public_url:
            return self.public_url
        parts = urlsplit(self.resource_url)
        return f"{parts.scheme}://{parts.netloc}" if parts.netloc else ""

    def value(self) -> SignInSettings:
        return self


class Settings(BaseModel):
    """Every setting, read once from the environment: the fields below, and five groups that
    each make the value their part of taskgate runs with (``limits``, ``calls``, ``listen``,
    ``jobs``, ``sign_in``). A variable is named by its field (or its ``validation_alias``), upper-cased,
    whichever group holds it; ``Settings(poll_interval_ms=500)`` sets a grouped field too."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    task_table: str = Field(min_length=1)
    # The API and the sweeper start, resume and stop executions; the worker, which the
    # state machine invokes (a reference back would be circular), is given none.
    state_machine_arn: str = ""
    # Machines earlier releases of the stack ran (a replaced one is retained, and its
    # executions finish there): rows written before execution ARNs were stored may name one.
    previous_state_machine_arns: Listed = ()
    result_bucket: str = ""
    anonymous_owner: str = Field(default="anonymous", min_length=1)
    tool_modules: Listed = tuple(DEFAULT_TOOL_MODULES.split(","))
    # JSON files declaring tools that each start one job (tools/declared.py), as
    # package:file.json in a tools package, after ToolModules' tools.
    tool_declarations: Listed = ()
    # Both within one Lambda payload however they are escaped (domain/limits.py).
    max_body_bytes: Annotated[int, Field(gt=0, le=MAX_PAYLOAD_BODY_BYTES)] = 1_048_576
    # How long a waiting 2025 tasks/result stream may hold its API Lambda (reading
    # the task at its pollInterval) before the client reconnects. 0: read once and
    # end with retry = pollInterval, which costs what polling tasks/get does.
    # At most 28: under API Gateway's 29 s, with room for the Lambda's own overhead.
    stream_max_seconds: Annotated[float, Field(ge=0, le=28)] = 0.0
    # How long a stream's event log outlives its last event, for clients resuming it.
    stream_log_ttl_ms: Positive = 3_600_000
    # How long a 2025-11-25 session (Mcp-Session-Id) stays valid.
    session_ttl_ms: Positive = 24 * 3_600_000
    max_inline_result_bytes: Positive = 262_144
    # A task result larger than this is delivered as resource_links to its parts (a Lambda
    # response is at most 6 MB); each part is read with resources/read.
    max_result_response_bytes: Annotated[int, Field(ge=2048, le=MAX_PAYLOAD_BODY_BYTES)] = 2_097_152
    allowed_hosts: Listed = LOCAL_HOSTS
    allowed_origins: Listed = LOCAL_ORIGINS
    # The Secrets Manager secret whose value seals a plain call's requestState (every
    # instance must share it); unset: a key made by this process (one local server).
    request_state_secret_arn: str = ""
    # How long a person may take to answer a question asked in a round of a plain call (its
    # hidden task waiting on the answer is not a hang-up until then).
    request_state_ttl_seconds: Positive = 1800
    # Your tools' NAME=value pairs (ToolEnvironment), set before the tool modules are imported,
    # and the secrets they may read with taskgate.tools.secret (ToolSecretArns).
    tool_environment: str = ""
    tool_secret_arns: Listed = ()
    # The stack's event bus (TaskEventBus): where the consumer of the table's change stream
    # puts a wake-up when a task ends or starts waiting for an answer (domain/wake_ups.py).
    task_event_bus: str = ""

    limits: LimitSettings = Field(default_factory=LimitSettings)
    calls: CallSettings = Field(default_factory=CallSettings)
    listen: ListenSettings = Field(default_factory=ListenSettings)
    jobs: JobSettings = Field(default_factory=JobSettings)
    sign_in: SignInSettings = Field(default_factory=SignInSettings)

    @classmethod
    def groups(cls) -> dict[str, type[Group]]:
        """The groups, by the field that holds each."""
        return {
            name: field.annotation
            for name, field in cls.model_fields.items()
            if isinstance(field.annotation, type) and issubclass(field.annotation, Group)
        }

    @classmethod
    def variables(cls) -> dict[str, str | None]:
        """Every environment variable (lower-cased) and the group that holds it (None: a field
        of Settings itself)."""
        found: dict[str, str | None] = {name: None for name in cls.model_fields if name not in cls.groups()}
        for group, model in cls.groups().items():
            found.update(dict.fromkeys(model.variables(), group))
        return found

    @model_validator(mode="before")
    @classmethod
    def _into_groups(cls, data: object) -> object:
        # Flat names (the environment's, a test's Settings(poll_interval_ms=500)) go to their group.
        if not isinstance(data, Mapping):
            return data
        values = dict(data)
        for name, group in cls.variables().items():
            if group is not None and name in values:
                inner = values.get(group)
                grouped = dict(inner) if isinstance(inner, Mapping) else {}
                grouped[name] = values.pop(name)
                values[group] = grouped
        return values

    @field_validator("tool_environment")
    @classmethod
    def _tool_environment_is_pairs(cls, value: str) -> str:
        if not value:
            return value
        parse_tool_environment(value, frozenset(name.upper() for name in cls.variables()))
        return value

    @property
    def tool_environment_pairs(self) -> dict[str, str]:
        return parse_tool_environment(self.tool_environment)

    @property
    def served_hosts(self) -> tuple[str, ...]:
        """The Host names served: ALLOWED_HOSTS, the public URL's and this server's own
        resource's (the streaming endpoint's host, on the function that serves it)."""
        urls = (self.sign_in.public_url, self.sign_in.resource_url)
        own = (urlsplit(url).netloc for url in urls if url)
        return tuple(dict.fromkeys((*self.allowed_hosts, *own)))

    @field_validator("allowed_hosts", "allowed_origins")
    @classmethod
    def _entries_parse(cls, value: tuple[str, ...], info: ValidationInfo) -> tuple[str, ...]:
        # An entry the request parser cannot read would never match: say so at start instead.
        from .protocol.wire.transport_security import valid_host_entry, valid_origin_entry

        valid = valid_host_entry if info.field_name == "allowed_hosts" else valid_origin_entry
        what = "host[:port]" if info.field_name == "allowed_hosts" else "scheme://host[:port]"
        bad = [entry for entry in value if not valid(entry)]
        if bad:
            raise ValueError(f"not a {what} or '*': {', '.join(bad)}")
        return value

    @model_validator(mode="after")
    def _plain_calls_fit_their_front(self) -> Settings:
        # Each piece of a plain call's stream must end before the front cuts it, and a
        # caller counts as gone only after missing three reconnects: a slow one (a cold
        # start) must never cancel its work.
        calls = self.calls
        room = calls.front_timeout_seconds - 4
        if calls.piece_seconds > room:
            raise ValueError(
                f"CALL_PIECE_SECONDS ({calls.piece_seconds:g}) must end before the front cuts a "
                f"response: at most FRONT_TIMEOUT_SECONDS - 4 ({room:g})"
            )
        reconnect = calls.piece_seconds + self.limits.poll_interval_ms / 1000
        if calls.hang_up_seconds < 3 * reconnect:
            raise ValueError(
                f"HANG_UP_SECONDS ({calls.hang_up_seconds:g}) must cover three reconnects: at least "
                f"3 x (CALL_PIECE_SECONDS + POLL_INTERVAL_MS) = {3 * reconnect:g}"
            )
        return self

    def variable(self, name: str) -> object:
        """The value of the variable ``name`` (lower-cased), whichever group holds it."""
        group = self.variables()[name]
        if group is None:
            return getattr(self, name)
        holder: Group = getattr(self, group)
        return getattr(holder, holder.variables()[name])

    def require(self, *names: str) -> Settings:
        """These settings, if the named ones are set (a function that needs them calls this at init)."""
        missing = [name.upper() for name in names if not self.variable(name)]
        if missing:
            raise ConfigurationError(
                "taskgate is misconfigured: " + "; ".join(f"{name}: Field required" for name in missing)
            )
        return self

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Settings:
        # The template's Tuning string (TUNING) sets the values only the functions read.
        env = with_tuning(os.environ if environ is None else environ)
        # An empty variable is "not set": the template passes "" for optional Parameters.
        values = {name: env[name.upper()] for name in cls.variables() if env.get(name.upper(), "") != ""}
        try:
            return cls.model_validate(values)
        except ValidationError as exc:
            problems = "; ".join(_problem(error) for error in exc.errors())
            raise ConfigurationError(f"taskgate is misconfigured: {problems}") from None


def _problem(error: Any) -> str:
    """One validation error, named by its variable (a group's name is no variable)."""
    groups = Settings.groups()
    where = [str(part) for part in error["loc"] if part not in groups]
    if not where:
        return str(error["msg"])
    holder = next((groups[str(part)] for part in error["loc"] if part in groups), None)
    names = {field: variable for variable, field in holder.variables().items()} if holder else {}
    return f"{'.'.join(names.get(part, part) for part in where).upper()}: {error['msg']}"


def parse_tuning(text: str) -> dict[str, str]:
    """A deployment's Tuning, key -> value, each checked as ``Settings`` will check it at a cold
    start (the deploy checks refuse what the functions could not start with); a
    ``TuningError`` names the key, never its variable."""
    values = parse_pairs(text)
    env = {
        "TASK_TABLE": "tuning-check",
        **STRICTEST_FRONT,
        **{KEYS[k]: v for k, v in values.items() if k in KEYS},
    }
    try:
        Settings.from_env(env)
    except ConfigurationError as error:
        message = str(error).removeprefix("taskgate is misconfigured: ")
        for key, variable in sorted(KEYS.items(), key=lambda kv: -len(kv[1])):
            message = re.sub(rf"\b{variable}\b", key, message)
        raise TuningError(message) from None
    return values


def parse_client_keys(value: str) -> dict[str, str]:
    """``id=location,…`` (OAUTH_CLIENT_KEYS): each key client and where its JWKS is."""
    found: dict[str, str] = {}
    for entry in (e.strip() for e in value.split(",") if e.strip()):
        client_id, sep, location = entry.partition("=")
        client_id, location = client_id.strip(), location.strip()
        if not sep or not client_id or not location:
            raise ValueError(f"OAUTH_CLIENT_KEYS: {entry!r} is not client_id=<JWKS URL or file>")
        if location.startswith(("https://", "http://")):
            parts = urlsplit(location)
            local = parts.hostname in ("127.0.0.1", "localhost", "::1")
            if parts.scheme != "https" and not (parts.scheme == "http" and local):
                raise ValueError(f"OAUTH_CLIENT_KEYS: {client_id}'s JWKS must be https")
        found[client_id] = location
    return found
