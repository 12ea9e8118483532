"""Every field a task row keeps has a bound, checked before the write (issue 12, item 4).

A task is one DynamoDB item of at most 400 KB; the fake store refuses a bigger one
as DynamoDB does. What a client sends past a bound is refused at the edge with
-32602 and ``data.limit``, and nothing is stored; what a tool produces past one
ends clearly (a cut progress message, a failed task that names the limit, a
``CheckpointTooLarge`` the tool can catch), never with "ClientError".
"""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel

from taskgate.domain.errors import PayloadTooLarge
from taskgate.domain.limits import MAX_STATUS_MESSAGE_BYTES, MAX_STORED_ID_BYTES, json_size, row_size
from taskgate.domain.model import NewTask, Outcome, TaskStatus
from taskgate.domain.progress import ProgressReport
from taskgate.testing.memory import DYNAMODB_ITEM_BYTES
from taskgate.tools import CheckpointTooLarge, Elicit, ProtocolError, ToolContext, ToolRegistry
from taskgate.tools.registry import Tool
from tests.fakes import World
from tests.mcp_client import Legacy


class NoInput(BaseModel):
    pass


def _registry(**fns: Any) -> ToolRegistry:
    tools = ToolRegistry()
    for name, fn in fns.items():
        tools.add(Tool(name, name, NoInput, fn))
    return tools


def _largest_item(world: World) -> int:
    return max(row_size(r) for r in world.store.records.values())


# -- what a client sends ---------------------------------------------------------------


def test_a_huge_2025_progress_token_is_refused_with_the_limit_and_nothing_is_stored(
    world: World, http: Any
) -> None:
    legacy = Legacy(http)
    legacy.initialize()
    call = {
        "name": "slow_compute",
        "arguments": {"seconds": 0},
        "task": {},
        "_meta": {"progressToken": "p" * 600_000},
    }
    error = legacy.request("tools/call", call)["error"]
    assert error["code"] == -32602 and error["data"] == {"limit": MAX_STORED_ID_BYTES}
    assert "progressToken" in error["message"]
    assert world.store.records == {}


def test_mrtr_answers_count_against_the_answer_limit(world: World) -> None:
    """2026: answers carried by a tools/call (the round before the task) are kept in the row."""
    mcp = world.mcp()
    big = {"user_name": {"action": "accept", "content": {"name": "n" * 70_000}}}
    body = mcp.request("tools/call", {"name": "test_tool_with_task", "arguments": {}, "inputResponses": big})
    assert body["error"]["code"] == -32602 and body["error"]["data"] == {"limit": 65_536}
    assert world.store.records == {}


def _two_rounds(args: Any, ctx: ToolContext) -> str:
    first = ctx.ask("first", Elicit("One?", {"v": {"type": "string"}}))
    second = ctx.ask("second", Elicit("Two?", {"v": {"type": "string"}}))
    return f"{len(first.content['v'])}+{len(second.content['v'])}"


def test_answers_accumulate_against_one_bound_across_rounds() -> None:
    world = World(_registry(two_rounds=_two_rounds), max_input_response_bytes=50_000)
    task_id = world.tasks.create(NewTask(owner="ann", tool="two_rounds", arguments={})).task_id
    world.settle()
    world.tasks.submit_input("ann", task_id, {"first": {"action": "accept", "content": {"v": "a" * 30_000}}})
    world.settle()
    assert set(world.store.records[task_id].input_requests) == {"second"}
    before = world.store.records[task_id]
    second = {"second": {"action": "accept", "content": {"v": "b" * 30_000}}}
    with pytest.raises(PayloadTooLarge) as refused:
        world.tasks.submit_input("ann", task_id, second)  # fine alone, too much together
    assert refused.value.limit == 50_000
    assert world.store.records[task_id] == before  # still parked, nothing stored
    error = world.mcp("ann").request("tasks/update", {"taskId": task_id, "inputResponses": second})["error"]
    assert error["code"] == -32602 and error["data"] == {"limit": 50_000}


def _asks(args: Any, ctx: ToolContext) -> str:
    return ctx.ask("go", Elicit("Go?", {"note": {"type": "string"}})).action


def test_an_answer_that_would_overfill_the_row_is_refused_with_the_room_left() -> None:
    world = World(_registry(asks=_asks), max_argument_bytes=400_000, max_input_response_bytes=200_000)
    # The arguments alone take most of the item.
    task_id = world.tasks.create(NewTask(owner="ann", tool="asks", arguments={"pad": "p" * 330_000})).task_id
    world.settle()
    parked = world.store.records[task_id]
    assert parked.status is TaskStatus.INPUT_REQUIRED
    with pytest.raises(PayloadTooLarge) as refused:
        world.tasks.submit_input("ann", task_id, {"go": {"action": "accept", "note": "n" * 80_000}})
    assert refused.value.limit < 80_000
    assert world.store.records[task_id] == parked
    world.tasks.submit_input("ann", task_id, {"go": {"action": "accept", "note": "short"}})
    world.settle()
    assert world.store.records[task_id].status is TaskStatus.COMPLETED


def test_a_row_that_could_not_hold_its_arguments_and_answers_together_is_refused() -> None:
    """Each bound may be configured high enough that together they would not fit."""
    world = World(max_argument_bytes=358_400, max_input_response_bytes=262_144)
    with pytest.raises(PayloadTooLarge) as refused:
        world.tasks.create(
            NewTask(
                owner="ann",
                tool="greet",
                arguments={"pad": "a" * 350_000},
                input_responses={"earlier": "e" * 60_000},
            )
        )
    assert refused.value.limit == 400_000 and world.store.records == {}


# -- what a tool produces ----------------------------------------------------------------


def test_an_oversize_label_makes_a_cut_progress_message_not_a_failure(world: World) -> None:
    label = "é" * 100_000  # 200 KB of UTF-8: under the argument limit, echoed in every progress
    task_id = world.tasks.create(
        NewTask(owner="ann", tool="slow_compute", arguments={"seconds": 0.01, "label": label})
    ).task_id
    messages: list[str] = []
    report = world.store.report_progress

    def spy(task: str, progress: ProgressReport, *a: Any, **k: Any) -> None:
        messages.append(progress.message)
        assert progress.progress is not None and progress.progress.message is not None
        messages.append(progress.progress.message)
        report(task, progress, *a, **k)

    world.store.report_progress = spy  # type: ignore[method-assign]
    world.settle()
    row = world.store.records[task_id]
    assert row.status is TaskStatus.COMPLETED and row.outcome is Outcome.SUCCESS
    assert messages and all(len(m.encode()) <= MAX_STATUS_MESSAGE_BYTES for m in messages)
    assert messages[0].endswith("…")


def test_oversize_questions_fail_the_task_with_the_limit_not_a_client_error(world: World) -> None:
    task_id = world.tasks.create(
        NewTask(owner="ann", tool="confirm_delete", arguments={"filename": "f" * 200_000})
    ).task_id
    world.settle()
    row = world.store.records[task_id]
    assert row.status is TaskStatus.FAILED
    assert row.status_message is not None and "questions are" in row.status_message
    assert "the limit is 65536" in row.status_message and "ClientError" not in row.status_message
    assert world.store.list_active() == []


def _checkpoints_big(args: Any, ctx: ToolContext) -> str:
    ctx.checkpoint({"blob": "x" * 100_000})
    return "never"


def _checkpoints_less_when_refused(args: Any, ctx: ToolContext) -> str:
    try:
        ctx.checkpoint({"blob": "x" * 100_000})
    except CheckpointTooLarge as exc:
        ctx.checkpoint({"note": f"kept a summary ({exc.limit})"})
    return str(ctx.state)


def test_a_checkpoint_past_its_cap_is_a_clear_tool_error() -> None:
    world = World(_registry(big=_checkpoints_big, careful=_checkpoints_less_when_refused))
    big = world.tasks.create(NewTask(owner="ann", tool="big", arguments={})).task_id
    careful = world.tasks.create(NewTask(owner="ann", tool="careful", arguments={})).task_id
    world.settle()
    row = world.store.records[big]
    assert row.status is TaskStatus.COMPLETED and row.outcome is Outcome.TOOL_ERROR
    assert row.checkpoint is None  # nothing was saved
    assert row.result is not None
    text = row.result["content"][0]["text"]
    size = json_size({"blob": "x" * 100_000})
    assert f"The checkpoint state is {size} bytes; the limit is 65536. Nothing was saved" in text
    # A tool that catches it carries on with a smaller state.
    ok = world.store.records[careful]
    assert ok.outcome is Outcome.SUCCESS and ok.checkpoint == {"note": "kept a summary (65536)"}


def test_a_checkpoint_is_bounded_by_what_the_row_has_left() -> None:
    world = World(_registry(big=_checkpoints_big), max_argument_bytes=400_000, max_checkpoint_bytes=300_000)
    task_id = world.tasks.create(NewTask(owner="ann", tool="big", arguments={"pad": "p" * 320_000})).task_id
    world.settle()
    row = world.store.records[task_id]
    assert row.outcome is Outcome.TOOL_ERROR and row.result is not None
    assert "the limit is" in row.result["content"][0]["text"]
    assert _largest_item(world) <= DYNAMODB_ITEM_BYTES


def _huge_protocol_error(args: Any, ctx: ToolContext) -> str:
    raise ProtocolError(-32001, "m" * 50_000, {"dump": "d" * 300_000})


def test_a_huge_tool_error_is_stored_bounded() -> None:
    world = World(_registry(huge=_huge_protocol_error))
    task_id = world.tasks.create(NewTask(owner="ann", tool="huge", arguments={})).task_id
    world.settle()
    row = world.store.records[task_id]
    assert row.status is TaskStatus.FAILED and row.error is not None
    assert row.error["code"] == -32001 and "data" not in row.error
    assert json_size(row.error) <= 16_384
    assert row.status_message is not None and len(row.status_message.encode()) <= MAX_STATUS_MESSAGE_BYTES


def _checkpoint_then_result(args: Any, ctx: ToolContext) -> str:
    ctx.checkpoint({"progress": "c" * 60_000})
    return "r" * 130_000


def test_the_result_goes_to_the_bucket_when_the_row_as_a_whole_could_not_hold_it() -> None:
    """Arguments, answers and checkpoint count, not only the arguments."""
    world = World(_registry(tool=_checkpoint_then_result))
    task_id = world.tasks.create(
        NewTask(
            owner="ann",
            tool="tool",
            arguments={"pad": "a" * 150_000},
            input_responses={"earlier": "e" * 60_000},
        )
    ).task_id
    world.settle()
    row = world.store.records[task_id]
    assert row.status is TaskStatus.COMPLETED and row.outcome is Outcome.SUCCESS
    assert row.result is None and row.result_ref is not None
    assert _largest_item(world) <= DYNAMODB_ITEM_BYTES
    full = world.tasks.with_result(row)
    assert full.result is not None and len(full.result["content"][0]["text"]) == 130_000
