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
- a caller that answers in rounds of its own call (2026-07-28) and comes back for a round
  that asks nothing (``Caller.takes_rounds``) is held round by round when no handle can be
  given (a result with an outputSchema, or handles off): ``HOLD`` with ``rounds``, each
  round as long as the front holds a response (``Front.round_seconds``: a piece behind one
  that buffers), for up to ``CLIENT_MAX_ROUNDS`` rounds after the first (rounds.py). A held
  call whose tool asks ends with its questions in such a round, whatever it can be given;
- with handles turned off and nothing able to hold the call (a 2026 caller behind the
  HTTP API that does not take rounds, or a tool longer than its rounds can carry),
  ``REFUSE``: an error that says what can work for that tool and that caller.

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
from .policy import CLIENT_MAX_ROUNDS, CallPolicy, Front

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
    # Whether the held call is carried on in rounds (rounds.py): its questions end a round,
    # and (no handle) so does the wait, with a round that asks nothing.
    rounds: bool = False

    @property
    def hand_over_after_ms(self) -> int | None:
        return math.ceil(self.wait * 1000) if self.handles else None

    @property
    def round_after_ms(self) -> int | None:
        return math.ceil(self.wait * 1000) if self.rounds and not self.handles else None


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
    rounds = caller.takes_rounds and caller.accepts_sse
    hold = caller.front.hold_seconds if caller.accepts_sse else 0.0
    if hold > 0 and (expected <= min(wait, hold) or (not handles and expected <= hold)):
        return Decision(Plan.HOLD, expected, min(wait, hold) if handles else hold, handles, rounds)
    if handles:
        return Decision(Plan.HANDLE, expected, wait, handles)
    if rounds and expected <= longest_in_rounds(caller.front):
        return Decision(Plan.HOLD, expected, caller.front.round_seconds, handles, rounds)
    return Decision(Plan.REFUSE, expected, wait, handles)


def longest_in_rounds(front: Front) -> float:
    """The longest a plain call carried on in rounds can last behind ``front``: its first
    request and ``CLIENT_MAX_ROUNDS`` rounds after it, each held ``round_seconds`` (plus the
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
    if caller.takes_rounds and caller.accepts_sse:
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
    instead = [TASK_HINT_2025 if caller.resumable else TASK_HINT_2026]
    streaming = Front(True, 900.0)  # what a REST API with response streaming holds
    reachable = streaming.hold_seconds * ((CLIENT_MAX_ROUNDS + 1) if caller.takes_rounds else 1)
    if policy.streaming_url and not front.streams and (decision.expected or 0) <= reachable:
        instead.append(f"Or call it plainly on this deployment's streaming endpoint, {policy.streaming_url}.")
    return f"{'; '.join(why)}. {' '.join(instead)}"


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
