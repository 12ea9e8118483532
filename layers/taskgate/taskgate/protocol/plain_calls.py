"""Plain calls of long tools: what a caller that did not ask for a task gets.

Most hosts call tools plainly. A tool that declares it runs long (``@tool(expected_seconds=)``)
must still not run inside the request, which API Gateway's HTTP API cuts at 30 seconds:

- a quick tool (no declaration, or expected within ``inline_max_seconds``) runs inline, as before;
- a 2025-11-25 caller gets ``STREAM``: the call becomes a hidden task and its own SSE stream
  carries the progress, log lines, questions and result, in resumable pieces that each end
  well inside the front's cut (protocol/v2025/streams.py);
- a 2026-07-28 caller must not be given a task (it did not opt in) and has no resumable
  stream: ``HOLD`` when the front streams (a REST API with response streaming holds a call
  for up to 15 minutes), the call held and its progress streamed as it happens;
- beyond what the caller waits for (``wait_seconds``, or its ``Taskgate-Wait-Seconds``
  header), or where nothing can hold the call, ``HANDLE``: an ordinary result that hands
  the model a task handle (protocol/handle_tools.py). A call still running when the caller's
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
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..tools.registry import Tool

if TYPE_CHECKING:
    from .tool_calls import ToolRequest

# The header a client (or its user, in the host's server configuration) sets to say how
# long it waits for a plain call; 0 means "hand me a task handle at once".
WAIT_HEADER = "taskgate-wait-seconds"
# A held call ends this long before a streaming front would cut it.
HOLD_MARGIN_SECONDS = 30.0


class Plan(enum.StrEnum):
    INLINE = "inline"
    STREAM = "stream"
    HOLD = "hold"
    HANDLE = "handle"
    REFUSE = "refuse"


@dataclass(frozen=True)
class CallPolicy:
    """The deployment's settings for plain calls (config.Settings)."""

    inline_max_seconds: float = 10.0
    wait_seconds: float = 50.0
    handles: bool = True
    piece_seconds: float = 20.0
    hang_up_seconds: float = 90.0
    front_streaming: bool = False
    front_timeout_seconds: float = 29.0

    @property
    def hang_up_ms(self) -> int:
        return math.ceil(self.hang_up_seconds * 1000)

    @property
    def hold_seconds(self) -> float:
        """How long a call can be held open here: 0 behind a front that buffers."""
        return max(0.0, self.front_timeout_seconds - HOLD_MARGIN_SECONDS) if self.front_streaming else 0.0


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


def client_wait(policy: CallPolicy, headers: Mapping[str, str]) -> float:
    raw = headers.get(WAIT_HEADER)
    if raw is None:
        return policy.wait_seconds
    try:
        wait = float(raw)
    except ValueError:
        return policy.wait_seconds
    return min(max(wait, 0.0), 86_400.0) if math.isfinite(wait) else policy.wait_seconds


def decide(
    policy: CallPolicy,
    request: ToolRequest,
    headers: Mapping[str, str],
    *,
    resumable: bool,
    accepts_sse: bool,
) -> Decision:
    """What a plain call of ``request`` becomes. ``resumable``: the era has resumable
    streams (2025-11-25); ``accepts_sse``: the request accepts an SSE response."""
    tool = request.tool
    expected = tool.expected_for(request.args)
    if expected is None or expected <= policy.inline_max_seconds or tool.task_support == "forbidden":
        return Decision(Plan.INLINE, expected)
    return _long(policy, tool, expected, client_wait(policy, headers), resumable, accepts_sse)


def decide_job(
    policy: CallPolicy,
    request: ToolRequest,
    headers: Mapping[str, str],
    *,
    resumable: bool,
    accepts_sse: bool,
) -> Decision:
    """What a plain call becomes once its tool, run inline, hands a job off (``NeedsTask``).
    How long the job runs is not known: it is planned as a call that lasts as long as its
    caller waits, so it streams or is held for that wait and is then handed over (or, with
    handles off, streams or is held to its end, or is refused)."""
    if request.tool.task_support == "forbidden":
        return Decision(Plan.REFUSE)
    wait = client_wait(policy, headers)
    decision = _long(policy, request.tool, wait, wait, resumable, accepts_sse)
    return Decision(decision.plan, None, decision.wait, decision.handles)


def _long(
    policy: CallPolicy, tool: Tool, expected: float, wait: float, resumable: bool, accepts_sse: bool
) -> Decision:
    # A tool with an outputSchema cannot answer with a handle: clients check its result
    # against the schema (and refuse one without structuredContent).
    handles = policy.handles and tool.output_schema() is None
    if resumable and accepts_sse:
        if expected <= wait or not handles:
            return Decision(Plan.STREAM, expected, wait, handles)
        return Decision(Plan.HANDLE, expected, wait, handles)
    hold = policy.hold_seconds if accepts_sse else 0.0
    if hold > 0 and (expected <= min(wait, hold) or (not handles and expected <= hold)):
        return Decision(Plan.HOLD, expected, min(wait, hold) if handles else hold, handles)
    if handles:
        return Decision(Plan.HANDLE, expected, wait, handles)
    return Decision(Plan.REFUSE, expected, wait, handles)


def refusal(tool: Tool, decision: Decision, policy: CallPolicy) -> str:
    """Why a 2026-07-28 plain call cannot be served here, and what to do instead."""
    where = (
        f"this endpoint cannot hold a call longer than {policy.hold_seconds:.0f} s"
        if policy.front_streaming
        else f"this endpoint's front buffers responses and cuts them at {policy.front_timeout_seconds:.0f} s"
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
