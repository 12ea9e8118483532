"""AWS Glue, for the job runs tools hand off: a run's status, and its stop."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from botocore.exceptions import ClientError

from ..jobs.vocabulary import JobProgress
from .aws_errors import error_code, translating


class GlueJobs:
    def __init__(self, client: Callable[[], Any]) -> None:
        self._client = client

    @translating
    def describe(self, job_name: str, run_id: str) -> JobProgress | None:
        try:
            run = self._client().get_job_run(JobName=job_name, RunId=run_id)["JobRun"]
        except ClientError as exc:
            if error_code(exc) == "EntityNotFoundException":
                return None
            raise
        message = str(run.get("JobRunState", "UNKNOWN"))
        if run.get("ExecutionTime"):
            message += f", {run['ExecutionTime']} s"
        if run.get("ErrorMessage"):
            message += f" ({run['ErrorMessage']})"
        return JobProgress(message)

    @translating
    def stop(self, job_name: str, run_id: str) -> None:
        # Per-run failures come back in the response (a run that ended cannot be stopped).
        self._client().batch_stop_job_run(JobName=job_name, JobRunIds=[run_id])
