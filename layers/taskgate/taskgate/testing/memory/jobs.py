"""``Jobs``: the services jobs run in, as a dict of what runs."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...jobs.vocabulary import JobProgress, PendingJob

if TYPE_CHECKING:
    pass


class MemoryJobs:
    """``Jobs`` as the services behave: a job runs from when the state machine's wait starts
    it (``World.settle`` plays that) until a test ends it (``World.finish_job``) or it is
    stopped. ``progress`` is what describing a running job reports."""

    def __init__(self) -> None:
        self.running: dict[str, PendingJob] = {}  # task id -> the job it waits on
        self.started: list[tuple[str, str]] = []  # (task id, key), in order
        self.stopped: dict[str, str] = {}  # task id -> why
        self.progress: dict[str, JobProgress] = {}
        self.described = 0
        # Set to an exception to make the next call of that name raise it.
        self.fail_next: dict[str, Exception] = {}

    def start(self, task_id: str, job: PendingJob) -> None:
        self.running[task_id] = job
        self.started.append((task_id, job.key))

    def describe(self, task_id: str, job: PendingJob, execution: str | None = None) -> JobProgress | None:
        exc = self.fail_next.pop("describe", None)
        if exc is not None:
            raise exc
        self.described += 1
        if self.running.get(task_id) != job:
            return None
        return self.progress.get(task_id, JobProgress("RUNNING"))

    def stop(self, task_id: str, job: PendingJob, reason: str, execution: str | None = None) -> None:
        exc = self.fail_next.pop("stop", None)
        if exc is not None:
            raise exc
        if self.running.get(task_id) == job:
            del self.running[task_id]
            self.stopped[task_id] = reason
