"""AWS Batch, for the jobs tools hand off: a job's status, and its stop."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..jobs.vocabulary import JobProgress
from .aws_errors import translating


class BatchJobs:
    def __init__(self, client: Callable[[], Any]) -> None:
        self._client = client

    @translating
    def describe(self, job_id: str) -> JobProgress | None:
        jobs = self._client().describe_jobs(jobs=[job_id]).get("jobs", [])
        if not jobs:
            return None
        job = jobs[0]
        message = str(job.get("status", "UNKNOWN"))
        if job.get("statusReason"):
            message += f" ({job['statusReason']})"
        # An array job counts its children: the progress Batch reports.
        array = job.get("arrayProperties") or {}
        size = array.get("size")
        if size:
            summary = array.get("statusSummary") or {}
            done = int(summary.get("SUCCEEDED", 0)) + int(summary.get("FAILED", 0))
            return JobProgress(message, progress=done, total=size)
        return JobProgress(message)

    @translating
    def stop(self, job_id: str, reason: str) -> None:
        # TerminateJob also cancels a job not yet started; one that ended is left as it is.
        self._client().terminate_job(jobId=job_id, reason=reason[:1024] or "stopped")
