"""The composition root: everything taskgate serves, built from its arguments.

``Taskgate(settings, ports)`` holds the settings and the outside world (``Ports``: each
adapter as a factory) and builds each service the first time something asks for it
(``@once``), so the API's cold start builds what its first request needs and nothing
else. Production builds one from the environment with the AWS adapters
(``taskgate.wiring.root()``); the unit tier and the bench build one on the in-memory
ports (``taskgate.testing.memory``); the local runtime builds production's over moto.

The imports inside the builders below are the cold start's: the worker's step, the
sweeper, the 2025-11-25 era, the catalogue's methods, sign-in and the request-state
cipher load with the first request (or function) that uses them, never at an API init.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import os
import time
from collections.abc import Callable, Mapping, MutableMapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .clock import now_ms
from .config import ConfigurationError, Settings
from .domain.limits import Limits, WorkTimes
from .domain.ports import BlobStore, Clock, TaskStore, Workflow
from .domain.results import ResultStore
from .domain.service import TaskService
from .lazy import once
from .protocol.calls.policy import CallPolicy
from .protocol.calls.services import AuditHook
from .protocol.calls.slots import InlineSlots
from .protocol.era import Era
from .protocol.server import McpServer
from .protocol.v2026 import Era2026
from .protocol.v2026.listen import Listens
from .protocol.wire.request_state import RequestStates
from .protocol.wire.transport_security import TransportSecurity
from .tools.registry import ToolRegistry, registry

if TYPE_CHECKING:
    from starlette.types import ASGIApp

    from .auth.build import SignInPorts
    from .auth.resource import SignIn
    from .domain.callbacks import CallbackService
    from .domain.calls import PlainCalls
    from .domain.durations import DurationStore, ToolDurations
    from .domain.holds import Holds
    from .domain.sessions import SessionStore
    from .domain.sweeper import Sweeper
    from .domain.wake_ups import EventPublisher, WakeUps
    from .domain.worker import Worker
    from .jobs.vocabulary import Jobs
    from .protocol.calls.flow import ToolCallFlow
    from .protocol.calls.waiting import RowWait
    from .protocol.v2026.held import HeldCalls
    from .protocol.wire.sealing import KeyRing
    from .tools.needs import SecretReader
    from .tools.prompts import PromptRegistry
    from .tools.resources import ResourceRegistry


@dataclass(frozen=True)
class Ports:
    """The outside world, each part a factory called once, by the first use of it."""

    store: Callable[[], TaskStore]
    workflow: Callable[[], Workflow]
    # The 2025-11-25 era's sessions, streams and subscriptions.
    sessions: Callable[[], SessionStore]
    # Where results too large for the row go; None: no bucket (such a result fails its task).
    blobs: Callable[[], BlobStore | None]
    # The secret(s) that seal requestState: every instance of a deployment must share them.
    request_state_keys: Callable[[], Sequence[bytes]]
    # What is learned of each tool's duration (domain/durations.py).
    durations: Callable[[], DurationStore]
    clock: Clock = now_ms
    # What a waiting 2025-11-25 stream sleeps with and measures its budget by.
    sleep: Callable[[float], None] = time.sleep
    monotonic: Callable[[], float] = time.monotonic
    # The services jobs handed off run in (their status, their stop); None: none reachable.
    jobs: Callable[[], Jobs | None] = lambda: None
    # Sign-in's own (taskgate/auth: its items in the table, its keys, the issuer); asked only
    # when AuthMode lets callers in with tokens.
    sign_in: Callable[[], SignInPorts] | None = None
    # What ``taskgate.tools.secret`` reads a tool's secret with (ToolSecretArns); None: none can be read.
    tool_secrets: SecretReader | None = None
    # Where wake-ups go (the stack's event bus, domain/wake_ups.py); None: nowhere to publish.
    events: Callable[[], EventPublisher] | None = None


def apply_tool_environment(pairs: Mapping[str, str], environ: MutableMapping[str, str] | None = None) -> None:
    """ToolEnvironment's pairs in the environment; a variable already set (a developer's shell) wins."""
    env = os.environ if environ is None else environ
    for name, value in pairs.items():
        env.setdefault(name, value)


class Taskgate:
    """The server (``server``, ``app()``), the worker's step (``worker``), the sweeper
    (``sweeper``) and the services under them. ``tools``: a registry to serve instead of
    the modules ``settings.tool_modules`` names."""

    def __init__(self, settings: Settings, ports: Ports, *, tools: ToolRegistry | None = None) -> None:
        self.settings = settings
        self.ports = ports
        self._tools = tools
        self._audit_hooks: list[AuditHook] = []
        if tools is None:
            # Imported by the first look at a tool, but a misspelt TOOL_MODULES fails now
            # (the function's cold start), saying which.
            missing = [m for m in settings.tool_modules if importlib.util.find_spec(m) is None]
            if missing:
                raise ModuleNotFoundError(f"tool modules not found: {', '.join(missing)}")

    # -- what the eras' handlers use (protocol.services.Services) ------------------------

    def on_audit(self, hook: AuditHook) -> None:
        """Tell ``hook`` of every task event a client causes: (event, fields). The API
        function logs and counts them (observability.audit_hook); a test collects them."""
        self._audit_hooks.append(hook)

    def audit(self, event: str, fields: dict[str, Any]) -> None:
        for hook in self._audit_hooks:
            hook(event, fields)

    @property
    def anonymous_owner(self) -> str:
        return self.settings.anonymous_owner

    @once
    def tasks(self) -> TaskService:
        return TaskService(
            self.store,
            self.workflow,
            self.ports.clock,
            self.limits,
            self.results,
            self.jobs,
            job_status_interval_ms=self.times.job_status_interval_ms,
        )

    @once
    def tools(self) -> ToolRegistry:
        # Importing a tool module builds its pydantic models: a tasks/get cold start never does.
        # The toolkit reads a tool's secrets through this root's port, never an adapter of its own.
        from .tools.needs import read_secrets_with

        read_secrets_with(self.ports.tool_secrets)
        if self._tools is not None:
            return self._tools
        # Their environment (ToolEnvironment) is set first, for modules that read it at import.
        apply_tool_environment(self.settings.tool_environment_pairs)
        loaded = registry.load(self.settings.tool_modules)
        if self.settings.tool_declarations:
            from .tools.declared import declare  # tools declared in JSON (no Python)

            declare(loaded, self.settings.tool_declarations)
        return loaded

    @once
    def resources(self) -> ResourceRegistry:
        from .tools.resources import registry as resources

        self.tools  # noqa: B018 - the tool modules register resources too: loaded first
        return resources

    @once
    def prompts(self) -> PromptRegistry:
        from .tools.prompts import registry as prompts

        self.tools  # noqa: B018 - the tool modules register prompts too: loaded first
        return prompts

    @once
    def request_states(self) -> RequestStates:
        from .protocol.wire.request_state import RotatingKeys

        def ring() -> KeyRing:
            # cryptography, and the secret, only for the first plain call that asks.
            from .protocol.wire.sealing import KeyRing

            return KeyRing(self.ports.request_state_keys())

        return RequestStates(
            RotatingKeys(ring, self.ports.clock),
            ttl_ms=self.settings.request_state_ttl_seconds * 1000,
            clock=self.ports.clock,
        )

    @once
    def policy(self) -> CallPolicy:
        # A refusal names the deployment's streaming endpoint only where it has one.
        return dataclasses.replace(
            self.settings.calls.value(), streaming_url=self.settings.sign_in.stream_resource_url
        )

    @once
    def tool_calls(self) -> ToolCallFlow:
        """What a tools/call becomes, for both eras (protocol/calls/flow.py): built by the
        first tools/call, so that no other request's cold start imports it."""
        from .protocol.calls.flow import ToolCallFlow

        return ToolCallFlow(self)

    @once
    def plain_calls(self) -> PlainCalls:
        # Built by the first plain call of a long tool (or a cancel): in the task table.
        from .domain.calls import PlainCalls

        return PlainCalls(self.tasks, self.sessions, self.ports.clock)

    @once
    def durations(self) -> ToolDurations:
        """What is known of each tool's duration: read by the flow, noted by the worker."""
        from .domain.durations import ToolDurations

        return ToolDurations(self.ports.durations(), self.ports.clock, self.ports.monotonic)

    @once
    def holds(self) -> Holds:
        """The places each owner's long-held requests take (domain/holds.py), one count for
        every kind: held calls, requests waiting on a task's row, listen streams."""
        from .domain.holds import Holds

        return Holds(
            self.sessions,
            places=self.policy.max_held_calls_per_owner,
            # As long as the task is kept for its held call: renewed at the same pace.
            lease_ms=self.policy.hang_up_ms,
            clock=self.ports.clock,
            unlimited=frozenset([self.settings.anonymous_owner]),
        )

    @once
    def row_wait(self) -> RowWait:
        """How a request waits on a hidden task's row (protocol/calls/waiting.py)."""
        from .protocol.calls.waiting import RowWait

        return RowWait(
            self.tasks, self.inline, holds=self.holds, sleep=self.ports.sleep, monotonic=self.ports.monotonic
        )

    @once
    def inline(self) -> InlineSlots:
        policy = self.policy
        # With sign-in off every caller is the anonymous owner: no one to share with.
        return InlineSlots(
            policy.max_inline_calls,
            policy.max_inline_calls_per_owner,
            unshared=[self.settings.anonymous_owner],
        )

    # -- the domain --------------------------------------------------------------------

    @once
    def store(self) -> TaskStore:
        return self.ports.store()

    @once
    def workflow(self) -> Workflow:
        return self.ports.workflow()

    @once
    def jobs(self) -> Jobs | None:
        # The adapters hold client factories: nothing here builds a client before a job needs one.
        return self.ports.jobs()

    @once
    def callbacks(self) -> CallbackService:
        from .domain.callbacks import CallbackService  # the callback route's, with its first request

        return CallbackService(self.store, self.workflow, self.ports.clock)

    @once
    def sessions(self) -> SessionStore:
        return self.ports.sessions()

    @once
    def limits(self) -> Limits:
        return self.settings.limits.value()

    @once
    def times(self) -> WorkTimes:
        return self.settings.jobs.value()

    @once
    def results(self) -> ResultStore:
        return ResultStore(
            self.ports.blobs(),
            max_inline_bytes=self.settings.max_inline_result_bytes,
            max_delivered_bytes=self.settings.max_result_response_bytes,
        )

    @once
    def worker(self) -> Worker:
        from .domain.worker import Worker  # the worker function's: the API never imports it

        return Worker(
            self.store,
            self.tools,
            self.ports.clock,
            self.results,
            limits=self.limits,
            max_runtime_ms=self.times.max_runtime_ms,
            yield_margin_ms=self.times.yield_margin_ms,
            callback_base_url=self.settings.sign_in.public_url,
            durations=self.durations,
            monotonic=self.ports.monotonic,
        )

    @once
    def wake_ups(self) -> WakeUps:
        """The events the change stream's consumer (TaskEventsFunction) publishes."""
        from .domain.wake_ups import WakeUps  # the events function's

        if self.ports.events is None:
            raise ConfigurationError("taskgate is misconfigured: TASK_EVENT_BUS: Field required")
        return WakeUps(self.ports.events())

    @once
    def sweeper(self) -> Sweeper:
        from .domain.sweeper import Sweeper  # the sweeper function's

        return Sweeper(
            self.store,
            self.workflow,
            self.ports.clock,
            stale_after_ms=self.times.stale_after_ms,
            max_runtime_ms=self.times.max_runtime_ms,
            jobs=self.jobs,
        )

    # -- the server ----------------------------------------------------------------------

    @once
    def era2026(self) -> Era2026:
        def catalog() -> list[Any]:
            from .protocol.v2026.catalog import catalog_methods  # with its first request

            return catalog_methods(self)

        return Era2026(
            self,
            catalog,
            flow=lambda: self.tool_calls,
            held=lambda: self.held_calls,
            listens=lambda: self.listens,
        )

    @once
    def held_calls(self) -> HeldCalls:
        """Plain calls of long tools held on a streaming front (protocol/v2026/held.py)."""
        from .protocol.v2026.held import HeldCalls

        return HeldCalls(
            self.tasks,
            self.inline,
            holds=self.holds,
            watch_ms=self.policy.hang_up_ms,
            refresh_seconds=self.policy.piece_seconds,
            sleep=self.ports.sleep,
            monotonic=self.ports.monotonic,
            clock=self.ports.clock,
        )

    @once
    def listens(self) -> Listens:
        """subscriptions/listen (protocol/v2026/listen.py), behind the front calls are."""

        def catalog(call: Any, uris: list[str], lists: bool) -> Any:
            # The catalogue's modules (and the tools') with the first listen that asks for resources.
            from .codes import INVALID_PARAMS
            from .protocol.catalog.resources import ResourceMethods
            from .protocol.catalog.watch import ResourceWatch

            methods = ResourceMethods(self, not_found_code=INVALID_PARAMS, hints=True)
            return ResourceWatch(methods, call, uris, lists)

        return Listens(
            self.tasks,
            self.holds,
            self.settings.listen.value(),
            self.policy.front,
            catalog,
            sleep=self.ports.sleep,
            monotonic=self.ports.monotonic,
            audit=self.audit,
        )

    @once
    def era2025(self) -> Era:
        # Built by the first request that speaks it: a 2026-07-28 client never does.
        from .protocol.calls.handle_tools import handed
        from .protocol.v2025 import Era2025
        from .protocol.v2025.streams import ResultStreams

        streams = ResultStreams(
            self.tasks,
            self.sessions,
            results=self.results,
            slots=self.inline,
            budget_seconds=self.settings.stream_max_seconds,
            log_retention_ms=self.settings.stream_log_ttl_ms,
            call_piece_seconds=self.policy.piece_seconds,
            hand_over=lambda record: handed(record, None),
            sleep=self.ports.sleep,
            monotonic=self.ports.monotonic,
            clock=self.ports.clock,
        )
        return Era2025(
            self,
            sessions=self.sessions,
            streams=streams,
            clock=self.ports.clock,
            session_ttl_ms=self.settings.session_ttl_ms,
            flow=lambda: self.tool_calls,
        )

    @once
    def server(self) -> McpServer:
        # The order is the order eras are asked; 2025 serves whatever carries no later mark.
        return McpServer([lambda: self.era2026, lambda: self.era2025], audit=self.audit)

    @once
    def transport_security(self) -> TransportSecurity:
        return TransportSecurity(self.settings.served_hosts, self.settings.allowed_origins)

    @once
    def sign_in(self) -> SignIn | None:
        """AuthMode's callers (taskgate/auth), or None when every caller is anonymous. Only
        the metadata, the routes and the middleware exist at a cold start: joserfc, Authlib and
        the clients they need come with the first request that uses them."""
        if not self.settings.sign_in.auth_mode:
            return None
        from .auth.build import SignInPorts, build_sign_in
        from .auth.signing import ephemeral_source

        def no_store() -> Any:
            raise RuntimeError("sign-in has no store: give Ports.sign_in")

        # Without sign-in ports (IAM alone, or CLIENT: nothing is stored) a key of this process's own.
        ports = self.ports.sign_in() if self.ports.sign_in else SignInPorts(no_store, ephemeral_source())
        return build_sign_in(self.settings.sign_in, ports)

    def app(self, *, inline: bool = False) -> ASGIApp:
        """The Starlette app serving /mcp (``create_app``): ``inline=True`` in Lambda (one
        request at a time, on the event loop's thread); the local server keeps a thread pool."""
        from .http_app import create_app  # Starlette: the API's, never the worker's or the sweeper's

        return create_app(
            lambda: self.server,
            anonymous_owner=self.settings.anonymous_owner,
            max_body_bytes=self.settings.max_body_bytes,
            inline=inline,
            security=self.transport_security,
            sign_in=self.sign_in,
            callbacks=lambda: self.callbacks,
        )
