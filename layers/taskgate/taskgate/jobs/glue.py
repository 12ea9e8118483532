"""A run of an AWS Glue job (``glue:startJobRun.sync``): the output is the run as GetJobRun tells it."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .kinds import KINDS, JobKind, Kind

if TYPE_CHECKING:
    from .vocabulary import JobSpec


@dataclass(frozen=True)
class GlueJobRun:
    """A run of an AWS Glue job (``glue:startJobRun.sync``); the result's ``output`` is
    the run as GetJobRun tells it."""

    job_name: str
    arguments: Mapping[str, str] = field(default_factory=dict)

    def spec(self, task_id: str, key: str) -> JobSpec:
        from .vocabulary import JobSpec  # with the first job of any kind

        params = {"JobName": self.job_name, "Arguments": dict(self.arguments)}
        return JobSpec(JobKind.GLUE, self.job_name, params, name=self.job_name)


def _reasons(d: dict[str, Any]) -> list[str]:
    return [str(d[k]) for k in ("jobrunstate", "errormessage") if d.get(k)]


_FIND = frozenset({"states:GetExecutionHistory"})

KIND = KINDS.add(
    Kind(
        JobKind.GLUE,
        "Glue job",
        named_by="target",
        reasons=_reasons,
        states=("RunGlueJob",),
        integration="glue:startJobRun.sync",
        run_actions=frozenset(
            {"glue:StartJobRun", "glue:GetJobRun", "glue:GetJobRuns", "glue:BatchStopJobRun"}
        ),
        status_actions=_FIND | {"glue:GetJobRun"},
        stop_actions=_FIND | {"glue:BatchStopJobRun"},
    )
)
