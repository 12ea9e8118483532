"""What a waiting task's readers see of its job: the job's own status, read from its
service while nobody's code runs for the task.

A read (tasks/get, a 2025 stream's look) asks the job's service for its status at most
once per interval per task, however many clients poll: the row remembers when it last
did, and the write that notes a status is conditional on that, so concurrent readers
share one look (a reader that lost the race keeps what it read).

The look that notes a status also tells it as the tool's own reports are told, so a
caller that never reads statusMessage (a plain call's stream, a held call, a task's
tasks/result stream) hears it too: a new status is a log line (info, to a task that
keeps lines that low), and a service's count of work done (a Batch array job's) is a
progress report, only ever growing.
"""

from __future__ import annotations

import dataclasses
import logging
from typing import TYPE_CHECKING

from ..text import cut
from ..tools.peer import at_least
from .errors import TransitionRejected
from .limits import MAX_ROW_BYTES, MAX_STATUS_MESSAGE_BYTES, row_size
from .model import LogLine, Progress, TaskRecord, TaskStatus
from .ports import Clock, TaskStore
from .progress import ProgressReport, bounded_progress, with_line, with_report

if TYPE_CHECKING:
    from ..jobs.vocabulary import JobProgress, Jobs

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
        from ..jobs.kinds import KINDS  # a task that waits on a job has loaded them already

        if KINDS[job.kind].callback:
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
        report = _told(record, message, progress)
        told = with_report(record, report) if report is not None else record
        if report is not None and row_size(told) > MAX_ROW_BYTES:
            # The row is near DynamoDB's 400 KB: the status alone, never a failed read.
            report, told = None, record
        try:
            self._store.note_job_status(
                record.task_id,
                job.key,
                message,
                now,
                record.kept_alive(now),
                checked_before_ms=now - self._interval,
                report=report,
            )
        except TransitionRejected:
            return record
        return dataclasses.replace(told, status_message=message, job_checked_at_ms=now)


def _told(record: TaskRecord, message: str, progress: JobProgress) -> ProgressReport | None:
    """What the caller is told of a status besides statusMessage (None: nothing new)."""
    numbers: Progress | None = None
    last = record.progress.progress if record.progress is not None else None
    if progress.progress is not None and (last is None or progress.progress > last):
        numbers = bounded_progress(progress.progress, progress.total, message)
    wants_line = record.log_level is not None and at_least("info", record.log_level)
    line = LogLine("info", message) if wants_line and message != record.status_message else None
    if numbers is None and line is None:
        return None
    return ProgressReport(
        message=message,
        progress=numbers or record.progress,
        progress_count=record.progress_count + (1 if numbers is not None else 0),
        log_lines=with_line(record.log_lines, line) if line is not None else record.log_lines,
        log_count=record.log_count + (1 if line is not None else 0),
    )
