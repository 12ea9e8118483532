"""The one way a task is failed from outside its tool: by the API (a start or a
resume that could not happen), by the worker (the tool failed) and by the sweeper
(an execution that will never finish it).

The write is conditional, so an end that lost a race changes nothing; the
execution is then stopped with the same reason the client reads, and so is the job the
task was waiting on (jobs/vocabulary.py), explicitly: a stopped execution does not stop the
job it started everywhere (the local runtime's does not).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from ..codes import INTERNAL_ERROR
from ..text import cut
from .limits import MAX_STATUS_MESSAGE_BYTES, bounded_error
from .model import Outcome, TaskRecord, TaskStatus
from .ports import Clock, TaskStore, Workflow

if TYPE_CHECKING:
    from ..jobs.vocabulary import Jobs, PendingJob

logger = logging.getLogger(__name__)

# Why a plain call's hidden task was cancelled without a cancel: its caller stopped
# coming back for its answer (TaskRecord.caller_gone).
HUNG_UP = "The caller went away: nothing resumed the call in time, so the work was stopped."


class TaskEnder:
    def __init__(
        self, store: TaskStore, workflow: Workflow | None, clock: Clock, jobs: Jobs | None = None
    ) -> None:
        # The worker has no workflow: it runs inside the execution it would stop (and a
        # task whose tool runs waits on no job).
        self._store = store
        self._workflow = workflow
        self._clock = clock
        self._jobs = jobs

    def fail(
        self,
        record: TaskRecord,
        message: str,
        *,
        code: int = INTERNAL_ERROR,
        error: dict[str, Any] | None = None,
    ) -> bool:
        """End ``record`` failed with ``message`` unless it already ended; True when
        this call ended it. ``error`` (default ``{code, message}``) is what
        tasks/result and tasks/get report."""
        now = self._clock()
        # What a tool raises is bounded like everything else the row keeps.
        message = cut(message, MAX_STATUS_MESSAGE_BYTES)
        wrote = self._store.finish(
            record.task_id,
            status=TaskStatus.FAILED,
            outcome=Outcome.PROTOCOL_ERROR,
            result=None,
            error=bounded_error(error or {"code": code, "message": message}),
            message=message,
            now_ms=now,
            alive=record.kept_alive(now),
        )
        if wrote:
            self.stop(record.task_id, message, record.execution_arn, record.job)
        return wrote

    def stop(
        self, task_id: str, reason: str, execution: str | None = None, job: PendingJob | None = None
    ) -> None:
        """Stop the task's execution and the job it waits on, quietly: the row already
        says how the task ended, which is what every reader sees; a failed stop only
        delays the work noticing (at its next progress report, or the job's end)."""
        if job is not None and self._jobs is not None:
            # The job first: its execution, once stopped, no longer waits on it.
            try:
                self._jobs.stop(task_id, job, reason, execution)
            except Exception:
                logger.warning("stopping the task's job failed", extra={"taskId": task_id}, exc_info=True)
        if self._workflow is None:
            return
        try:
            self._workflow.stop(task_id, reason, execution)
        except Exception:
            logger.warning("stop_execution failed", extra={"taskId": task_id}, exc_info=True)
