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
- with handles turned off and nothing able to hold the call (a 2026 caller behind the
  HTTP API), ``REFUSE``: an error that says how to call the tool as a task.

A tool that hands a job off (``ctx.hand_off``) needs a task whatever it declared: run inline,
its ``hand_off`` raises ``NeedsTask`` and the call is planned again by ``decide_job``, as a
call that lasts as long as its caller waits (the job's length is not known).

Every hidden task is keyed to its call (domain/calls.py): a retry finds the same task.
"""

from __future__ import annotations

import enum
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ...tools.registry import Tool
from .caller import Caller
from .policy import CallPolicy, Front

if TYPE_CHECKING:
    from .runs import ToolRequest


class Plan(enum.StrEnum):
    INLINE = "inline"
    WAIT = "wait"
    STREAM = "stream"
    HOLD = "hold"
    HANDLE = "handle"
    REFUSE = "refuse"


@dataclass(frozen=True)
class Decision:
    plan: Plan
    # How long the tool is expected to run (None: not known) and the caller waits.
    expected: float | None = None
    wait: float = 0.0
    # Whether the call may be handed over to the model when the wait is up.
    handles: bool = False
    # INLINE: how long the run may take before its caller gets an error instead of the cut.
    deadline: float | None = None

    @property
    def hand_over_after_ms(self) -> int | None:
        return math.ceil(self.wait * 1000) if self.handles else None


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
    hold = caller.front.hold_seconds if caller.accepts_sse else 0.0
    if hold > 0:
        held = min(wait, hold) if handles else hold
        if expected is None or expected <= min(wait, hold) or (not handles and expected <= hold):
            return Decision(Plan.HOLD, expected, held, handles)
    else:
        # Behind a front that buffers, the request itself waits on the task's row for as
        # long as its caller and the front allow: a call that ends by then is answered with
        # its result, as if it had run inline.
        budget = caller.budget_seconds
        if expected is None or expected <= budget:
            return Decision(Plan.WAIT, expected, budget, handles)
    if handles:
        return Decision(Plan.HANDLE, expected, wait, handles)
    return Decision(Plan.REFUSE, expected, wait, handles)


def refusal(tool: Tool, decision: Decision, front: Front) -> str:
    """Why a plain call cannot be served here, and what to do instead."""
    where = (
        f"this endpoint cannot hold a call longer than {front.hold_seconds:.0f} s"
        if front.streams
        else f"this endpoint's front buffers responses and cuts them at {front.cut_seconds:.0f} s"
    )
    if tool.task_support == "forbidden":
        return f"Tool {tool.name} waits on a job, which only a task can do, and it cannot run as a task."
    runs = f"runs for about {decision.expected:.0f} s" if decision.expected else "waits on a job"
    return f"Tool {tool.name} {runs} and {where}. {AS_A_TASK}"


# What a caller that cannot wait for a long plain call can do instead.
AS_A_TASK = (
    "Call it as a task: declare the tasks extension io.modelcontextprotocol/tasks in the request's "
    '_meta["io.modelcontextprotocol/clientCapabilities"].extensions (Strands Agents: '
    "MCPClient(..., tasks_config={}); @modelcontextprotocol/ext-tasks; fastmcp-tasks), or use the "
    "deployment's streaming endpoint (template Parameter StreamingApi)."
)
