"""The steps a tool call is made of (the flow, ``flow.py``, puts them in order): resolving
the tool and checking its arguments once, running it inside the request (ended when its
caller hangs up), and the prepare round (questions a tool asks before its task exists).
"""

from __future__ import annotations

import contextvars
import threading
import time
from collections.abc import Callable
from typing import Any, NamedTuple

from pydantic import BaseModel, ValidationError

from ...codes import INTERNAL_ERROR, INVALID_PARAMS
from ...domain.errors import ServerBusy
from ...tools.awaiting import finish
from ...tools.context import InputNeeded, NeedsTask, NoTaskControl, TaskCancelled, ToolContext
from ...tools.peer import Peer
from ...tools.registry import Tool
from ..wire.errors import RpcError
from ..wire.exchange import Call, validation_data
from ..wire.request_state import NOTHING, Carried
from .services import Services
from .slots import InlineSlots


# A named tuple: made by a first tools/call's cold start, where a dataclass costs more (outcomes.py).
class ToolRequest(NamedTuple):
    """A tool call, checked once when it was resolved: the tool, its arguments as sent and
    as its model parsed them, and their size (checked against MAX_ARGUMENT_BYTES). Nothing
    after this checks them again."""

    tool: Tool
    arguments: dict[str, Any]
    args: BaseModel
    arguments_bytes: int

    @property
    def name(self) -> str:
        return self.tool.name


def resolve_tool(services: Services, name: str, arguments: dict[str, Any] | None) -> ToolRequest:
    """The tool and its checked arguments, or a -32602 that says what is wrong."""
    found = services.tools.get(name)
    if found is None:
        raise RpcError(INVALID_PARAMS, f"Unknown tool: {name}")
    arguments = arguments or {}
    size = services.tasks.limits.check_arguments(arguments)
    try:
        args = found.parse(arguments)
    except ValidationError as exc:
        raise RpcError(
            INVALID_PARAMS, f"Invalid arguments for tool {name}", {"errors": validation_data(exc)}
        ) from exc
    return ToolRequest(found, arguments, args, size)


class _CallerLink(NoTaskControl):
    """A plain call's context control: nothing durable to report to, but the call
    ends when its caller goes away, or when it ran past its deadline (``stop``). The tool
    sees it at its next ``ctx.progress`` (which raises ``TaskCancelled``) or
    ``ctx.cancelled()``, and its slot and thread are free again when it returns."""

    def __init__(self, gone: Callable[[], bool]) -> None:
        self._gone = gone
        self.stopped = False

    def stop(self) -> None:
        self.stopped = True

    def progress(self, status: str, value: float, total: float | None, message: str | None) -> None:
        if self.is_cancelled():
            raise TaskCancelled("the call ended")

    def log(self, level: str, data: Any) -> None:
        return None  # a plain call's lines go to its stream as notifications (the peer)

    def is_cancelled(self) -> bool:
        return self.stopped or self._gone()


def inline_context(call: Call, **fields: Any) -> tuple[ToolContext, Callable[[], None]]:
    """The context of a tool run inside this request, for this caller, and what tells the
    run to stop (at its next check)."""
    link = _CallerLink(call.gone)
    return ToolContext(control=link, owner=call.owner, **fields), link.stop


class Overran(Exception):
    """A run inside the request went past its deadline: it was told to stop, and its caller
    gets an error before the front's cut instead of the cut (flow.py words it)."""

    def __init__(self, seconds: float) -> None:
        super().__init__(f"ran past its deadline after {seconds:.1f} s")
        self.seconds = seconds


class _Stopped(TaskCancelled):
    """Raised inside a tool still running past its deadline and past the grace to notice."""


# After its deadline a run has this long to notice it was told to stop (its next progress
# report or cancelled() check), then as long again once it is interrupted.
STOP_GRACE_SECONDS = 0.5


def run_inline(
    request: ToolRequest,
    ctx: ToolContext,
    slots: InlineSlots,
    *,
    deadline: float | None = None,
    stop: Callable[[], None] = lambda: None,
) -> dict[str, Any]:
    """Run a tool inside this request: a CallToolResult, or the questions it asked
    (``{"resultType": "input_required", "inputRequests": …}``). Refused with
    ServerBusy (503, Retry-After) when ``slots`` are all taken, or the caller's share
    of them is. With a ``deadline`` (seconds), a run still going then is stopped (``stop``,
    then interrupted) and raises ``Overran``: its caller is answered before the front cuts
    the request."""
    refused = slots.take(ctx.owner)
    if refused is not None:
        raise ServerBusy(f"{refused}; retry shortly, or call the tool as a task")
    if deadline is None:
        try:
            return _call(request, ctx)
        finally:
            slots.release(ctx.owner)
            ctx.close()
    return _guarded(request, ctx, slots, deadline, stop)


def _call(request: ToolRequest, ctx: ToolContext) -> dict[str, Any]:
    try:
        return request.tool.call(request.args, ctx)
    except InputNeeded as need:
        return {"resultType": "input_required", "inputRequests": need.requests}
    except TaskCancelled as exc:
        # The caller went away: nobody reads this answer; the slot is what mattered.
        raise RpcError(INTERNAL_ERROR, "The call was abandoned by its caller") from exc


def _guarded(
    request: ToolRequest, ctx: ToolContext, slots: InlineSlots, deadline: float, stop: Callable[[], None]
) -> dict[str, Any]:
    """The run on a thread of its own, so the request can answer at the deadline whatever
    the tool does. The slot and the context are given back when the tool's thread ends,
    which is at once for a tool that checks (``ctx.progress``, ``ctx.cancelled()``) or runs
    Python code: a tool blocked in one long call (``time.sleep(60)``) ends when that call
    returns, and the request has answered by then."""
    outcome: dict[str, Any] = {}
    started = time.monotonic()

    def body() -> None:
        try:
            try:
                outcome["result"] = _call(request, ctx)
            except BaseException as exc:  # handed to the request's thread, which raises it
                outcome.setdefault("error", exc)
        except _Stopped:
            pass  # the interruption arrived as the run was ending: nothing left to stop

    def give_back() -> None:
        slots.release(ctx.owner)
        ctx.close()

    # contextvars (the logger's request keys) go with the run to its thread.
    runner = threading.Thread(
        target=contextvars.copy_context().run, args=(body,), name=f"tool {request.name}", daemon=True
    )
    runner.start()
    runner.join(deadline)
    overran = runner.is_alive()
    if overran:
        stop()
        runner.join(STOP_GRACE_SECONDS)
        if runner.is_alive() and runner.ident is not None:
            # It did not look: interrupt it where it is (between two Python instructions).
            # ctypes only here, on an overrun: every cold start would pay for it otherwise.
            import ctypes

            ctypes.pythonapi.PyThreadState_SetAsyncExc(
                ctypes.c_ulong(runner.ident), ctypes.py_object(_Stopped)
            )
            runner.join(STOP_GRACE_SECONDS)
    if runner.is_alive():
        # Blocked in one call: its slot is taken until that call returns.
        def reap() -> None:
            runner.join()
            give_back()

        threading.Thread(target=reap, daemon=True).start()
    else:
        give_back()
    if overran:
        # Whatever it answers once told to stop is a stopped run's answer, not the tool's.
        raise Overran(time.monotonic() - started)
    if "error" in outcome:
        raise outcome["error"]
    return outcome["result"]  # type: ignore[no-any-return]


class Prepared(NamedTuple):
    """The prepare round: questions still open, or the answers the task inherits."""

    questions: dict[str, Any] | None
    carried: dict[str, Any]


def open_state(services: Services, call: Call, request: ToolRequest, token: str | None) -> Carried:
    """What an echoed ``requestState`` carries, or -32602 if it is not one this server
    sealed for this caller and this request, unexpired."""
    if token is None:
        return NOTHING
    return services.request_states.open(
        token, owner=call.owner, method=call.method, target=request.name, arguments=request.arguments
    )


def run_prepare(request: ToolRequest, answers: dict[str, Any], peer: Peer | None = None) -> Prepared:
    """Run a tool's ``prepare`` step, which asks before any task exists."""
    prepare = request.tool.prepare
    if prepare is None:
        return Prepared(None, {})
    ctx = ToolContext(answers=answers, peer=peer)
    try:
        finish(prepare(request.args, ctx))
    except InputNeeded as need:
        return Prepared(need.requests, {})
    except NeedsTask as exc:
        # No task exists yet to wait on a job: the tool itself hands it off, after prepare.
        raise RpcError(INTERNAL_ERROR, f"Tool {request.name} hands a job off in its prepare step") from exc
    # The task inherits the answers to the questions it was asked, nothing else.
    return Prepared(None, {k: answers[k] for k in ctx.asked if k in answers})
