"""What a ``tools/call`` becomes, decided in one place for both eras.

``ToolCallFlow.call`` takes the call as its era read it (``Invocation``) and what its caller
can do (``Caller``, caller.py) and returns one outcome:

- ``Created``: a task the caller drives (it asked for one, or declared tasks);
- ``Answered``: the tool ran inside the request (or a handle tool answered);
- ``Asks``: questions for a caller that answers them in a round of its own call;
- ``Held``: a hidden task whose progress and result stream on a response the front holds;
- ``Streamed``: a hidden task answered on the call's own resumable stream, in pieces;
- ``HandedOver``: a hidden task handed to the model as a task handle;
- ``Refused``: why this caller cannot be served so, for its era to word.

Which plain calls run inline, stream, are held, handed over or refused is ``plan.py``'s
``Plan``; this module is the one place that acts on it. Each era only reads the envelope,
calls the flow, and shapes the outcome into its answer.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field, replace
from typing import Any

from ...codes import INVALID_PARAMS
from ...domain.calls import STATELESS_RETRY_MS, Started, call_digest, call_key, stateless_call_key
from ...domain.model import NewTask, TaskRecord
from ...tools.context import NeedsTask
from ...tools.peer import Peer
from ..wire.errors import RpcError
from ..wire.exchange import Call
from ..wire.headers import check_param_headers
from ..wire.request_state import Carried
from .caller import Caller
from .handle_tools import HandleTools, handed, handles_listed
from .plan import Decision, Plan, decide, decide_job, refusal
from .runs import ToolRequest, inline_context, open_state, resolve_tool, run_inline, run_prepare
from .services import Services


@dataclass(frozen=True)
class TaskAsk:
    """A call that asked to run as a task (2025-11-25 ``params.task``), and what its task
    keeps for it. A caller that declared tasks without asking gets ``TaskAsk()``."""

    ttl_ms: int | None = None
    progress_token: str | int | None = None
    log_level: str | None = None


@dataclass(frozen=True)
class Invocation:
    """One ``tools/call`` as its era read it from the envelope."""

    name: str
    arguments: dict[str, Any] | None = None
    # What the call's request id is unique within, for its hidden task (domain/calls.py):
    # its session ("" without one), or None: nothing, and a stateless call is the same call
    # when its id, tool and arguments are (for STATELESS_RETRY_MS).
    scope: str | None = None
    task: TaskAsk | None = None
    # This round's answers (None: sent, but not an object of answers), and the sealed state
    # the round before handed out.
    answers: dict[str, Any] | None = field(default_factory=dict)
    request_state: str | None = None
    progress_token: str | int | None = None
    # The least severe log line the call's own stream carries (None: none).
    log_level: str | None = None
    # Its era mirrors arguments in headers (SEP-2243 ``Mcp-Param-*``): they must agree.
    param_headers: bool = False


@dataclass(frozen=True)
class Created:
    record: TaskRecord


@dataclass(frozen=True)
class Answered:
    result: dict[str, Any]
    # The tool closed its stream early (SEP-1699): the result is for a resumed stream.
    stream_closed: bool = False


@dataclass(frozen=True)
class Asks:
    requests: dict[str, Any]
    # What the next round echoes (answers given so far, the tool's saved state); None: nothing.
    request_state: str | None = None


@dataclass(frozen=True)
class Held:
    record: TaskRecord
    hand_over_at_ms: int | None
    expected_seconds: float | None


@dataclass(frozen=True)
class Streamed:
    record: TaskRecord
    # A retry of a call whose hidden task had already started.
    again: bool
    hand_over_at_ms: int | None


@dataclass(frozen=True)
class HandedOver:
    record: TaskRecord
    expected_seconds: float | None

    @property
    def result(self) -> dict[str, Any]:
        return handed(self.record, self.expected_seconds)


class Refusal(enum.StrEnum):
    TASK_REQUIRED = "task_required"  # the tool runs only as a task, and none was asked for
    NOT_A_TASK = "not_a_task"  # a task was asked for, and the tool cannot run as one
    NEEDS_INPUT = "needs_input"  # the tool asks, and this caller has nowhere to answer
    CANNOT_WAIT = "cannot_wait"  # nothing can hold the call as long as it runs (Plan.REFUSE)


@dataclass(frozen=True)
class Refused:
    why: Refusal
    tool: str
    # What can be done instead, in words any era can send (its era may word it its own way).
    message: str


Outcome = Created | Answered | Asks | Held | Streamed | HandedOver | Refused


@dataclass(frozen=True)
class _Turn:
    """One call as the flow has read it: the request, the call, its caller, the tool resolved
    with its checked arguments, the answers of every round so far and what the last round
    carried, and the client as the tool sees it."""

    call: Call
    invocation: Invocation
    caller: Caller
    request: ToolRequest
    answers: dict[str, Any]
    carried: Carried
    peer: Peer


class ToolCallFlow:
    def __init__(self, services: Services) -> None:
        self._s = services

    def call(self, call: Call, invocation: Invocation, caller: Caller) -> Outcome:
        if HandleTools.owns(invocation.name) and handles_listed(self._s):
            return Answered(
                HandleTools(self._s.tasks).call(call.owner, invocation.name, invocation.arguments)
            )
        request = resolve_tool(self._s, invocation.name, invocation.arguments)
        tool = request.tool
        if invocation.param_headers:
            check_param_headers(call.headers, tool.input_schema(), request.arguments)
        if invocation.task is not None:
            if tool.task_support == "forbidden":
                return Refused(Refusal.NOT_A_TASK, tool.name, f"Tool {tool.name} cannot be called as a task")
            return self._created(call, request, invocation.task, {}, caller)
        if tool.task_support == "required" and not caller.tasks:
            return Refused(Refusal.TASK_REQUIRED, tool.name, f"Tool {tool.name} runs only as a task")
        turn = self._turn(call, invocation, caller, request)
        if caller.tasks and tool.task_support != "forbidden":
            inherited = self._prepared(turn)
            if isinstance(inherited, Asks):
                return inherited
            return self._created(call, request, TaskAsk(), inherited, caller)
        return self._plain(turn)

    def _turn(self, call: Call, invocation: Invocation, caller: Caller, request: ToolRequest) -> _Turn:
        carried = open_state(self._s, call, request, invocation.request_state)
        if invocation.answers is None:
            raise RpcError(INVALID_PARAMS, "Invalid params: inputResponses must be an object")
        answers = {**invocation.answers, **carried.answers}
        # Within their bound together (what a task inherits is some of them: checked here, once).
        self._s.tasks.limits.check_answers(answers)
        peer = Peer(
            capabilities=caller.capabilities,
            notify=call.emit,
            log_level=invocation.log_level,
            progress_token=invocation.progress_token,
        )
        return _Turn(call, invocation, caller, request, answers, carried, peer)

    def _plain(self, turn: _Turn) -> Outcome:
        """A call that runs plainly: the one place a ``Plan`` is acted on."""
        policy, request, caller = self._s.policy, turn.request, turn.caller
        decision = decide(policy, request, caller)
        if decision.plan is Plan.INLINE:
            try:
                return self._inline(turn)
            except NeedsTask:
                # It handed a job off: only a (hidden) task can wait for one (the tool runs
                # again from the top there, as after a question).
                decision = decide_job(policy, request, caller)
        if decision.plan is Plan.REFUSE:
            return Refused(Refusal.CANNOT_WAIT, request.name, refusal(request.tool, decision, caller.front))
        inherited = self._prepared(turn)
        if isinstance(inherited, Asks):
            return inherited
        return self._hidden(turn, inherited, decision)

    def _inline(self, turn: _Turn) -> Outcome:
        """The tool run inside this request, with the answers of every round so far. A
        question goes back to a caller that answers inline (with a sealed ``requestState``
        when there is something to carry: answers given, a ``ctx.checkpoint`` state), or
        onto the call's own stream as a hidden task (it runs again from the top there)."""
        call, request, caller = turn.call, turn.request, turn.caller
        ctx = inline_context(call, answers=turn.answers, state=turn.carried.state, peer=turn.peer)
        result = run_inline(request, ctx, self._s.inline)
        if result.get("resultType") != "input_required":
            return Answered(result, stream_closed=ctx.stream_closed)
        if caller.answers_inline:
            keep = Carried(ctx.carried(), ctx.state)
            if keep.empty:
                return Asks(result["inputRequests"])
            state = self._s.request_states.seal(
                keep, owner=call.owner, method=call.method, target=request.name, arguments=request.arguments
            )
            return Asks(result["inputRequests"], state)
        if request.tool.task_support == "forbidden" or not (caller.resumable and caller.accepts_sse):
            return Refused(
                Refusal.NEEDS_INPUT, request.name, f"Tool {request.name} needs input; call it as a task"
            )
        return self._hidden(turn, {}, Decision(Plan.STREAM))

    def _prepared(self, turn: _Turn) -> Asks | dict[str, Any]:
        """The tool's ``prepare`` questions for a caller that answers inline, or the answers a
        task inherits. A caller that cannot answer inline has no round before a task exists:
        what ``prepare`` asks, the task asks."""
        if not turn.caller.answers_inline:
            return {}
        prepared = run_prepare(turn.request, turn.answers, turn.peer)
        if prepared.questions is not None:
            return Asks(prepared.questions)
        return prepared.carried

    def _hidden(self, turn: _Turn, inherited: dict[str, Any], decision: Decision) -> Outcome:
        """The plain call as a hidden task the caller never sees as one, started once per call
        (a retry finds it): streamed on the call's own resumable stream, held on a front that
        streams, or handed to the model as a task handle."""
        call, request, plan = turn.call, turn.request, decision.plan
        assert call.request is not None
        if plan is Plan.STREAM:
            # A resumable stream keeps the request id for its replays: checked before the task
            # exists, so a stream that cannot be kept never orphans one.
            self._s.tasks.limits.check_stored_id("The request id", call.request.id)
        new = NewTask(
            owner=call.owner,
            tool=request.name,
            arguments=request.arguments,
            arguments_bytes=request.arguments_bytes,
            input_responses=inherited,
            progress_token=turn.invocation.progress_token,
            client_capabilities=turn.caller.kept_capabilities,
            log_level=turn.invocation.log_level,
            watch_ms=self._s.policy.hang_up_ms if plan in (Plan.STREAM, Plan.HOLD) else None,
        )
        started = self._start_hidden(turn, new)
        record = started.record
        after = decision.hand_over_after_ms
        hand_over_at_ms = record.created_at_ms + after if after is not None else None
        if plan is Plan.HANDLE:
            return HandedOver(record, decision.expected)
        if plan is Plan.HOLD:
            return Held(record, hand_over_at_ms, decision.expected)
        return Streamed(record, started.again, hand_over_at_ms)

    def _start_hidden(self, turn: _Turn, new: NewTask) -> Started:
        call, request = turn.call, turn.request
        assert call.request is not None
        scope = turn.invocation.scope
        if scope is not None:
            key, remember_ms = call_key(call.owner, scope, call.request.id), None
        else:
            key = stateless_call_key(call.owner, call.request.id, request.name, request.arguments)
            remember_ms = STATELESS_RETRY_MS

        def create(task_id: str) -> TaskRecord:
            return self._create(call, replace(new, task_id=task_id))

        digest = call_digest(request.name, request.arguments)
        return self._s.plain_calls.start(call.owner, key, create, digest=digest, remember_ms=remember_ms)

    def _created(
        self, call: Call, request: ToolRequest, ask: TaskAsk, inherited: dict[str, Any], caller: Caller
    ) -> Created:
        """The task the caller asked for (``inherited``: the answers it inherits, checked
        with the request's own, so the service checks neither again)."""
        new = NewTask(
            owner=call.owner,
            tool=request.name,
            arguments=request.arguments,
            arguments_bytes=request.arguments_bytes,
            requested_ttl_ms=ask.ttl_ms,
            input_responses=inherited,
            progress_token=ask.progress_token,
            client_capabilities=caller.kept_capabilities,
            log_level=ask.log_level,
        )
        return Created(self._create(call, new))

    def _create(self, call: Call, new: NewTask) -> TaskRecord:
        record = self._s.tasks.create(new)
        self._s.audit("task_created", {"taskId": record.task_id, "owner": call.owner, "tool": new.tool})
        return record
