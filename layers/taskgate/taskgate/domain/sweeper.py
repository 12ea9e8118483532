"""The scheduled sweep that leaves no task hanging.

The state machine's catch-all handles failures inside an execution. What it
cannot see: an execution that never started (a crash between the row's put and
StartExecution), one that ended without recording anything, and work running
past its deadline. Every few minutes this reads the sparse active index (live
tasks only, so the cost follows the number of live tasks) and ends such tasks
``failed`` with a statusMessage that says why.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

from .ending import TaskEnder
from .ports import Clock, TaskStore, Workflow

logger = logging.getLogger(__name__)


@dataclass
class SweepReport:
    checked: int = 0
    failed: dict[str, str] = field(default_factory=dict)


class Sweeper:
    def __init__(
        self,
        store: TaskStore,
        workflow: Workflow,
        clock: Clock,
        *,
        stale_after_ms: int,
        max_runtime_ms: int,
    ) -> None:
        self._store = store
        self._workflow = workflow
        self._clock = clock
        self._ender = TaskEnder(store, workflow, clock)
        self._stale_after = stale_after_ms
        self._max_runtime = max_runtime_ms

    def sweep(self) -> SweepReport:
        report = SweepReport()
        for task_id in self._store.list_active():
            record = self._store.get(task_id)
            if record is None or record.status.terminal:
                continue
            report.checked += 1
            now = self._clock()
            reason: str | None = None
            if self._max_runtime and now - record.created_at_ms > self._max_runtime:
                reason = "The task exceeded its maximum run time."
            elif now - record.last_updated_at_ms > self._stale_after:
                # Quiet for a while: fine if its execution is alive (a long step, or
                # parked for an answer); a failure if there is none.
                status = self._workflow.status(task_id)
                if status is None:
                    reason = "The task's execution never started."
                elif status != "RUNNING":
                    reason = f"The task's execution ended ({status}) without recording a result."
            if reason and self._ender.fail(record, reason):
                logger.warning("swept task", extra={"taskId": task_id, "reason": reason})
                report.failed[task_id] = reason
        return report
