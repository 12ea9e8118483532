"""The jobs tools hand off (jobs/vocabulary.py), in the AWS services they run in.

A child execution is found by its ARN, known before it starts (the task chose its name).
A Batch job, an ECS task or a Glue job run gets its id from the service only when the
task's execution submits it; that id is read from the execution's own TaskSubmitted
event, so nothing extra is written while the job is started, and a stop needs no record
the state machine would have had to keep.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..jobs.vocabulary import JobKind, JobProgress, PendingJob
from .batch_jobs import BatchJobs
from .ecs_tasks import EcsTasks
from .glue_jobs import GlueJobs
from .stepfunctions_workflow import StepFunctionsJobs

# How each kind's start appears in the task execution's history (resourceType, resource).
_SUBMITTED = {
    JobKind.BATCH: ("batch", "submitJob.sync"),
    JobKind.ECS: ("ecs", "runTask.sync"),
    JobKind.GLUE: ("glue", "startJobRun.sync"),
}


def _get(value: Any, *path: str) -> Any:
    """``value[path…]``, keys matched whatever their case (the services and Step Functions
    spell them differently); None when any step is missing."""
    for key in path:
        if isinstance(value, list):
            value = value[0] if value else None
        if not isinstance(value, dict):
            return None
        value = next((v for k, v in value.items() if k.lower() == key.lower()), None)
    return value


class AwsJobs:
    def __init__(
        self,
        executions: StepFunctionsJobs,
        batch: Callable[[], BatchJobs],
        ecs: Callable[[], EcsTasks],
        glue: Callable[[], GlueJobs],
    ) -> None:
        self._executions = executions
        self._batch = batch
        self._ecs = ecs
        self._glue = glue

    def _submitted(self, task_id: str, job: PendingJob, execution: str | None) -> Any:
        resource_type, resource = _SUBMITTED[job.kind]
        return self._executions.submitted(task_id, resource_type, resource, execution)

    def describe(self, task_id: str, job: PendingJob, execution: str | None = None) -> JobProgress | None:
        if job.kind is JobKind.EXECUTION:
            return self._executions.describe(StepFunctionsJobs.child_arn(job.target, job.name or ""))
        if job.kind is JobKind.CALLBACK:
            return None
        out = self._submitted(task_id, job, execution)
        if job.kind is JobKind.BATCH:
            job_id = _get(out, "JobId")
            return self._batch().describe(job_id) if job_id else None
        if job.kind is JobKind.ECS:
            task_arn, cluster = _get(out, "Tasks", "TaskArn"), _get(out, "Tasks", "ClusterArn")
            return self._ecs().describe(cluster, task_arn) if task_arn and cluster else None
        run_id = _get(out, "JobRunId")
        return self._glue().describe(job.target, run_id) if run_id else None

    def stop(self, task_id: str, job: PendingJob, reason: str, execution: str | None = None) -> None:
        if job.kind is JobKind.EXECUTION:
            self._executions.stop(StepFunctionsJobs.child_arn(job.target, job.name or ""), reason)
            return
        if job.kind is JobKind.CALLBACK:
            return  # nothing runs: the URL is refused from now on
        # Not submitted yet: the task's execution, stopped next, never will.
        out = self._submitted(task_id, job, execution)
        if job.kind is JobKind.BATCH:
            job_id = _get(out, "JobId")
            if job_id:
                self._batch().stop(job_id, reason)
        elif job.kind is JobKind.ECS:
            task_arn, cluster = _get(out, "Tasks", "TaskArn"), _get(out, "Tasks", "ClusterArn")
            if task_arn and cluster:
                self._ecs().stop(cluster, task_arn, reason)
        else:
            run_id = _get(out, "JobRunId")
            if run_id:
                self._glue().stop(job.target, run_id)
