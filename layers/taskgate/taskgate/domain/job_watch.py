"""What a waiting task's readers see of its job: the job's own status, read from its
service while nobody's code runs for the task.

A read (tasks/get, a 2025 stream's look) asks the job's service for its status at most
once per interval per task, however many clients poll: the row remembers when it last
did, and the write that notes a status is conditional on that, so concurrent readers
share one look (a reader that lost the race keeps what it read).
"""

from __future__ import annotations

import dataclasses
import logging

from .errors import TransitionRejected
from .jobs import JobKind, Jobs
from .limits import MAX_STATUS_MESSAGE_BYTES, cut
from .model import TaskRecord, TaskStatus
from .ports import Clock, TaskStore

logger = logging.getLogger(__name__)

# How often reads may ask a job's service how it is doing (per task).
JOB_STATUS_INTERVAL_MS = 10_000


class JobWatch:
    def __init__(
        self, store: TaskStore, jobs: Jobs | None, clock: Clock, interval_ms: int = JOB_STATUS_INTERVAL_MS
    ) -> None:
        self._store = store
        self._jobs = jobs
        self._clock = clock
        self._interval = interval_ms

    def refresh(self, record: TaskRecord) -> TaskRecord:
        """``record``, with its job's current status as the statusMessage when it is time
        to look (a callback's system reports its own, by heartbeat)."""
        job = record.job
        if job is None or self._jobs is None or record.status is not TaskStatus.WORKING:
            return record
        if job.kind is JobKind.CALLBACK:
            return record
        now = self._clock()
        if record.job_checked_at_ms is not None and now - record.job_checked_at_ms < self._interval:
            return record
        try:
            progress = self._jobs.describe(record.task_id, job, record.execution_arn)
        except Exception:
            # The row still says the task is waiting: a status is a nicety, never a failure.
            logger.warning("could not read the job's status", extra={"taskId": record.task_id}, exc_info=True)
            return record
        if progress is None:
            return record
        counted = ""
        if progress.progress is not None:
            counted = (
                f" ({progress.progress:g}/{progress.total:g})"
                if progress.total
                else f" ({progress.progress:g})"
            )
        message = cut(f"Waiting for {job.label}: {progress.message}{counted}", MAX_STATUS_MESSAGE_BYTES)
        try:
            self._store.note_job_status(
                record.task_id,
                job.key,
                message,
                now,
                record.kept_alive(now),
                checked_before_ms=now - self._interval,
            )
        except TransitionRejected:
            return record
        return dataclasses.replace(record, status_message=message, job_checked_at_ms=now)
