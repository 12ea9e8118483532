"""The scheduled sweep that leaves no task hanging.

The state machine's catch-all handles failures inside an execution. What it
cannot see: an execution that never started (a crash between the row's put and
StartExecution), one that ended without recording anything, and work running
past its deadline, including a job the task handed off (jobs/vocabulary.py), which it stops. Every few minutes this reads the sparse active index (live
tasks only, so the cost follows the number of live tasks) and ends such tasks
``failed`` with a statusMessage that says why.

It has to keep up with thousands of live tasks inside one Lambda invocation:

- the index is read a page at a time, and each page's rows in batches (one
  request per hundred tasks rather than one per task);
- most tasks are judged from their row alone: one updated recently is alive, and
  one parked for input whose wait has not run out cannot have lost its execution
  (it waits on its task token; only a timeout, after the wait, or a stop, which
  the row would show, ends it). Only the rest cost a ``DescribeExecution``;
- batches are checked in parallel, each task on its own: one task's failure
  (a throttled call, a bad row) is counted and retried at the next run, never
  the end of the sweep;
- it stops starting work when the invocation is nearly out of time, and says so.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from ..jobs.vocabulary import Jobs
from .ending import HUNG_UP, TaskEnder
from .errors import TransitionRejected
from .model import TaskRecord, TaskStatus
from .ports import Clock, TaskStore, Workflow

logger = logging.getLogger(__name__)

# Rows read per request (DynamoDB's BatchGetItem takes at most 100 keys).
BATCH_SIZE = 100
# Stop starting work with less than this left of the invocation.
DEADLINE_MARGIN_MS = 20_000


@dataclass
class SweepReport:
    checked: int = 0
    # Judged from the row alone (no call to Step Functions).
    judged_from_row: int = 0
    # DescribeExecution calls made.
    described: int = 0
    failed: dict[str, str] = field(default_factory=dict)
    # Plain calls' hidden tasks whose callers hung up for good, cancelled (task id -> why).
    cancelled: dict[str, str] = field(default_factory=dict)
    # Tasks that could not be checked this time (the next run tries again), and why.
    errors: dict[str, str] = field(default_factory=dict)
    # False when the run stopped for lack of time before it had read every live task.
    complete: bool = True


class Sweeper:
    def __init__(
        self,
        store: TaskStore,
        workflow: Workflow,
        clock: Clock,
        *,
        stale_after_ms: int,
        max_runtime_ms: int,
        parallelism: int = 16,
        jobs: Jobs | None = None,
    ) -> None:
        self._store = store
        self._workflow = workflow
        self._clock = clock
        self._ender = TaskEnder(store, workflow, clock, jobs)
        self._stale_after = stale_after_ms
        self._max_runtime = max_runtime_ms
        self._parallelism = parallelism
        self._lock = threading.Lock()

    def sweep(self, remaining_ms: Callable[[], int] | None = None) -> SweepReport:
        """One pass over the live tasks. ``remaining_ms`` is the invocation's time left
        (Lambda's ``get_remaining_time_in_millis``); without it there is no deadline."""
        report = SweepReport()

        def out_of_time() -> bool:
            return remaining_ms is not None and remaining_ms() < DEADLINE_MARGIN_MS

        with ThreadPoolExecutor(max_workers=self._parallelism, thread_name_prefix="sweep") as pool:
            for page in self._store.active_pages():
                if out_of_time():
                    report.complete = False
                    break
                for start in range(0, len(page), BATCH_SIZE):
                    pool.submit(self._sweep_batch, page[start : start + BATCH_SIZE], report, out_of_time)
        if not report.complete:
            logger.warning("sweep stopped for lack of time", extra={"checked": report.checked})
        return report

    def _sweep_batch(self, task_ids: list[str], report: SweepReport, out_of_time: Callable[[], bool]) -> None:
        if out_of_time():
            self._note(report, complete=False)
            return
        try:
            records = self._store.get_many(task_ids)
        except Exception as exc:
            for task_id in task_ids:
                self._note(report, error=(task_id, _describe(exc)))
            logger.warning("sweep could not read %d tasks", len(task_ids), exc_info=True)
            return
        for record in records:
            if out_of_time():
                self._note(report, complete=False)
                return
            try:
                self._sweep_one(record, report)
            except Exception as exc:
                self._note(report, error=(record.task_id, _describe(exc)))
                logger.warning(
                    "sweep could not check a task", extra={"taskId": record.task_id}, exc_info=True
                )

    def _sweep_one(self, record: TaskRecord, report: SweepReport) -> None:
        if record.status.terminal:
            return
        now = self._clock()
        if record.caller_gone(now):
            # A plain call's hidden task nobody came back for (a tool that never reports
            # progress never runs its own check): stopped as its caller would have wanted.
            try:
                self._store.cancel(record.task_id, HUNG_UP, now, record.kept_alive(now))
            except TransitionRejected:
                return  # it ended meanwhile
            self._ender.stop(record.task_id, HUNG_UP, record.execution_arn, record.job)
            logger.warning("cancelled a task whose caller hung up", extra={"taskId": record.task_id})
            with self._lock:
                report.checked += 1
                report.judged_from_row += 1
                report.cancelled[record.task_id] = HUNG_UP
            return
        reason: str | None = None
        described = False
        past_runtime = bool(self._max_runtime) and now - record.created_at_ms > self._max_runtime
        if record.job is not None and (past_runtime or now > record.job.deadline_ms):
            label = record.job.label
            reason = f"{label[:1].upper()}{label[1:]} did not finish within the task's time; it was stopped."
        elif past_runtime:
            reason = "The task exceeded its maximum run time."
        elif not self._cannot_have_ended(record, now):
            # Quiet for a while: fine if its execution is alive (a long step, or
            # parked past its wait); a failure if there is none.
            described = True
            status = self._workflow.status(record.task_id, record.execution_arn)
            if status is None:
                reason = "The task's execution never started."
            elif status != "RUNNING":
                reason = f"The task's execution ended ({status}) without recording a result."
        swept = reason is not None and self._ender.fail(record, reason)
        if swept:
            logger.warning("swept task", extra={"taskId": record.task_id, "reason": reason})
        self._note(
            report,
            checked=record.task_id,
            described=described,
            swept=(record.task_id, reason) if swept and reason else None,
        )

    def _cannot_have_ended(self, record: TaskRecord, now: int) -> bool:
        """True when the row alone shows the execution is still there to finish the task."""
        quiet = now - record.last_updated_at_ms
        if quiet <= self._stale_after:
            return True  # it wrote recently: its execution is running
        if record.status is TaskStatus.INPUT_REQUIRED:
            # Parked: the execution waits on its token for at most the task's retention
            # (its inputWaitSeconds), then RecordFailure ends the task. Until that wait
            # (and a margin for the failure write) has passed, it cannot have ended.
            return quiet <= record.retention_ms + self._stale_after
        return False

    def _note(
        self,
        report: SweepReport,
        *,
        checked: str | None = None,
        described: bool = False,
        swept: tuple[str, str] | None = None,
        error: tuple[str, str] | None = None,
        complete: bool = True,
    ) -> None:
        with self._lock:
            if checked is not None:
                report.checked += 1
                if described:
                    report.described += 1
                else:
                    report.judged_from_row += 1
            if swept is not None:
                report.failed[swept[0]] = swept[1]
            if error is not None:
                report.errors[error[0]] = error[1]
            if not complete:
                report.complete = False


def _describe(exc: Exception) -> str:
    return f"{type(exc).__name__}: {exc}"
