"""An AWS Batch job (``batch:submitJob.sync``): the output is the job as DescribeJobs tells it."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .kinds import KINDS, JobKind, Kind

if TYPE_CHECKING:
    from .vocabulary import JobSpec


@dataclass(frozen=True)
class BatchJob:
    """An AWS Batch job (``batch:submitJob.sync``); the result's ``output`` is the job as
    DescribeJobs tells it (status, attempts, container exit code)."""

    job_queue: str
    job_definition: str
    job_name: str | None = None
    parameters: Mapping[str, str] = field(default_factory=dict)
    container_overrides: Mapping[str, Any] = field(default_factory=dict)

    def spec(self, task_id: str, key: str) -> JobSpec:
        from .vocabulary import JobSpec, slug  # with the first job of any kind

        name = slug(self.job_name or f"taskgate-{key}", 128)
        params = {
            "JobName": name,
            "JobQueue": self.job_queue,
            "JobDefinition": self.job_definition,
            "Parameters": dict(self.parameters),
            "ContainerOverrides": dict(self.container_overrides),
        }
        return JobSpec(JobKind.BATCH, self.job_queue, params, name=name)


def _reasons(d: dict[str, Any]) -> list[str]:
    found = d.get("container")
    container: dict[str, Any] = found if isinstance(found, dict) else {}
    parts = [str(d[k]) for k in ("status", "statusreason") if d.get(k)]
    if container.get("exitcode") not in (None, 0):
        parts.append(f"exit code {container['exitcode']}")
    if container.get("reason"):
        parts.append(str(container["reason"]))
    return parts


# The job's id comes from the task execution's TaskSubmitted event (adapters/aws_jobs.py).
_FIND = frozenset({"states:GetExecutionHistory"})

KIND = KINDS.add(
    Kind(
        JobKind.BATCH,
        "Batch job",
        reasons=_reasons,
        states=("RunBatchJob",),
        integration="batch:submitJob.sync",
        run_actions=frozenset({"batch:SubmitJob", "batch:DescribeJobs", "batch:TerminateJob"}),
        events_rule="StepFunctionsGetEventsForBatchJobsRule",
        status_actions=_FIND | {"batch:DescribeJobs"},
        stop_actions=_FIND | {"batch:TerminateJob"},
    )
)
