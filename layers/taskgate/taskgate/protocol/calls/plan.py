"""Plain calls of long tools: what a caller that did not ask for a task gets (``Plan``).

The flow (``flow.py``) asks ``decide`` and is the one place that acts on its answer.

Most hosts call tools plainly. A tool that declares it runs long (``@tool(expected_seconds=)``)
must still not run inside the request, which API Gateway's HTTP API cuts at 30 seconds:

- a quick tool (no declaration, or expected within ``inline_max_seconds``) runs inline, as before;
- a caller whose streams resume (2025-11-25) gets ``STREAM``: the call becomes a hidden task and its own SSE stream
  carries the progress, log lines, questions and result, in resumable pieces that each end
  well inside the front's cut (protocol/v2025/streams.py);
- a caller that did not declare tasks may not be given one, and one whose streams cannot
  resume (2026-07-28) gets ``HOLD`` when the front streams (a REST API with response streaming holds a call
  for up to 15 minutes), the call held and its progress streamed as it happens;
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
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ...tools.registry import Tool
from .caller import Caller
from .policy import CallPolicy, Front

if TYPE_CHECKING:
    from .runs import ToolRequest


class Plan(enum.StrEnum):
    INLINE = "inline"
    STREAM = "stream"
    HOLD = "hold"
    HANDLE = "handle"
    REFUSE = "refuse"


@dataclass(frozen=True)
class Decision:
    plan: Plan
    # How long the tool is expected to run (None: a quick tool) and the caller waits.
    expected: float | None = None
    wait: float = 0.0
    # Whether the call may be handed over to the model when the wait is up.
    handles: bool = False

    @property
    def hand_over_after_ms(self) -> int | None:
        return math.ceil(self.wait * 1000) if self.handles else None


def decide(policy: CallPolicy, request: ToolRequest, caller: Caller) -> Decision:
    """What a plain call of ``request`` by ``caller`` becomes."""
    tool = request.tool
    expected = tool.expected_for(request.args)
    if expected is None or expected <= policy.inline_max_seconds or tool.task_support == "forbidden":
        return Decision(Plan.INLINE, expected)
    return _long(policy, tool, expected, caller.wait_seconds, caller)


def decide_job(policy: CallPolicy, request: ToolRequest, caller: Caller) -> Decision:
    """What a plain call becomes once its tool, run inline, hands a job off (``NeedsTask``).
    How long the job runs is not known: it is planned as a call that lasts as long as its
    caller waits, so it streams or is held for that wait and is then handed over (or, with
    handles off, streams or is held to its end, or is refused)."""
    if request.tool.task_support == "forbidden":
        return Decision(Plan.REFUSE)
    wait = caller.wait_seconds
    decision = _long(policy, request.tool, wait, wait, caller)
    return Decision(decision.plan, None, decision.wait, decision.handles)


def _long(policy: CallPolicy, tool: Tool, expected: float, wait: float, caller: Caller) -> Decision:
    # A tool with an outputSchema cannot answer with a handle: clients check its result
    # against the schema (and refuse one without structuredContent).
    handles = policy.handles and tool.output_schema() is None
    if caller.resumable and caller.accepts_sse:
        if expected <= wait or not handles:
            return Decision(Plan.STREAM, expected, wait, handles)
        return Decision(Plan.HANDLE, expected, wait, handles)
    hold = caller.front.hold_seconds if caller.accepts_sse else 0.0
    if hold > 0 and (expected <= min(wait, hold) or (not handles and expected <= hold)):
        return Decision(Plan.HOLD, expected, min(wait, hold) if handles else hold, handles)
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
    return (
        f"Tool {tool.name} {runs} and {where}. Call it as a task: "
        "declare the tasks extension io.modelcontextprotocol/tasks in the request's "
        '_meta["io.modelcontextprotocol/clientCapabilities"].extensions (Strands Agents: '
        "MCPClient(..., tasks_config={}); @modelcontextprotocol/ext-tasks; fastmcp-tasks), or use the "
        "deployment's streaming endpoint (template Parameter StreamingApi)."
    )
