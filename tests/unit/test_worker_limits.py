"""The worker under the state machine's limits: AWS trouble is retried by the state
machine (never recorded as the task's failure), and a task that would outgrow one
execution's 25,000-event history ends failed with a reason first."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel

from taskgate.domain import history
from taskgate.domain.errors import ServiceUnavailable
from taskgate.domain.model import NewTask, TaskStatus
from taskgate.domain.worker import StepKind, Worker
from taskgate.tools import Elicit, ToolContext, ToolRegistry
from taskgate.tools.registry import Tool
from tests.fakes import World


class NoInput(BaseModel):
    pass


def _world(budget: int, **fns: Any) -> World:
    tools = ToolRegistry()
    for name, fn in fns.items():
        tools.add(Tool(name, name, NoInput, fn))
    world = World(tools)
    world.worker = Worker(
        world.store,
        world.tools,
        world.clock,
        world.results,
        limits=world.limits,
        max_runtime_ms=world.root.times.max_runtime_ms,
        yield_margin_ms=world.root.times.yield_margin_ms,
        history_budget=budget,
    )
    return world


def chatty(args: Any, ctx: ToolContext) -> str:
    """Asks one question after another, forever."""
    n = 0
    while True:
        ctx.ask(f"q{n}", Elicit("again?", {"type": "object", "properties": {}}))
        n += 1


def test_throttling_inside_the_tool_is_raised_for_the_state_machine_to_retry() -> None:
    def throttled(args: Any, ctx: ToolContext) -> str:
        raise ServiceUnavailable("AWS is unavailable (ThrottlingException)")

    world = _world(history.HISTORY_BUDGET, throttled=throttled)
    record = world.tasks.create(NewTask(owner="ann", tool="throttled", arguments={}))
    with pytest.raises(ServiceUnavailable):
        world.worker.run_step(record.task_id)
    # Nothing recorded: the retried step starts from the same row.
    assert world.store.records[record.task_id].status is TaskStatus.WORKING


def test_each_question_round_counts_its_history_with_the_retries_before_it(world: World) -> None:
    world = _world(history.HISTORY_BUDGET, chatty=chatty)
    record = world.tasks.create(NewTask(owner="ann", tool="chatty", arguments={}))
    assert world.worker.run_step(record.task_id).kind is StepKind.INPUT_REQUIRED
    assert world.store.records[record.task_id].history_events == history.EVENTS_PER_QUESTION_ROUND
    world.store.park(record.task_id, "t1", world.clock())
    world.store.answer_inputs(
        record.task_id,
        {"q0": {"action": "accept", "content": {}}},
        task_token="t1",
        max_answer_bytes=world.limits.max_input_response_bytes,
        now_ms=world.clock(),
        alive=world.store.records[record.task_id].kept_alive(world.clock()),
    )
    # This step's attempt came after two retries (``$$.State.RetryCount`` = 2).
    world.worker.run_step(record.task_id, retries=2)
    used = world.store.records[record.task_id].history_events
    assert used == 2 * history.EVENTS_PER_QUESTION_ROUND + 2 * history.EVENTS_PER_RETRY


def test_a_continued_step_counts_and_a_plain_checkpoint_does_not() -> None:
    def counts(args: Any, ctx: ToolContext) -> str:
        n = (ctx.state or {}).get("n", 0)
        while n < 3:
            n += 1
            ctx.checkpoint({"n": n})
        return "done"

    world = _world(history.HISTORY_BUDGET, counts=counts)
    record = world.tasks.create(NewTask(owner="ann", tool="counts", arguments={}))
    assert world.worker.run_step(record.task_id, remaining_ms=lambda: 0).kind is StepKind.CONTINUE
    assert world.store.records[record.task_id].history_events == history.EVENTS_PER_CONTINUED_STEP
    world.worker.run_step(record.task_id, remaining_ms=lambda: 10**9)
    done = world.store.records[record.task_id]
    assert done.status is TaskStatus.COMPLETED
    assert done.history_events == history.EVENTS_PER_CONTINUED_STEP


def test_a_task_that_would_outgrow_its_execution_history_fails_with_a_reason() -> None:
    rounds = 4
    world = _world(rounds * history.EVENTS_PER_QUESTION_ROUND, chatty=chatty)
    mcp = world.mcp("ann")
    task_id = mcp.call("chatty")["taskId"]
    for n in range(rounds):
        task = mcp.wait(task_id, {"input_required"})
        assert list(task["inputRequests"]) == [f"q{n}"]
        mcp.result("tasks/update", {"taskId": task_id, "inputResponses": {f"q{n}": {"action": "accept"}}})
    ended = mcp.get(task_id)
    assert ended["status"] == "failed"
    assert ended["statusMessage"].startswith("The task reached the most steps one execution can record")
    assert ended["error"]["code"] == -32603


def test_the_budget_leaves_room_below_step_functions_limit() -> None:
    assert history.HISTORY_BUDGET + history.HISTORY_RESERVE == history.EXECUTION_HISTORY_LIMIT == 25_000
    # Room for the last step even if it is retried as often as RunTool allows (20 attempts).
    assert history.HISTORY_RESERVE > history.EVENTS_PER_QUESTION_ROUND + 20 * history.EVENTS_PER_RETRY + 10
    # What the budget still allows: about two thousand question rounds, or four thousand
    # 14-minute continued steps (some five weeks of work).
    assert history.HISTORY_BUDGET // history.EVENTS_PER_QUESTION_ROUND == 2_000
    assert history.HISTORY_BUDGET // history.EVENTS_PER_CONTINUED_STEP * 14 / 60 / 24 > 35
