"""The jobs tools hand off (taskgate/jobs), in the AWS services they run in: each kind's
adapter, chosen by the kind's name (a callback has none: nothing runs in AWS).

A child execution is found by its ARN, known before it starts (the task chose its name).
A Batch job, an ECS task or a Glue job run gets its id from the service only when the
task's execution submits it; that id is read from the execution's own TaskSubmitted
event (its kind's integration names it), so nothing extra is written while the job is
started, and a stop needs no record the state machine would have had to keep.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Protocol

from ..jobs.kinds import KINDS
from ..jobs.vocabulary import JobProgress, PendingJob
from .batch_jobs import BatchJobs
from .ecs_tasks import EcsTasks
from .glue_jobs import GlueJobs
from .stepfunctions_workflow import StepFunctionsJobs


class KindAdapter(Protocol):
    """One kind's half of ``Jobs``: a job's status, and its stop."""

    def describe(self, task_id: str, job: PendingJob, execution: str | None) -> JobProgress | None: ...

    def stop(self, task_id: str, job: PendingJob, reason: str, execution: str | None) -> None: ...


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
    """``Jobs``: each kind's adapter by the kind's name (built by its first use)."""

    def __init__(self, adapters: Mapping[str, Callable[[], KindAdapter]]) -> None:
        self._adapters = adapters

    def describe(self, task_id: str, job: PendingJob, execution: str | None = None) -> JobProgress | None:
        adapter = self._adapters.get(job.kind)
        return adapter().describe(task_id, job, execution) if adapter is not None else None

    def stop(self, task_id: str, job: PendingJob, reason: str, execution: str | None = None) -> None:
        adapter = self._adapters.get(job.kind)
        if adapter is not None:  # a callback: nothing runs, and the URL is refused from now on
            adapter().stop(task_id, job, reason, execution)


class ChildExecutions:
    """A child state machine's execution, by its ARN."""

    def __init__(self, executions: StepFunctionsJobs) -> None:
        self._executions = executions

    def describe(self, task_id: str, job: PendingJob, execution: str | None) -> JobProgress | None:
        return self._executions.describe(StepFunctionsJobs.child_arn(job.target, job.name or ""))

    def stop(self, task_id: str, job: PendingJob, reason: str, execution: str | None) -> None:
        self._executions.stop(StepFunctionsJobs.child_arn(job.target, job.name or ""), reason)


class _Submitted:
    """A job whose id the task's execution got back when it submitted it."""

    def __init__(self, executions: StepFunctionsJobs) -> None:
        self._executions = executions

    def submitted(self, task_id: str, job: PendingJob, execution: str | None) -> Any:
        resource_type, resource = KINDS[job.kind].integration.split(":", 1)
        return self._executions.submitted(task_id, resource_type, resource, execution)


class SubmittedBatchJobs(_Submitted):
    def __init__(self, executions: StepFunctionsJobs, batch: BatchJobs) -> None:
        super().__init__(executions)
        self._batch = batch

    def describe(self, task_id: str, job: PendingJob, execution: str | None) -> JobProgress | None:
        job_id = _get(self.submitted(task_id, job, execution), "JobId")
        return self._batch.describe(job_id) if job_id else None

    def stop(self, task_id: str, job: PendingJob, reason: str, execution: str | None) -> None:
        # Not submitted yet: the task's execution, stopped next, never will.
        job_id = _get(self.submitted(task_id, job, execution), "JobId")
        if job_id:
            self._batch.stop(job_id, reason)


class SubmittedEcsTasks(_Submitted):
    def __init__(self, executions: StepFunctionsJobs, ecs: EcsTasks) -> None:
        super().__init__(executions)
        self._ecs = ecs

    def _task(self, task_id: str, job: PendingJob, execution: str | None) -> tuple[Any, Any]:
        out = self.submitted(task_id, job, execution)
        return _get(out, "Tasks", "TaskArn"), _get(out, "Tasks", "ClusterArn")

    def describe(self, task_id: str, job: PendingJob, execution: str | None) -> JobProgress | None:
        task_arn, cluster = self._task(task_id, job, execution)
        return self._ecs.describe(cluster, task_arn) if task_arn and cluster else None

    def stop(self, task_id: str, job: PendingJob, reason: str, execution: str | None) -> None:
        task_arn, cluster = self._task(task_id, job, execution)
        if task_arn and cluster:
            self._ecs.stop(cluster, task_arn, reason)


class SubmittedGlueRuns(_Submitted):
    def __init__(self, executions: StepFunctionsJobs, glue: GlueJobs) -> None:
        super().__init__(executions)
        self._glue = glue

    def describe(self, task_id: str, job: PendingJob, execution: str | None) -> JobProgress | None:
        run_id = _get(self.submitted(task_id, job, execution), "JobRunId")
        return self._glue.describe(job.target, run_id) if run_id else None

    def stop(self, task_id: str, job: PendingJob, reason: str, execution: str | None) -> None:
        run_id = _get(self.submitted(task_id, job, execution), "JobRunId")
        if run_id:
            self._glue.stop(job.target, run_id)
