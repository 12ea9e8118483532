"""The task lifecycle on the fakes: the service, one worker step, the sweeper, the
one fail path and where results live."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import pytest
from pydantic import BaseModel

from taskgate.domain.errors import (
    DependencyFailure,
    InvalidCursor,
    PayloadTooLarge,
    ServiceUnavailable,
    TaskNotFound,
    TooManyActiveTasks,
)
from taskgate.domain.model import NewTask, Outcome, TaskStatus
from taskgate.domain.worker import StepKind, TaskgateContinue, TaskgateInputRequired
from taskgate.tools import Elicit, ToolContext, ToolError, ToolRegistry
from taskgate.tools.context import ProtocolError
from taskgate.tools.registry import Tool
from tests.fakes import World


class NoInput(BaseModel):
    pass


def registry(**fns: Any) -> ToolRegistry:
    tools = ToolRegistry()
    for name, fn in fns.items():
        tools.add(Tool(name, name, NoInput, fn))
    return tools


def test_create_is_write_through_and_starts_one_execution(world: World) -> None:
    record = world.tasks.create(NewTask(owner="ann", tool="greet", arguments={"name": "A"}))
    assert world.store.records[record.task_id].status is TaskStatus.WORKING
    assert world.workflow.executions == {record.task_id: "RUNNING"}
    assert record.ttl_ms == record.retention_ms == 3_600_000


def test_a_failed_start_leaves_no_task_working(world: World) -> None:
    world.workflow.fail_next["start"] = RuntimeError("boom")
    with pytest.raises(DependencyFailure):
        world.tasks.create(NewTask(owner="ann", tool="greet", arguments={}))
    (row,) = world.store.records.values()
    assert row.status is TaskStatus.FAILED
    assert row.status_message == "The task could not be started; it was never run."


def test_limits_are_checked_before_anything_is_stored() -> None:
    world = World(max_active_tasks_per_owner=1, max_argument_bytes=50)
    with pytest.raises(PayloadTooLarge) as big:
        world.tasks.create(NewTask(owner="ann", tool="greet", arguments={"name": "x" * 100}))
    assert big.value.limit == 50 and world.store.records == {}
    world.tasks.create(NewTask(owner="ann", tool="greet", arguments={}))
    with pytest.raises(TooManyActiveTasks):
        world.tasks.create(NewTask(owner="ann", tool="greet", arguments={}))
    world.tasks.create(NewTask(owner="bob", tool="greet", arguments={}))  # per owner


def test_another_owners_task_and_an_expired_one_look_missing(world: World) -> None:
    record = world.tasks.create(NewTask(owner="ann", tool="greet", arguments={}))
    with pytest.raises(TaskNotFound) as foreign:
        world.tasks.get("bob", record.task_id)
    with pytest.raises(TaskNotFound) as unknown:
        world.tasks.get("ann", "nope")
    assert str(foreign.value) == str(unknown.value)
    world.clock.advance(record.ttl_ms + 1)
    with pytest.raises(TaskNotFound, match="expired"):
        world.tasks.get("ann", record.task_id)


def test_a_step_completes_the_task_with_the_tools_result(world: World) -> None:
    record = world.tasks.create(NewTask(owner="ann", tool="greet", arguments={"name": "Ada"}))
    world.settle()
    row = world.store.records[record.task_id]
    assert row.status is TaskStatus.COMPLETED and row.outcome is Outcome.SUCCESS
    assert row.result == {"content": [{"type": "text", "text": "Hello, Ada!"}], "isError": False}
    assert world.workflow.executions[record.task_id] == "SUCCEEDED"


def test_step_outcomes_are_typed_and_signal_the_state_machine() -> None:
    def asks(args: Any, ctx: ToolContext) -> str:
        ctx.ask("ok", Elicit("Go?", {"go": {"type": "boolean"}}))
        return "went"

    world = World(registry(asks=asks))
    record = world.tasks.create(NewTask(owner="ann", tool="asks", arguments={}))
    outcome = world.worker.run_step(record.task_id)
    assert outcome.kind is StepKind.INPUT_REQUIRED and outcome.status is None
    with pytest.raises(TaskgateInputRequired):
        outcome.raise_signal()
    assert world.store.records[record.task_id].input_requests["ok"]["method"] == "elicitation/create"


def test_a_checkpoint_out_of_time_continues_in_a_next_step() -> None:
    def counts(args: Any, ctx: ToolContext) -> str:
        n = (ctx.state or {}).get("n", 0)
        while n < 3:
            n += 1
            ctx.checkpoint({"n": n})
        return f"counted {n}"

    world = World(registry(counts=counts))
    record = world.tasks.create(NewTask(owner="ann", tool="counts", arguments={}))
    first = world.worker.run_step(record.task_id, remaining_ms=lambda: 0)
    assert first.kind is StepKind.CONTINUE
    with pytest.raises(TaskgateContinue):
        first.raise_signal()
    assert world.store.records[record.task_id].checkpoint == {"n": 1}
    last = world.worker.run_step(record.task_id, remaining_ms=lambda: 10**9)
    assert last.kind is StepKind.FINISHED and last.status is TaskStatus.COMPLETED
    assert last.payload() == {"kind": "finished", "status": "completed"}


def test_tool_errors_protocol_errors_and_crashes_end_the_task_differently() -> None:
    def tool_error(args: Any, ctx: ToolContext) -> str:
        raise ToolError("no luck")

    def protocol_error(args: Any, ctx: ToolContext) -> str:
        raise ProtocolError(-32001, "refused", {"why": "policy"})

    def crash(args: Any, ctx: ToolContext) -> str:
        raise KeyError("secret")

    world = World(registry(tool_error=tool_error, protocol_error=protocol_error, crash=crash))
    ids = {
        name: world.tasks.create(NewTask(owner="o", tool=name, arguments={})).task_id
        for name in ("tool_error", "protocol_error", "crash")
    }
    world.settle()
    rows = {name: world.store.records[task_id] for name, task_id in ids.items()}
    assert (
        rows["tool_error"].status is TaskStatus.COMPLETED and rows["tool_error"].outcome is Outcome.TOOL_ERROR
    )
    assert rows["protocol_error"].error == {"code": -32001, "message": "refused", "data": {"why": "policy"}}
    crash = ids["crash"]
    assert rows["crash"].error == {
        "code": -32603,
        "message": f"Internal error while running the tool (the worker's log has the trace under taskId {crash})",
        "data": {"taskId": crash},
    }
    assert "secret" not in json.dumps(rows["crash"].error)


def test_a_result_too_large_for_the_row_goes_to_the_bucket_and_back() -> None:
    world = World(max_inline_result_bytes=1_000)
    record = world.tasks.create(NewTask(owner="ann", tool="big_result", arguments={"kilobytes": 4}))
    world.settle()
    row = world.store.records[record.task_id]
    assert row.result is None and row.result_ref == f"results/{record.task_id}.json"
    assert list(world.blobs.objects) == [row.result_ref]
    full = world.tasks.with_result(world.tasks.get("ann", record.task_id))
    assert full.result is not None and len(full.result["content"][0]["text"]) == 4096


def test_results_are_read_only_where_they_are_returned() -> None:
    world = World(max_inline_result_bytes=1_000)
    record = world.tasks.create(NewTask(owner="ann", tool="big_result", arguments={"kilobytes": 4}))
    world.settle()
    reads: list[str] = []
    get, get_range = world.blobs.get, world.blobs.get_range
    world.blobs.get = lambda key: reads.append(key) or get(key)  # type: ignore[method-assign]
    world.blobs.get_range = lambda key, *a: reads.append(key) or get_range(key, *a)  # type: ignore[method-assign]
    world.tasks.cancel("ann", record.task_id)
    world.tasks.submit_input("ann", record.task_id, {"x": 1})
    world.tasks.get("ann", record.task_id)
    assert reads == []
    world.mcp("ann").get(record.task_id)  # tasks/get of a finished task returns it
    assert reads == [f"results/{record.task_id}.json"]


def test_without_a_bucket_an_oversize_result_fails_clearly() -> None:
    world = World(max_inline_result_bytes=1_000, with_bucket=False)
    record = world.tasks.create(NewTask(owner="ann", tool="big_result", arguments={"kilobytes": 4}))
    world.settle()
    row = world.store.records[record.task_id]
    assert row.status is TaskStatus.FAILED and row.status_message is not None
    assert "no result bucket is configured" in row.status_message


def test_a_result_written_after_a_cancel_is_discarded(world: World) -> None:
    record = world.tasks.create(NewTask(owner="ann", tool="big_result", arguments={"kilobytes": 300}))
    world.tasks.cancel("ann", record.task_id)
    world.store.put(dataclasses.replace(world.store.records[record.task_id], status=TaskStatus.WORKING))
    # The worker read "working", then the cancel landed before its final write.
    finish = world.store.finish
    world.store.finish = lambda *a, **k: False  # type: ignore[method-assign]
    world.worker.run_step(record.task_id)
    world.store.finish = finish  # type: ignore[method-assign]
    assert world.blobs.objects == {}


def test_answers_accumulate_and_the_last_one_resumes(world: World) -> None:
    record = world.tasks.create(NewTask(owner="ann", tool="multi_input", arguments={}))
    world.settle()
    assert world.store.records[record.task_id].status is TaskStatus.INPUT_REQUIRED
    world.tasks.submit_input(
        "ann", record.task_id, {"name": {"action": "accept", "content": {"name": "Ann"}}}
    )
    parked = world.store.records[record.task_id]
    assert parked.status is TaskStatus.INPUT_REQUIRED and set(parked.input_requests) == {"color"}
    world.tasks.submit_input(
        "ann", record.task_id, {"color": {"action": "accept", "content": {"color": "teal"}}, "junk": 1}
    )
    world.settle()
    done = world.store.records[record.task_id]
    assert done.status is TaskStatus.COMPLETED
    assert done.result is not None and "teal" in done.result["content"][0]["text"]
    assert "junk" not in done.input_responses


def test_a_resume_that_cannot_reach_the_execution_fails_the_task(world: World) -> None:
    record = world.tasks.create(NewTask(owner="ann", tool="confirm_delete", arguments={"filename": "a"}))
    world.settle()
    world.workflow.fail_next["resume"] = ServiceUnavailable("throttled")
    with pytest.raises(ServiceUnavailable):
        world.tasks.submit_input("ann", record.task_id, {"confirm_delete": {"action": "accept"}})
    row = world.store.records[record.task_id]
    assert row.status is TaskStatus.FAILED
    assert world.workflow.stop_reasons[record.task_id] == "The task's execution could not be resumed."


def test_an_oversize_answer_is_refused_and_changes_nothing() -> None:
    world = World(max_input_response_bytes=100)
    record = world.tasks.create(NewTask(owner="ann", tool="confirm_delete", arguments={"filename": "a"}))
    world.settle()
    before = world.store.records[record.task_id]
    with pytest.raises(PayloadTooLarge):
        world.tasks.submit_input("ann", record.task_id, {"confirm_delete": "x" * 200})
    assert world.store.records[record.task_id] == before


def test_cancel_stops_the_execution_with_the_reason_and_keeps_an_ended_task(world: World) -> None:
    record = world.tasks.create(NewTask(owner="ann", tool="slow_compute", arguments={"seconds": 0}))
    cancelled = world.tasks.cancel("ann", record.task_id)
    assert cancelled.cancelled_now and cancelled.record.status is TaskStatus.CANCELLED
    assert world.workflow.stop_reasons[record.task_id] == "The task was cancelled by the client."
    again = world.tasks.cancel("ann", record.task_id)
    assert not again.cancelled_now and again.record.status is TaskStatus.CANCELLED
    world.settle()  # the execution was stopped: nothing runs
    assert world.store.records[record.task_id].status is TaskStatus.CANCELLED


def test_the_sweeper_fails_what_no_execution_will_finish_and_says_why(world: World) -> None:
    never = world.tasks.create(NewTask(owner="ann", tool="slow_compute", arguments={"seconds": 0}))
    del world.workflow.executions[never.task_id]
    world.workflow.runnable.clear()
    ended = world.tasks.create(NewTask(owner="ann", tool="slow_compute", arguments={"seconds": 0}))
    world.workflow.executions[ended.task_id] = "FAILED"
    world.workflow.runnable.clear()
    parked = world.tasks.create(NewTask(owner="ann", tool="confirm_delete", arguments={"filename": "p"}))
    world.settle()
    world.clock.advance(300_001)
    report = world.sweeper.sweep()
    assert report.checked == 3
    assert report.failed == {
        never.task_id: "The task's execution never started.",
        ended.task_id: "The task's execution ended (FAILED) without recording a result.",
    }
    assert world.store.records[parked.task_id].status is TaskStatus.INPUT_REQUIRED
    # The stop carries the real reason, not "cancelled by client".
    assert world.workflow.stop_reasons == {}  # both executions had already gone
    assert world.store.records[never.task_id].status_message == "The task's execution never started."


def test_the_sweeper_stops_work_past_its_deadline_with_that_reason() -> None:
    world = World()
    world.sweeper._max_runtime = 1_000
    record = world.tasks.create(NewTask(owner="ann", tool="confirm_delete", arguments={"filename": "p"}))
    world.settle()
    world.clock.advance(1_001)
    assert world.sweeper.sweep().failed == {record.task_id: "The task exceeded its maximum run time."}
    assert world.workflow.stop_reasons[record.task_id] == "The task exceeded its maximum run time."


def test_list_pages_only_the_owners_live_tasks(world: World) -> None:
    mine = [world.tasks.create(NewTask(owner="ann", tool="greet", arguments={})).task_id for _ in range(3)]
    world.tasks.create(NewTask(owner="bob", tool="greet", arguments={}))
    page, cursor = world.tasks.list("ann", None, limit=2)
    rest, end = world.tasks.list("ann", cursor, limit=2)
    assert sorted(r.task_id for r in page + rest) == sorted(mine) and end is None
    with pytest.raises(InvalidCursor):
        world.tasks.list("ann", "not-a-cursor")
