"""What both eras share: the services they drive, and the plumbing of a tool call.

The prepare round (questions a tool asks before its task exists), argument
checks and inline runs live here once; each era shapes the results its own way.
"""

from __future__ import annotations

import importlib
import threading
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from .. import __version__
from ..clock import now_ms
from ..codes import INTERNAL_ERROR, INVALID_PARAMS
from ..domain.errors import ServerBusy
from ..domain.model import TaskRecord
from ..domain.service import TaskService
from ..tools.context import InputNeeded, ProtocolError, TaskCancelled, ToolContext
from ..tools.peer import Peer
from ..tools.registry import Tool, ToolRegistry
from .era import Call, validation_data
from .errors import RpcError
from .request_state import NOTHING, Carried, RequestStates, ephemeral_keys

if TYPE_CHECKING:
    from ..tools.prompts import PromptRegistry
    from ..tools.resources import ResourceRegistry

SERVER_NAME = "taskgate"

# Told of every task event a client causes: (event, fields). The Lambda handler
# turns these into audit log lines and metrics; tests can collect them.
AuditHook = Callable[[str, dict[str, Any]], None]


def server_info() -> dict[str, str]:
    return {"name": SERVER_NAME, "version": __version__}


class InlineSlots:
    """How many requests may run a tool inside themselves (a plain call) or wait on a
    task (a stream holding on) in this process at once. Each holds a thread of the
    server's pool for as long as the tool runs; past the bound a request is refused
    at once rather than queued, so the rest of the requests (tasks/get, a cancel)
    always find a thread. A Lambda instance serves one request at a time, so only a
    process serving many (the local server) ever reaches it.

    No owner holds more than ``per_owner`` of them, so one caller cannot take them all
    and leave every other caller a 503. Owners in ``unshared`` (the anonymous owner:
    with sign-in off every caller is that one owner, and there is no one to share with)
    may use them all."""

    def __init__(self, size: int, per_owner: int | None = None, *, unshared: Iterable[str] = ()) -> None:
        self.size = size
        self.per_owner = min(per_owner or size, size)
        self._unshared = frozenset(unshared)
        self._lock = threading.Lock()
        self._used = 0
        self._by_owner: dict[str, int] = {}

    @property
    def in_use(self) -> int:
        return self._used

    def take(self, owner: str | None = None) -> str | None:
        """Take a slot for ``owner``: None when taken, else why not (a 503's message)."""
        capped = owner if owner is not None and owner not in self._unshared else None
        with self._lock:
            if self._used >= self.size:
                return f"Server busy: {self.size} tool calls are already running here"
            if capped is not None and self._by_owner.get(capped, 0) >= self.per_owner:
                return f"Server busy: you already have {self.per_owner} tool calls running here"
            self._used += 1
            if capped is not None:
                self._by_owner[capped] = self._by_owner.get(capped, 0) + 1
        return None

    def release(self, owner: str | None = None) -> None:
        with self._lock:
            self._used -= 1
            if owner is not None and owner in self._by_owner:
                left = self._by_owner[owner] - 1
                if left:
                    self._by_owner[owner] = left
                else:
                    del self._by_owner[owner]

    @contextmanager
    def held(self, owner: str | None = None) -> Iterator[bool]:
        """A slot for the duration of the block; False (and no slot) when none is free."""
        acquired = self.take(owner) is None
        try:
            yield acquired
        finally:
            if acquired:
                self.release(owner)


class _CallerLink:
    """A plain call's context control: nothing durable to report to, but the call
    ends when its caller goes away. The tool sees it at its next ``ctx.progress``
    (which raises ``TaskCancelled``) or ``ctx.cancelled()``, and its slot and thread
    are free again when it returns."""

    def __init__(self, gone: Callable[[], bool]) -> None:
        self._gone = gone

    def progress(self, message: str) -> None:
        if self._gone():
            raise TaskCancelled("the caller went away")

    def is_cancelled(self) -> bool:
        return self._gone()

    def checkpoint(self, state: Any) -> None:
        return None


def inline_context(call: Call, **fields: Any) -> ToolContext:
    """The context of a tool run inside this request, for this caller."""
    return ToolContext(control=_CallerLink(call.gone), owner=call.owner, **fields)


@dataclass(frozen=True)
class Services:
    tasks: TaskService
    tools: ToolRegistry
    audit: AuditHook
    anonymous_owner: str
    inline: InlineSlots
    # What the modules in ToolModules registered beside their tools (the registries are
    # imported by the first request that reads one: a cold start serving a task does not).
    resources: ResourceRegistry = field(default_factory=lambda: _Later("resources"))  # type: ignore[assignment]
    prompts: PromptRegistry = field(default_factory=lambda: _Later("prompts"))  # type: ignore[assignment]
    # Seals a plain call's requestState (2026-07-28); the composition root gives it the
    # stack's key, anything else a per-process one.
    request_states: RequestStates = field(
        default_factory=lambda: RequestStates(ephemeral_keys, ttl_ms=600_000, clock=now_ms)
    )


class _Later:
    """``taskgate.tools.<module>.registry``, imported on its first use."""

    def __init__(self, module: str) -> None:
        self._module = module

    def _registry(self) -> Any:
        return importlib.import_module(f"taskgate.tools.{self._module}").registry

    def __getattr__(self, name: str) -> Any:
        return getattr(self._registry(), name)

    def __iter__(self) -> Any:
        return iter(self._registry())

    def __len__(self) -> int:
        return len(self._registry())


def resolve_tool(
    services: Services, name: str, arguments: dict[str, Any] | None
) -> tuple[Tool, dict[str, Any]]:
    """The tool and its checked arguments, or a -32602 that says what is wrong."""
    found = services.tools.get(name)
    if found is None:
        raise RpcError(INVALID_PARAMS, f"Unknown tool: {name}")
    arguments = arguments or {}
    services.tasks.limits.check_arguments(arguments)
    try:
        found.parse(arguments)
    except ValidationError as exc:
        raise RpcError(
            INVALID_PARAMS, f"Invalid arguments for tool {name}", {"errors": validation_data(exc)}
        ) from exc
    return found, arguments


def run_inline(
    found: Tool, arguments: dict[str, Any], ctx: ToolContext, slots: InlineSlots
) -> dict[str, Any]:
    """Run a tool inside this request: a CallToolResult, or the questions it asked
    (``{"resultType": "input_required", "inputRequests": …}``). Refused with
    ServerBusy (503, Retry-After) when ``slots`` are all taken."""
    refused = slots.take(ctx.owner)
    if refused is not None:
        raise ServerBusy(f"{refused}; retry shortly, or call the tool as a task")
    try:
        return found.run(arguments, ctx)
    except InputNeeded as need:
        return {"resultType": "input_required", "inputRequests": need.requests}
    except ProtocolError as exc:
        raise RpcError(exc.code, exc.message, exc.data) from exc
    except TaskCancelled as exc:
        # The caller went away: nobody reads this answer; the slot is what mattered.
        raise RpcError(INTERNAL_ERROR, "The call was abandoned by its caller") from exc
    finally:
        slots.release(ctx.owner)
        ctx.close()


@dataclass(frozen=True)
class Prepared:
    """The prepare round: questions still open, or the answers the task inherits."""

    questions: dict[str, Any] | None
    carried: dict[str, Any]


def run_round(
    services: Services,
    call: Call,
    found: Tool,
    arguments: dict[str, Any],
    answers: dict[str, Any],
    carried: Carried,
    peer: Peer,
) -> dict[str, Any]:
    """One round of a plain call that may ask (2026-07-28 MRTR): the tool runs with the
    answers of every round so far; when it asks again and has something to carry (answers
    already given, a ``ctx.checkpoint`` state), the ``InputRequiredResult`` gets a sealed
    ``requestState`` for the next round to echo."""
    ctx = inline_context(call, answers={**answers, **carried.answers}, state=carried.state, peer=peer)
    result = run_inline(found, arguments, ctx, services.inline)
    if result.get("resultType") == "input_required":
        keep = Carried(ctx.carried(), ctx.state)
        if not keep.empty:
            result["requestState"] = services.request_states.seal(
                keep, owner=call.owner, method=call.method, target=found.name, arguments=arguments
            )
    return result


def open_state(
    services: Services, call: Call, target: str, arguments: dict[str, Any], token: str | None
) -> Carried:
    """What an echoed ``requestState`` carries, or -32602 if it is not one this server
    sealed for this caller and this request, unexpired."""
    if token is None:
        return NOTHING
    return services.request_states.open(
        token, owner=call.owner, method=call.method, target=target, arguments=arguments
    )


def run_prepare(
    found: Tool, arguments: dict[str, Any], answers: dict[str, Any], peer: Peer | None = None
) -> Prepared:
    """Run a tool's ``prepare`` step, which asks before any task exists."""
    if found.prepare is None:
        return Prepared(None, {})
    ctx = ToolContext(answers=answers, peer=peer)
    try:
        found.prepare(found.parse(arguments), ctx)
    except InputNeeded as need:
        return Prepared(need.requests, {})
    except ProtocolError as exc:
        raise RpcError(exc.code, exc.message, exc.data) from exc
    # The task inherits the answers to the questions it was asked, nothing else.
    return Prepared(None, {k: answers[k] for k in ctx.asked if k in answers})


def create_task(
    services: Services,
    call: Call,
    found: Tool,
    arguments: dict[str, Any],
    *,
    ttl_ms: int | None = None,
    answers: dict[str, Any] | None = None,
    progress_token: str | int | None = None,
    client_capabilities: dict[str, Any] | None = None,
) -> TaskRecord:
    record = services.tasks.create(
        owner=call.owner,
        tool=found.name,
        arguments=arguments,
        requested_ttl_ms=ttl_ms,
        input_responses=answers,
        progress_token=progress_token,
        client_capabilities=client_capabilities,
    )
    services.audit("task_created", {"taskId": record.task_id, "owner": call.owner, "tool": found.name})
    return record


def fetched(services: Services, call: Call, record: TaskRecord) -> TaskRecord:
    """A finished task's result, read for the client (and audited as fetched)."""
    services.audit("result_fetched", {"taskId": record.task_id, "owner": call.owner})
    return services.tasks.with_result(record)
