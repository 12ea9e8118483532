"""An ECS task (``ecs:runTask.sync``): the output is the stopped task as DescribeTasks tells
it, and a container that exited non-zero fails the job."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .kinds import KINDS, JobKind, Kind

if TYPE_CHECKING:
    from .vocabulary import JobSpec


@dataclass(frozen=True)
class EcsTask:
    """An ECS task in awsvpc networking, Fargate by default (``ecs:runTask.sync``); the
    result's ``output`` is the stopped task as DescribeTasks tells it. A container that
    exits non-zero fails the job."""

    cluster: str
    task_definition: str
    subnets: Sequence[str]
    security_groups: Sequence[str] = ()
    assign_public_ip: bool = False
    launch_type: str = "FARGATE"
    overrides: Mapping[str, Any] = field(default_factory=dict)

    def spec(self, task_id: str, key: str) -> JobSpec:
        from .vocabulary import JobSpec  # with the first job of any kind

        network: dict[str, Any] = {
            "Subnets": list(self.subnets),
            "AssignPublicIp": "ENABLED" if self.assign_public_ip else "DISABLED",
        }
        if self.security_groups:
            network["SecurityGroups"] = list(self.security_groups)
        params = {
            "Cluster": self.cluster,
            "TaskDefinition": self.task_definition,
            "LaunchType": self.launch_type,
            "NetworkConfiguration": {"AwsvpcConfiguration": network},
            "Overrides": dict(self.overrides),
        }
        family = self.task_definition.rsplit("/", 1)[-1]
        return JobSpec(JobKind.ECS, self.cluster, params, name=family)


def _reasons(d: dict[str, Any]) -> list[str]:
    return [str(d[k]) for k in ("laststatus", "stoppedreason", "stopcode") if d.get(k)]


def _failed_container(output: Any) -> tuple[str, str] | None:
    """ECS reports a task that stopped as done whatever its containers exited with; a
    container that exited non-zero (or never ran) fails the job here."""
    from .vocabulary import lower_keys  # with the first job of any kind

    if not isinstance(output, dict):
        return None
    containers = lower_keys(output).get("containers")
    if not isinstance(containers, list):
        return None
    for container in containers:
        if not isinstance(container, dict):
            continue
        code = container.get("exitcode")
        if code not in (None, 0):
            name = container.get("name") or "a container"
            reason = f"; {container['reason']}" if container.get("reason") else ""
            return "Ecs.ContainerFailed", f"{name} exited with code {code}{reason}"
    return None


_FIND = frozenset({"states:GetExecutionHistory"})

KIND = KINDS.add(
    Kind(
        JobKind.ECS,
        "ECS task",
        reasons=_reasons,
        failed_output=_failed_container,
        states=("RunEcsTask",),
        integration="ecs:runTask.sync",
        run_actions=frozenset({"ecs:RunTask", "ecs:DescribeTasks", "ecs:StopTask", "iam:PassRole"}),
        events_rule="StepFunctionsGetEventsForECSTaskRule",
        status_actions=_FIND | {"ecs:DescribeTasks"},
        stop_actions=_FIND | {"ecs:StopTask"},
    )
)
