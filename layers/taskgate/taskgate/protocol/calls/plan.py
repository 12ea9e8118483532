"""Plain calls of long tools: what a caller that did not ask for a task gets (``Plan``).

The flow (``flow.py``) asks ``decide`` and is the one place that acts on its answer.

Most hosts call tools plainly. A tool that may run long must not run inside the request,
which API Gateway's HTTP API cuts at 30 seconds, and its author need not say which it is:

- a tool known to be quick runs inline: its author said so (``@tool(expected_seconds=)``
  within ``inline_max_seconds``), or, when the author said nothing, its runs did (the
  longest step it has run, learned per code version: domain/durations.py). The run answers
  before the front's cut whatever happens (``deadline``): a run that overran gets an error
  that says so, and the tool is possibly long from then on. A tool that can never be a task
  (``task_support="forbidden"``) always runs inline;
- any other tool is possibly long (never run by this code version, known to have run long,
  or declared long), and runs as a hidden task started before the caller is answered:
- a caller whose streams resume (2025-11-25) gets ``STREAM``: the call becomes a hidden task and its own SSE stream
  carries the progress, log lines, questions and result, in resumable pieces that each end
  well inside the front's cut (protocol/v2025/streams.py);
- a caller that did not declare tasks may not be given one, and one whose streams cannot
  resume (2026-07-28) gets ``HOLD`` when the front streams (a REST API with response streaming holds a call
  for up to 15 minutes), the call held and its progress streamed as it happens;
- behind a front that buffers, such a caller gets ``WAIT``: the request waits on the task's
  row for as long as its caller and the front allow (``Caller.budget_seconds``) and answers
  with the result, as an inline run would have, when the task ends in time (waiting.py);
- beyond what the caller waits for (``wait_seconds``, or its ``Taskgate-Wait-Seconds``
  header), or where nothing can hold the call, ``HANDLE``: an ordinary result that hands
  the model a task handle (handle_tools.py). A call still running when the caller's
  wait is up is handed over the same way, never left to time out;
- a caller that answers in rounds of its own call (2026-07-28) and comes back for a round
  that asks nothing (``Caller.takes_rounds``) is carried on in rounds (rounds.py): a held or
  waited-on call whose task asks ends with its questions in a round, and one no handle can
  answer (a result with an outputSchema, or handles off) goes on round by round, each round
  as long as the front allows (``Front.round_seconds``), for up to ``CLIENT_MAX_ROUNDS``
  rounds after the first (``longest_in_rounds``);
- with handles turned off and nothing able to hold the call (a 2026 caller behind the
  HTTP API that takes no rounds, or a tool longer than its rounds can carry), ``REFUSE``: an
  error that says what can work for that tool and that caller.

A tool that hands a job off (``ctx.hand_off``) needs a task whatever it declared: run inline,
its ``hand_off`` raises ``NeedsTask`` and the call is planned again by ``decide_job``, as a
call that lasts as long as its caller waits (the job's length is not known).

Every hidden task is keyed to its call (domain/calls.py): a retry finds the same task.
"""

from __future__ import annotations

import enum
import math
from collections.abc import Callable
from typing import TYPE_CHECKING, NamedTuple

from ...tools.registry import Tool
from .caller import Caller
from .policy import CLIENT_MAX_ROUNDS, CallPolicy, Front

if TYPE_CHECKING:
    from .runs import ToolRequest


class Plan(enum.StrEnum):
    INLINE = "inline"
    WAIT = "wait"
    STREAM = "stream"
    HOLD = "hold"
    HANDLE = "handle"
    REFUSE = "refuse"


# A named tuple: made by a first tools/call's cold start, where a dataclass costs more (outcomes.py).
class Decision(NamedTuple):
    """What a plain call becomes, and the figures it was decided on."""

    plan: Plan
    # How long the tool is expected to run (None: not known) and the caller waits.
    expected: float | None = None
    wait: float = 0.0
    # Whether the call may be handed over to the model when the wait is up.
    handles: bool = False
    # INLINE: how long the run may take before its caller gets an error instead of the cut.
    deadline: float | None = None
    # Whether the call is carried on in rounds (rounds.py): its questions end a round, and
    # (no handle) so does the wait, with a round that asks nothing.
    rounds: bool = False

    @property
    def hand_over_after_ms(self) -> int | None:
        return math.ceil(self.wait * 1000) if self.handles else None

    @property
    def round_after_ms(self) -> int | None:
        return math.ceil(self.wait * 1000) if self.rounds and not self.handles else None


def decide(
    policy: CallPolicy, request: ToolRequest, caller: Caller, learned: Callable[[], float | None]
) -> Decision:
    """What a plain call of ``request`` by ``caller`` becomes. ``learned()``: the longest step
    the tool is known to have run (domain/durations.py), asked only when the author did not
    say (``expected_seconds`` wins) and the tool can run as a task at all."""
    tool = request.tool
    deadline = caller.front.answer_seconds
    if tool.task_support == "forbidden":
        return Decision(Plan.INLINE, deadline=deadline)
    said = tool.expected_for(request.args)
    if said is not None:
        if said <= policy.inline_max_seconds:
            return Decision(Plan.INLINE, said, deadline=deadline)
        return _long(policy, tool, said, caller)
    known = learned()
    # Quick: within the inline limit, and within what a request may run (a run stopped at the
    # deadline is known to take at least that long).
    if known is not None and known < min(policy.inline_max_seconds, deadline) + 1e-9:
        return Decision(Plan.INLINE, known, deadline=deadline)
    # Never run, or known to have run long: possibly long, so never inside the request.
    return _long(policy, tool, None, caller)


def decide_job(policy: CallPolicy, request: ToolRequest, caller: Caller) -> Decision:
    """What a plain call becomes once its tool, run inline, hands a job off (``NeedsTask``).
    How long the job runs is not known: it is planned as a call that lasts as long as its
    caller waits, so it streams, is held or waited on for that wait and is then handed
    over (or, with handles off, streams or is held to its end, or is refused)."""
    if request.tool.task_support == "forbidden":
        return Decision(Plan.REFUSE)
    decision = _long(policy, request.tool, None, caller)
    if decision.plan is Plan.WAIT and not decision.handles:
        # A job seldom ends in the seconds a request can wait, and one started only to be
        # stopped costs more than saying now how to call the tool.
        return Decision(Plan.REFUSE, None, decision.wait, False)
    return decision


def _long(policy: CallPolicy, tool: Tool, expected: float | None, caller: Caller) -> Decision:
    """A call that may run long: ``expected`` seconds as its author said, or None (not known)."""
    # A tool with an outputSchema cannot answer with a handle: clients check its result
    # against the schema (and refuse one without structuredContent).
    handles = policy.handles and tool.output_schema() is None
    wait = caller.wait_seconds
    if caller.resumable and caller.accepts_sse:
        if expected is None or expected <= wait or not handles:
            return Decision(Plan.STREAM, expected, wait, handles)
        return Decision(Plan.HANDLE, expected, wait, handles)
    # A caller that said it waits for nothing (Taskgate-Wait-Seconds: 0) is never held a round.
    rounds = caller.takes_rounds and wait > 0
    hold = caller.front.hold_seconds if caller.accepts_sse else 0.0
    kept = (
        _held(expected, wait, hold, handles, rounds)
        if hold > 0
        else _waited(expected, caller, handles, rounds)
    )
    if kept is not None:
        return kept
    if handles:
        return Decision(Plan.HANDLE, expected, wait, handles)
    return Decision(Plan.REFUSE, expected, wait, handles)


def _fits(expected: float | None, seconds: float) -> bool:
    return expected is None or expected <= seconds


def _held(expected: float | None, wait: float, hold: float, handles: bool, rounds: bool) -> Decision | None:
    """A call behind a front that streams, held while it fits (None: it does not)."""
    if _fits(expected, min(wait, hold)) or (not handles and _fits(expected, hold)):
        return Decision(Plan.HOLD, expected, min(wait, hold) if handles else hold, handles, rounds=rounds)
    if rounds and not handles and _fits(expected, hold * (CLIENT_MAX_ROUNDS + 1)):
        # No handle can answer it, and its caller comes back for rounds: held round by round.
        return Decision(Plan.HOLD, expected, hold, handles, rounds=rounds)
    return None


def _waited(expected: float | None, caller: Caller, handles: bool, rounds: bool) -> Decision | None:
    """A call behind a front that buffers: the request itself waits on the task's row, and
    answers with the result, as if it had run inline, when the task ends in time (None: it
    would not)."""
    if rounds and not handles:
        # No handle can answer it, and its caller comes back for rounds: it waits as long as
        # the front allows, round after round.
        if _fits(expected, longest_in_rounds(caller.front)):
            return Decision(Plan.WAIT, expected, caller.front.round_seconds, handles, rounds=rounds)
        return None
    budget = caller.budget_seconds
    if _fits(expected, budget):
        return Decision(Plan.WAIT, expected, budget, handles, rounds=rounds)
    return None


def longest_in_rounds(front: Front) -> float:
    """The longest a plain call carried on in rounds can last behind ``front``: its first
    request and ``CLIENT_MAX_ROUNDS`` rounds after it, each ``round_seconds`` long (plus the
    clients' own 50-250 ms between rounds, and any time a person takes to answer)."""
    return front.round_seconds * (CLIENT_MAX_ROUNDS + 1)


# How each era's client asks for a task (2026-07-28: the extension, on every request).
TASK_HINT_2025 = (
    "Call it as a task: send params.task on tools/call (mcp 1.x: session.experimental.call_tool_as_task)."
)
TASK_HINT_2026 = (
    "Call it as a task: declare the tasks extension io.modelcontextprotocol/tasks in the request's "
    '_meta["io.modelcontextprotocol/clientCapabilities"].extensions (Strands Agents: '
    "MCPClient(..., tasks_config={}); @modelcontextprotocol/ext-tasks; fastmcp-tasks)."
)
# What a client shows it drives rounds with (Caller.takes_rounds).
_ROUND_CAPABILITIES = "elicitation, sampling or roots"


def _seconds(value: float) -> str:
    return f"{value:.0f} s" if value < 600 else f"{value / 60:.0f} minutes"


def refusal(tool: Tool, decision: Decision, caller: Caller, policy: CallPolicy) -> str:
    """Why a plain call cannot be served here, and only what can work instead for this tool
    and this caller: a task (when the tool can run as one), the deployment's streaming
    endpoint (when it has one, this is not it, and it could carry the call)."""
    if tool.task_support == "forbidden":
        return f"Tool {tool.name} waits on a job, which only a task can do, and it cannot run as a task."
    front = caller.front
    runs = f"runs for about {_seconds(decision.expected)}" if decision.expected else "waits on a job"
    why = [
        f"Tool {tool.name} {runs}",
        f"this endpoint cannot hold a call longer than {_seconds(front.hold_seconds)}"
        if front.streams
        else f"this endpoint's front buffers responses and cuts them at {_seconds(front.cut_seconds)}",
    ]
    if tool.output_schema() is not None:
        why.append("its result has an outputSchema, which a task handle cannot stand in for")
    elif not policy.handles:
        why.append("task handles are turned off here (CallHandles)")
    longest = longest_in_rounds(front)
    if caller.takes_rounds:
        why.append(
            f"a call carried on in rounds lasts at most {_seconds(longest)} here "
            f"({CLIENT_MAX_ROUNDS} rounds after the first, {_seconds(front.round_seconds)} each, "
            "the most clients take)"
        )
    elif caller.answers_inline:
        why.append(
            "this client cannot be carried on in rounds: it declared none of "
            f"{_ROUND_CAPABILITIES}, which clients that drive multi-round calls declare"
        )
    return f"{'; '.join(why)}. {instead(caller, policy, decision.expected)}"


def instead(caller: Caller, policy: CallPolicy, expected: float | None) -> str:
    """What can work instead of a plain call here, for this caller: a task, in its era's way;
    and the deployment's streaming endpoint, where it has one, this is not it, and it could
    carry a call that long."""
    said = [TASK_HINT_2025 if caller.resumable else TASK_HINT_2026]
    streaming = Front(True, 900.0)  # what a REST API with response streaming holds
    reachable = streaming.hold_seconds * ((CLIENT_MAX_ROUNDS + 1) if caller.takes_rounds else 1)
    if policy.streaming_url and not caller.front.streams and (expected or 0) <= reachable:
        said.append(f"Or call it plainly on this deployment's streaming endpoint, {policy.streaming_url}.")
    return " ".join(said)


def needs_input(tool: Tool, caller: Caller) -> str:
    """Why a tool that asked while running inside the request cannot be asked on this call:
    only a hidden task on the call's own resumable event stream can carry the question to a
    caller that does not answer in rounds (2025-11-25)."""
    if tool.task_support == "forbidden":
        return (
            f"Tool {tool.name} asks its user a question while it runs, which a 2025-11-25 plain call carries "
            "only as a task on its own event stream, and this tool cannot run as a task. A 2026-07-28 client "
            "that declares elicitation can answer it."
        )
    return (
        f"Tool {tool.name} asks its user a question while it runs, and this call takes no event stream to be "
        f"asked on (send Accept: application/json, text/event-stream). {TASK_HINT_2025}"
    )


def cannot_ask(tool: Tool, caller: Caller) -> str:
    """Why a 2026-07-28 plain caller is not asked its task's question: it did not declare
    what the question needs, or it does not come back for rounds."""
    what = (
        "it did not declare what the question needs"
        if caller.takes_rounds
        else f"it declared none of {_ROUND_CAPABILITIES}, so it cannot be asked in a round of its call"
    )
    return f"Tool {tool.name} asks its user a question while it runs, and this client cannot be asked it: {what}; its work was stopped. A client that declares elicitation can call it."


def rounds_exhausted(tool: str, front: Front, *, asking: bool, resumable: bool = False) -> str:
    """Why a call carried on in rounds ends: its client takes no more of them."""
    task = TASK_HINT_2025 if resumable else TASK_HINT_2026
    if asking:
        return (
            f"Tool {tool} asked another question after this call had its {CLIENT_MAX_ROUNDS} rounds, the "
            f"most clients take in one call; its work was stopped. {task}"
        )
    return (
        f"Tool {tool} ran longer than a plain call can last here, about {_seconds(longest_in_rounds(front))} "
        f"({CLIENT_MAX_ROUNDS} rounds after the first, {_seconds(front.round_seconds)} each, the most clients "
        f"take in one call); its work was stopped. {task}"
    )
