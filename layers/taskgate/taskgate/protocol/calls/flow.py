"""What a ``tools/call`` becomes, decided in one place for both eras.

``ToolCallFlow.call`` takes the call as its era read it (``Invocation``) and what its caller
can do (``Caller``, caller.py) and returns one outcome:

- ``Created``: a task the caller drives (it asked for one, or declared tasks);
- ``Answered``: the tool ran inside the request, or its hidden task ended while the request
  waited on it (or a handle tool answered);
- ``Asks``: questions for a caller that answers them in a round of its own call;
- ``Held``: a hidden task whose progress and result stream on a response the front holds
  (for a caller that answers in rounds, its questions end the response in a round, and a
  call no handle can answer goes on round by round: rounds.py);
- ``Streamed``: a hidden task answered on the call's own resumable stream, in pieces;
- ``HandedOver``: a hidden task handed to the model as a task handle;
- ``Refused``: why this caller cannot be served so, for its era to word.

Which plain calls run inline, are waited on, stream, are held, handed over or refused is
``plan.py``'s ``Plan``; this module is the one place that acts on it. A round of a call
carried on in rounds (its ``requestState`` names its hidden task) picks the task up where
it is, and a handle's ``taskgate_task_result`` asks the task's questions the same way. Each
era only reads the envelope, calls the flow, and shapes the outcome into its answer.
"""

from __future__ import annotations

import enum
import math
import time
from collections.abc import Callable
from dataclasses import replace
from typing import Any, NamedTuple

from ...codes import INTERNAL_ERROR, INVALID_PARAMS, REQUEST_TIMED_OUT
from ...domain.calls import STATELESS_RETRY_MS, Started, call_digest, call_key, stateless_call_key
from ...domain.errors import TaskNotFound
from ...domain.model import NewTask, TaskRecord, TaskStatus
from ...tools.context import NeedsTask, ToolContext
from ...tools.peer import Peer
from ..wire.errors import RpcError
from ..wire.exchange import Call
from ..wire.headers import check_param_headers
from ..wire.request_state import Carried, TaskRound, refused
from .caller import Caller
from .handle_tools import RESULT, HandleTools, handles_listed
from .outcomes import (
    Answered,
    Asks,
    Created,
    HandedOver,
    Held,
    Invocation,
    Outcome,
    Refusal,
    Refused,
    Streamed,
    TaskAsk,
)
from .plan import Decision, Plan, cannot_ask, decide, decide_job, instead, needs_input, refusal
from .rounds import Rounds, can_answer, rounds_of
from .runs import Overran, ToolRequest, inline_context, open_state, resolve_tool, run_inline, run_prepare
from .services import Services, fetched


# A named tuple: made by a first tools/call's cold start, where a dataclass costs more (outcomes.py).
class _Turn(NamedTuple):
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
            return self._handle_tool(call, invocation, caller)
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
        if turn.carried.round is not None:
            return self._next_round(turn, turn.carried.round)
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
        decision = decide(policy, request, caller, lambda: self._s.durations.known_seconds(request.tool))
        if decision.plan is Plan.INLINE:
            try:
                return self._inline(turn, decision)
            except NeedsTask:
                # It handed a job off: only a (hidden) task can wait for one (the tool runs
                # again from the top there, as after a question).
                decision = decide_job(policy, request, caller)
        if decision.plan is Plan.REFUSE:
            return Refused(Refusal.CANNOT_WAIT, request.name, refusal(request.tool, decision, caller, policy))
        inherited = self._prepared(turn)
        if isinstance(inherited, Asks):
            return inherited
        return self._hidden(turn, inherited, decision)

    def _inline(self, turn: _Turn, decision: Decision) -> Outcome:
        """The tool run inside this request, with the answers of every round so far. A
        question goes back to a caller that answers inline (with a sealed ``requestState``
        when there is something to carry: answers given, a ``ctx.checkpoint`` state), or
        onto the call's own stream as a hidden task (it runs again from the top there)."""
        call, request, caller = turn.call, turn.request, turn.caller
        ctx, stop = inline_context(call, answers=turn.answers, state=turn.carried.state, peer=turn.peer)
        result = self._run_inline(turn, ctx, stop, decision)
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
            return Refused(Refusal.NEEDS_INPUT, request.name, needs_input(request.tool, caller))
        return self._hidden(turn, {}, Decision(Plan.STREAM))

    def _run_inline(
        self, turn: _Turn, ctx: ToolContext, stop: Callable[[], None], decision: Decision
    ) -> dict[str, Any]:
        """Run the tool here, answering before the front's cut: a run that overran is
        stopped and its caller told so (never run again as a task: that would run it
        twice); the tool is possibly long from then on, as is one that ran long but finished."""
        request, policy = turn.request, self._s.policy
        learns = request.tool.task_support != "forbidden"
        started = time.monotonic()
        try:
            result = run_inline(request, ctx, self._s.inline, deadline=decision.deadline, stop=stop)
        except Overran as overran:
            if learns:
                self._s.durations.note(request.tool, overran.seconds)
            why = _Why.LEARNED if learns else _Why.INLINE_ONLY
            if learns and request.tool.expected_for(request.args) is not None:
                why = _Why.DECLARED  # what its author said wins over what was learned
            raise RpcError(REQUEST_TIMED_OUT, *_overran(request.name, overran.seconds, why)) from overran
        ran = time.monotonic() - started
        if learns and ran > policy.inline_max_seconds:
            self._s.durations.note(request.tool, ran)
        return result

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
        # Streams and held calls tell the task its caller is still there. A request that waits
        # on the row is its caller's only sign of life too: behind a front that buffers nobody
        # tells the function that the caller gave up, so the task is watched the same way, and
        # its handle must then be asked after within as long (handle_tools.py).
        new = NewTask(
            owner=call.owner,
            tool=request.name,
            arguments=request.arguments,
            arguments_bytes=request.arguments_bytes,
            input_responses=inherited,
            progress_token=turn.invocation.progress_token,
            client_capabilities=turn.caller.kept_capabilities,
            log_level=turn.invocation.log_level,
            watch_ms=self._s.policy.hang_up_ms if plan in (Plan.STREAM, Plan.HOLD, Plan.WAIT) else None,
        )
        started = self._start_hidden(turn, new)
        record = started.record
        after = decision.hand_over_after_ms
        hand_over_at_ms = record.created_at_ms + after if after is not None else None
        if plan is Plan.HANDLE:
            return HandedOver(record, decision.expected)
        rounds = None
        if decision.rounds:
            rounds = rounds_of(self._s, call, request.name, request.arguments, turn.caller)
            rounds = rounds._replace(watch_ms=self._round_watch_ms(turn.caller))
        if plan is Plan.WAIT:
            waited = self._s.row_wait.wait(
                call.owner,
                record,
                _left(call, decision.wait),
                news_to=call.emit,
                log_level=turn.invocation.log_level,
            )
            return self._after_wait(turn, waited, decision, rounds)
        if plan is Plan.HOLD:
            return Held(record, hand_over_at_ms, decision.expected, rounds, decision.round_after_ms)
        return Streamed(record, started.again, hand_over_at_ms)

    def _next_round(self, turn: _Turn, round_: TaskRound) -> Outcome:
        """A round of a call carried on in rounds: its hidden task, its round taken once and
        its question answered, then held or waited on again for another round."""
        call, request, caller = turn.call, turn.request, turn.caller
        if not caller.answers_inline:
            raise refused()  # only a caller that answers in rounds was ever given such a state
        rounds = rounds_of(self._s, call, request.name, request.arguments, caller)
        rounds = rounds.after(round_)._replace(watch_ms=self._round_watch_ms(caller))
        record = rounds.resume(round_, turn.invocation.answers or {})
        decision = decide(
            self._s.policy, request, caller, lambda: self._s.durations.known_seconds(request.tool)
        )
        if caller.front.streams and caller.accepts_sse:
            wait = decision.wait if decision.plan is Plan.HOLD else caller.front.round_seconds
            rounds = rounds._replace(hands_over=decision.plan is Plan.HOLD and decision.handles)
            return Held(record, None, decision.expected, rounds, math.ceil(wait * 1000))
        if decision.plan is not Plan.WAIT:
            decision = Decision(Plan.WAIT, decision.expected, caller.front.round_seconds, rounds=True)
        waited = self._s.row_wait.wait(
            call.owner,
            record,
            _left(call, decision.wait),
            news_to=call.emit,
            log_level=turn.invocation.log_level,
        )
        return self._after_wait(turn, waited, decision, rounds)

    def _round_watch_ms(self, caller: Caller) -> int:
        """How long a caller in rounds may be away, counted from a round's start: the round
        itself (the request waits on the row that long), then the hang-up window."""
        return self._s.policy.hang_up_ms + math.ceil(caller.front.round_seconds * 1000)

    def _handle_tool(self, call: Call, invocation: Invocation, caller: Caller) -> Outcome:
        """A handle tool. A task that waits on its user's answer is asked, through
        ``taskgate_task_result``, of a caller that answers in rounds and declared what the
        questions need: its host's elicitation handler asks the person, never the model."""
        tools = HandleTools(self._s.tasks, self._s.row_wait)
        name, arguments = invocation.name, invocation.arguments or {}
        if name != RESULT or not caller.answers_inline:
            wait = _left(call, caller.budget_seconds)
            return Answered(tools.call(call.owner, name, arguments, wait_seconds=wait))
        handle = tools.handle(name, arguments)
        rounds = rounds_of(self._s, call, name, arguments, caller)
        try:
            if invocation.request_state is None:
                record = self._s.tasks.get(call.owner, handle)
            else:
                carried = self._s.request_states.open(
                    invocation.request_state,
                    owner=call.owner,
                    method=call.method,
                    target=name,
                    arguments=arguments,
                )
                if carried.round is None or carried.round.task_id != handle:
                    raise refused()
                rounds = rounds.after(carried.round)
                record = rounds.resume(carried.round, invocation.answers or {})
        except TaskNotFound:
            return Answered(tools.missing(handle))
        record, waited = tools.wait(call.owner, tools.claimed(record), _left(call, caller.budget_seconds))
        if can_answer(caller, record):
            asked = rounds.asking(record)
            if asked is not None:
                return Asks(asked["inputRequests"], asked["requestState"])
        return Answered(tools.result(call.owner, record, waited, caller=caller))

    def _after_wait(
        self, turn: _Turn, record: TaskRecord, decision: Decision, rounds: Rounds | None = None
    ) -> Outcome:
        """The call's answer from its hidden task's row as the wait left it: the result of a
        task that ended; the questions of one that asks, in a round (rounds.py); for one still
        working when the wait was up, a round that asks nothing (a caller that takes rounds,
        and no handle), a handle, or (handles off) a refusal."""
        call, request, caller = turn.call, turn.request, turn.caller
        if record.status.terminal:
            return Answered(_as_answer(fetched(self._s, call, record)))
        if record.status is TaskStatus.INPUT_REQUIRED:
            if rounds is not None and can_answer(caller, record):
                asked = rounds.asking(record)
                if asked is not None:
                    return Asks(asked["inputRequests"], asked["requestState"])
                return Refused(Refusal.CANNOT_WAIT, request.name, rounds.stop(record))
            if decision.handles:
                return self._handed_over(record, decision)  # its status says what it asks
            self._s.tasks.cancel(call.owner, record.task_id)
            return Refused(Refusal.NEEDS_INPUT, request.name, cannot_ask(request.tool, caller))
        if rounds is not None and not decision.handles:
            carried = rounds.carrying_on(record)
            if carried is not None:
                return Asks({}, carried["requestState"])
            return Refused(Refusal.CANNOT_WAIT, request.name, rounds.stop(record))
        if decision.handles:
            return self._handed_over(record, decision)
        self._s.tasks.cancel(call.owner, record.task_id)
        front = caller.front
        return Refused(
            Refusal.CANNOT_WAIT,
            request.name,
            f"Tool {request.name} did not finish within {decision.wait:.0f} s, as long as this call can be "
            f"waited on here (the front cuts at {front.cut_seconds:.0f} s), and was stopped. "
            f"{instead(caller, self._s.policy, decision.expected)}",
        )

    def _handed_over(self, record: TaskRecord, decision: Decision) -> HandedOver:
        # The caller may have given up while the request waited (nothing says so behind a
        # front that buffers): one that has not asks after the handle within HANG_UP_SECONDS.
        policy = self._s.policy
        self._s.tasks.watch(record.task_id, policy.hang_up_ms)
        return HandedOver(record, decision.expected, policy.hang_up_seconds)

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


def _left(call: Call, seconds: float) -> float:
    """What is left of the ``seconds`` a request may wait, counted from its arrival: its caller's
    clock started before ours, and what came before the wait (the task's creation) is spent."""
    return max(0.0, seconds - (time.monotonic() - call.received))


def _as_answer(record: TaskRecord) -> dict[str, Any]:
    """A finished hidden task's result, as the plain call would have answered had the tool
    run inline: its CallToolResult, or the error it failed with."""
    if record.status is TaskStatus.COMPLETED and record.result is not None:
        return record.result
    if record.status is TaskStatus.CANCELLED:
        raise RpcError(INTERNAL_ERROR, "The call was cancelled")
    error = record.error or {}
    raise RpcError(
        int(error.get("code", INTERNAL_ERROR)),
        str(error.get("message", "The call failed")),
        error.get("data"),
    )


class _Why(enum.Enum):
    """Why a tool that overran had run inside the request, which says what happens next."""

    LEARNED = "its runs showed it quick"
    DECLARED = "its author declared it quick"
    INLINE_ONLY = "it can never run as a task"


_NEXT = {
    _Why.LEARNED: (
        "From its next call on it runs in the background, where it can take as long as it needs: "
        "call it again.",
        "its next call runs as a background task",
    ),
    _Why.DECLARED: (
        "Its author declared it quick (expected_seconds), so it runs inside the request again: call "
        "it with arguments that take less time, or as a task.",
        "it runs inside the request again: its expected_seconds says it is quick",
    ),
    _Why.INLINE_ONLY: (
        "It cannot run in the background (task_support is forbidden): call it with arguments that "
        "take less time.",
        "nothing: the tool runs only inside a request",
    ),
}


def _overran(tool: str, seconds: float, why: _Why) -> tuple[str, dict[str, Any]]:
    """What a caller whose inline run overran is told: what happened and what happens next."""
    then, after = _NEXT[why]
    text = (
        f"Tool {tool} ran for {seconds:.0f} s, longer than a call may run inside this request before "
        f"the endpoint's front cuts it, and was stopped; nothing of this call runs on. {then}"
    )
    return text, {"tool": tool, "ranSeconds": round(seconds, 1), "next": after}
