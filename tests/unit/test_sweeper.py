"""The sweeper at scale, on the fakes: it reads rows in batches, judges most tasks from
the row alone (a parked task's execution cannot end before its wait does), isolates
each task's failure, and stops for the invocation's deadline."""

from __future__ import annotations

import dataclasses
import threading
from typing import Any

from taskgate.domain.errors import ServiceUnavailable
from taskgate.domain.model import NewTask, TaskRecord, TaskStatus
from taskgate.domain.sweeper import Sweeper
from taskgate.testing.memory import MemoryTaskStore, MemoryWorkflow
from tests.fakes import World

STALE = 300_000
HOUR = 3_600_000


class CountingWorkflow(MemoryWorkflow):
    """Counts DescribeExecution calls, and fails them for chosen tasks."""

    def __init__(self) -> None:
        super().__init__()
        self.described: list[str] = []
        self.broken: set[str] = set()
        self._lock = threading.Lock()

    def status(self, task_id: str, execution: str | None = None) -> str | None:
        with self._lock:
            self.described.append(task_id)
        if task_id in self.broken:
            raise ServiceUnavailable("AWS is unavailable (ThrottlingException)")
        return super().status(task_id, execution)


def _row(n: int, status: TaskStatus, *, quiet_ms: int, now: int, retention_ms: int = HOUR) -> TaskRecord:
    return TaskRecord(
        task_id=f"00000000-0000-4000-8000-{n:012d}",
        owner=f"owner-{n % 7}",
        tool="slow_compute",
        arguments={"seconds": 1},
        status=status,
        created_at_ms=now - quiet_ms - 1_000,
        last_updated_at_ms=now - quiet_ms,
        ttl_ms=retention_ms,
        poll_interval_ms=1_000,
        expires_at_ms=now - quiet_ms + retention_ms,
        retention_ms=retention_ms,
    )


def _sweeper(store: MemoryTaskStore, workflow: MemoryWorkflow, now: int, **kw: Any) -> Sweeper:
    return Sweeper(store, workflow, lambda: now, stale_after_ms=STALE, max_runtime_ms=0, **kw)


def test_a_parked_task_is_not_described_until_its_wait_could_have_run_out() -> None:
    now = 1_800_000_000_000
    store, workflow = MemoryTaskStore(), CountingWorkflow()
    waiting = _row(1, TaskStatus.INPUT_REQUIRED, quiet_ms=HOUR, now=now)  # parked an hour, waits 1 h + margin
    lost = _row(2, TaskStatus.INPUT_REQUIRED, quiet_ms=HOUR + STALE + 1, now=now)  # its wait is over
    fresh = _row(3, TaskStatus.WORKING, quiet_ms=STALE, now=now)
    quiet = _row(4, TaskStatus.WORKING, quiet_ms=STALE + 1, now=now)
    for record in (waiting, lost, fresh, quiet):
        store.put(record)
    workflow.executions[quiet.task_id] = "RUNNING"
    report = _sweeper(store, workflow, now).sweep()
    assert sorted(workflow.described) == [lost.task_id, quiet.task_id]
    assert (report.checked, report.judged_from_row, report.described) == (4, 2, 2)
    # The parked task whose execution is gone is failed; the quiet one is running.
    assert report.failed == {lost.task_id: "The task's execution never started."}
    assert store.records[waiting.task_id].status is TaskStatus.INPUT_REQUIRED


def test_one_tasks_failure_is_isolated_and_tried_again_at_the_next_run() -> None:
    now = 1_800_000_000_000
    store, workflow = MemoryTaskStore(), CountingWorkflow()
    rows = [_row(n, TaskStatus.WORKING, quiet_ms=STALE + 1, now=now) for n in range(250)]
    for record in rows:
        store.put(record)  # no executions: every one of them is to be failed
    workflow.broken = {rows[7].task_id, rows[180].task_id}
    report = _sweeper(store, workflow, now).sweep()
    assert set(report.errors) == workflow.broken
    assert "ThrottlingException" in report.errors[rows[7].task_id]
    assert len(report.failed) == 248
    assert store.records[rows[7].task_id].status is TaskStatus.WORKING
    workflow.broken = set()
    again = _sweeper(store, workflow, now).sweep()
    assert set(again.failed) == {rows[7].task_id, rows[180].task_id} and not again.errors


def test_a_batch_that_cannot_be_read_does_not_stop_the_others() -> None:
    now = 1_800_000_000_000
    store, workflow = MemoryTaskStore(), CountingWorkflow()
    rows = [_row(n, TaskStatus.WORKING, quiet_ms=STALE + 1, now=now) for n in range(300)]
    for record in rows:
        store.put(record)
    get_many = store.get_many
    calls = {"n": 0}

    def flaky(task_ids: list[str]) -> list[TaskRecord]:
        calls["n"] += 1
        if rows[0].task_id in task_ids:
            raise ServiceUnavailable("AWS is unavailable (ProvisionedThroughputExceededException)")
        return get_many(task_ids)

    store.get_many = flaky  # type: ignore[method-assign]
    report = _sweeper(store, workflow, now).sweep()
    assert calls["n"] == 3  # 300 tasks, 100 per read
    assert len(report.errors) == 100 and rows[0].task_id in report.errors
    assert len(report.failed) == 200


def test_the_sweep_stops_starting_work_near_the_deadline() -> None:
    now = 1_800_000_000_000
    store, workflow = MemoryTaskStore(), CountingWorkflow()
    for n in range(50):
        store.put(_row(n, TaskStatus.WORKING, quiet_ms=STALE + 1, now=now))
    report = _sweeper(store, workflow, now).sweep(remaining_ms=lambda: 5_000)
    assert not report.complete and report.checked == 0 and workflow.described == []


def test_five_thousand_live_and_parked_tasks_cost_describes_only_for_the_doubtful() -> None:
    now = 1_800_000_000_000
    store, workflow = MemoryTaskStore(), CountingWorkflow()
    kinds = {
        "parked, waiting": (2_500, TaskStatus.INPUT_REQUIRED, HOUR),
        "working, recently updated": (2_000, TaskStatus.WORKING, 60_000),
        "working, quiet, execution running": (400, TaskStatus.WORKING, STALE + 1),
        "working, execution gone": (100, TaskStatus.WORKING, STALE + 1),
    }
    n = 0
    for count, status, quiet in kinds.values():
        for _ in range(count):
            record = _row(n, status, quiet_ms=quiet, now=now)
            store.put(record)
            if n < 4_900:
                workflow.executions[record.task_id] = "RUNNING"
            n += 1
    report = _sweeper(store, workflow, now).sweep()
    assert report.checked == 5_000 and report.complete and not report.errors
    assert report.described == len(workflow.described) == 500
    assert len(report.failed) == 100
    assert all(store.records[t].status is TaskStatus.FAILED for t in report.failed)


def test_the_world_sweeper_still_fails_what_no_execution_will_finish(world: World) -> None:
    never = world.tasks.create(NewTask(owner="ann", tool="slow_compute", arguments={"seconds": 0}))
    del world.workflow.executions[never.task_id]
    world.workflow.runnable.clear()
    world.clock.advance(STALE + 1)
    record = world.store.records[never.task_id]
    assert world.store.get_many([never.task_id]) == [dataclasses.replace(record, arguments={})]
    assert world.sweeper.sweep().failed == {never.task_id: "The task's execution never started."}
