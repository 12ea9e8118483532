"""What a tools/call becomes, decided by the flow alone (protocol/calls/flow.py): what the
caller can do x what kind of tool (and what is known of how long it runs) x how long the
caller waits -> one outcome. No era is involved: each row is a ``Caller`` value, as an era
would read it from its envelope. Every tool has run before (known quick) except the ``fresh``
ones, which no run of this code version has timed yet."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel

from taskgate.domain.durations import duration_key
from taskgate.domain.model import TaskStatus
from taskgate.protocol.calls.caller import Caller
from taskgate.protocol.calls.flow import (
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
    ToolCallFlow,
)
from taskgate.protocol.calls.policy import Front
from taskgate.protocol.wire.exchange import Call
from taskgate.protocol.wire.jsonrpc import Request
from taskgate.tools import Elicit, GlueJobRun, MissingCapability, ToolContext
from taskgate.tools.input import ClientCapabilities
from taskgate.tools.registry import Tool, ToolRegistry
from tests.fakes import World


class NoInput(BaseModel):
    pass


class Reading(BaseModel):
    celsius: float


def _quick(args: NoInput, ctx: ToolContext) -> str:
    return "done"


def _asks(args: NoInput, ctx: ToolContext) -> str:
    answer = ctx.ask("go", Elicit("Go on?", {"ok": {"type": "boolean"}}))
    return f"went: {answer.accepted}"


def _confirm(args: NoInput, ctx: ToolContext) -> None:
    ctx.ask("confirm", Elicit("Sure?", {"ok": {"type": "boolean"}}))


def _job(args: NoInput, ctx: ToolContext) -> str:
    ctx.hand_off("nightly", GlueJobRun("nightly"))
    return "loaded"


def _reading(args: NoInput, ctx: ToolContext) -> Reading:
    return Reading(celsius=3.0)


def _tools() -> ToolRegistry:
    tools = ToolRegistry()
    for found in (
        Tool("quick", "A quick tool.", NoInput, _quick),
        Tool("asks", "Asks before it answers.", NoInput, _asks),
        Tool("prepared", "Its prepare step asks first.", NoInput, _quick, prepare=_confirm),
        Tool("long", "Runs a minute.", NoInput, _quick, expected_seconds=60),
        Tool(
            "long_schema",
            "Runs a minute; a structured result.",
            NoInput,
            _reading,
            output_model=Reading,
            expected_seconds=60,
        ),
        Tool("job", "Hands a Glue job off.", NoInput, _job),
        Tool("required", "Runs only as a task.", NoInput, _quick, task_support="required"),
        Tool("forbidden", "Never a task.", NoInput, _quick, task_support="forbidden"),
        Tool("fresh", "Quick, but never run yet.", NoInput, _quick),
        Tool("fresh_asks", "Asks, and never run yet.", NoInput, _asks),
        Tool("fresh_schema", "A structured result, never run yet.", NoInput, _reading, output_model=Reading),
    ):
        tools.add(found)
    return tools


def _world(**settings: Any) -> World:
    """The tools served, each known quick from an earlier run but the ``fresh`` ones."""
    world = World(_tools(), **settings)
    for known in world.tools:
        if not known.name.startswith("fresh"):
            world.memory.durations.longest[duration_key(known)] = 40
    return world


# The call's answer came from its hidden task's row, which the request waited on.
WAITED = "answered after waiting on the row"


ELICITS = ClientCapabilities({"elicitation": {}})
BUFFERS = Front(streams=False, cut_seconds=29)
STREAMS = Front(streams=True, cut_seconds=900)

# What callers can do, as their eras read it (the wait is each row's own).
CALLERS = {
    # 2025-11-25 with a session: resumable SSE streams, questions on the call's stream.
    "resumable": Caller(0, BUFFERS, accepts_sse=True, resumable=True, capabilities=ELICITS),
    # The same without SSE: nothing can stream.
    "no_sse": Caller(0, BUFFERS, accepts_sse=False, resumable=True, capabilities=ELICITS),
    # 2026-07-28 behind a front that buffers: questions in rounds of its own call.
    "rounds": Caller(0, BUFFERS, accepts_sse=True, answers_inline=True, capabilities=ELICITS),
    # …that declared tasks.
    "tasks": Caller(0, BUFFERS, accepts_sse=True, answers_inline=True, capabilities=ELICITS, tasks=True),
    # …behind a front that streams for 15 minutes.
    "held": Caller(0, STREAMS, accepts_sse=True, answers_inline=True, capabilities=ELICITS),
    # …that declared nothing it can answer.
    "mute": Caller(0, BUFFERS, accepts_sse=True, answers_inline=True),
}

ROWS: list[tuple[str, str, float, Any]] = [
    # (caller, tool, how long the caller waits, what the call becomes)
    ("resumable", "quick", 50, Answered),
    ("resumable", "asks", 50, Streamed),
    ("resumable", "prepared", 50, Streamed),
    ("resumable", "long", 900, Streamed),
    ("resumable", "long", 50, HandedOver),
    ("resumable", "long", 0, HandedOver),
    ("resumable", "long_schema", 50, Streamed),
    ("resumable", "job", 50, Streamed),
    ("resumable", "job", 0, Streamed),
    ("resumable", "required", 50, Refusal.TASK_REQUIRED),
    ("resumable", "forbidden", 50, Answered),
    ("no_sse", "quick", 50, Answered),
    ("no_sse", "asks", 50, Refusal.NEEDS_INPUT),
    ("no_sse", "long", 900, HandedOver),
    ("no_sse", "long_schema", 50, Refusal.CANNOT_WAIT),
    ("rounds", "quick", 50, Answered),
    ("rounds", "asks", 50, Asks),
    ("rounds", "prepared", 50, Asks),
    ("rounds", "long", 50, HandedOver),
    ("rounds", "long", 900, HandedOver),
    # No handle can stand in for a structured result: carried on in rounds (rounds.py).
    ("rounds", "long_schema", 50, WAITED),
    ("rounds", "job", 50, HandedOver),
    ("rounds", "required", 50, Refusal.TASK_REQUIRED),
    ("tasks", "quick", 50, Created),
    ("tasks", "long", 0, Created),
    ("tasks", "long_schema", 50, Created),
    ("tasks", "prepared", 50, Asks),
    ("tasks", "required", 50, Created),
    ("tasks", "forbidden", 50, Answered),
    ("held", "quick", 900, Answered),
    ("held", "long", 50, HandedOver),
    ("held", "long", 900, Held),
    ("held", "long_schema", 50, Held),
    ("held", "job", 50, Held),
    ("mute", "asks", 50, MissingCapability),
    ("mute", "quick", 50, Answered),
    # It takes no rounds (OpenAI Agents): no handle, nothing to carry the call on.
    ("mute", "long_schema", 50, Refusal.CANNOT_WAIT),
    # Never run: possibly long, so never inside the request. A caller that waits gets the
    # result all the same; one that waits for nothing gets a handle.
    ("resumable", "fresh", 50, Streamed),
    ("no_sse", "fresh", 50, WAITED),
    ("rounds", "fresh", 50, WAITED),
    ("rounds", "fresh", 4, WAITED),
    ("rounds", "fresh", 0, HandedOver),
    ("rounds", "fresh_schema", 0, Refusal.CANNOT_WAIT),
    ("held", "fresh", 900, Held),
    ("tasks", "fresh", 50, Created),
    ("mute", "fresh", 50, WAITED),
]


def _call(request_id: int = 1) -> Call:
    return Call("ann", {}, Request(request_id, "tools/call", {}))


def _outcome(world: World, caller: Caller, name: str, invocation: Invocation | None = None) -> Outcome:
    flow = ToolCallFlow(world.root)
    return flow.call(_call(), invocation or Invocation(name, {}, progress_token="p1"), caller)


@pytest.mark.parametrize(
    ("caller", "tool", "wait", "becomes"), ROWS, ids=[f"{c}-{t}-{w}s" for c, t, w, _ in ROWS]
)
def test_what_a_tools_call_becomes(caller: str, tool: str, wait: float, becomes: Any) -> None:
    world = _world()
    who = CALLERS[caller]._replace(wait_seconds=wait)
    if becomes is MissingCapability:
        with pytest.raises(MissingCapability):
            _outcome(world, who, tool)
        return
    outcome = _outcome(world, who, tool)
    tasks = list(world.store.records.values())
    if isinstance(becomes, Refusal):
        assert isinstance(outcome, Refused) and (outcome.why, outcome.tool) == (becomes, tool)
        assert all(t.status is TaskStatus.CANCELLED for t in tasks)  # nothing left running
        return
    if becomes == WAITED:
        # The work ran in the worker, as a task the caller never sees; its result is the answer.
        assert isinstance(outcome, Answered) and outcome.result["content"][0]["text"] in (
            "done",
            '{"celsius":3.0}',
        )
        assert [(t.tool, t.status) for t in tasks] == [(tool, TaskStatus.COMPLETED)]
        return
    assert type(outcome) is becomes, outcome
    if becomes in (Answered, Asks):
        assert tasks == []  # nothing durable for a call answered in the request
    else:
        # Exactly one task, the caller's, for this tool; hidden ones watched while streamed or
        # held, and once handed over after a wait until the handle is asked after.
        assert [(t.owner, t.tool, t.status) for t in tasks] == [("ann", tool, TaskStatus.WORKING)]
        watched = tasks[0].watched_until_ms is not None
        after_a_wait = isinstance(outcome, HandedOver) and outcome.claim_within_seconds is not None
        assert watched is (becomes in (Streamed, Held) or after_a_wait)


def test_a_caller_that_asks_for_a_task_gets_one_unless_the_tool_cannot_be_one() -> None:
    world = _world()
    caller = CALLERS["resumable"]
    asked = Invocation("quick", {}, task=TaskAsk(ttl_ms=60_000, progress_token="p1", log_level="info"))
    created = _outcome(world, caller, "quick", asked)
    assert isinstance(created, Created)
    record = created.record
    assert (record.progress_token, record.log_level, record.ttl_ms) == ("p1", "info", 60_000)
    refused = _outcome(world, caller, "forbidden", asked._replace(name="forbidden"))
    assert isinstance(refused, Refused) and refused.why is Refusal.NOT_A_TASK


def test_a_question_with_something_to_carry_seals_it_for_the_next_round() -> None:
    world = _world()
    caller = CALLERS["rounds"]._replace(wait_seconds=50)
    first = _outcome(world, caller, "prepared")
    assert isinstance(first, Asks) and first.request_state is None  # nothing answered yet
    answered = Invocation("prepared", {}, answers={"confirm": {"action": "accept", "content": {"ok": True}}})
    assert isinstance(_outcome(world, caller, "prepared", answered), Answered)


def test_the_plan_is_switched_on_in_one_module() -> None:
    """No era acts on a Plan: the flow does, for both (the only module that imports it)."""
    import ast
    import pathlib

    import taskgate.protocol

    root = pathlib.Path(taskgate.protocol.__file__).parent
    users = sorted(
        str(path.relative_to(root))
        for path in root.rglob("*.py")
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.ImportFrom) and any(alias.name == "Plan" for alias in node.names)
    )
    assert users == ["calls/flow.py"]


def test_each_era_words_refusals_by_their_names() -> None:
    """The eras key their refusal wording by Refusal's values (so that the outcomes load with
    the first tools/call): a renamed or added refusal must be worded, or fall back, on purpose."""
    from taskgate.protocol.v2025 import era as era2025
    from taskgate.protocol.v2026 import era as era2026

    names = {why.value for why in Refusal}
    assert set(era2025._REFUSALS) == names  # the 2025 era words every one
    assert set(era2026._REFUSALS) <= names  # the 2026 era words some, the flow's words otherwise
