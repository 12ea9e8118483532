"""A child state machine's execution (``states:startExecution.sync:2``): its output is the
job's output. Found, and stopped, by its ARN: its name is chosen here."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .kinds import KINDS, JobKind, Kind

if TYPE_CHECKING:
    from .vocabulary import JobSpec


def child_name(task_id: str, key: str) -> str:
    """The child execution's name: the same for every run of the step that hands it off,
    so Step Functions starts it once (a Standard machine refuses a second execution of a
    name), and at most 80 characters of [A-Za-z0-9_-] whatever the key."""
    from .vocabulary import slug  # with the first job of any kind

    digest = hashlib.sha256(key.encode()).hexdigest()[:16]
    return f"tg-{slug(task_id, 40)}-{digest}"


@dataclass(frozen=True)
class StepFunctionsExecution:
    """An execution of another state machine (``states:startExecution.sync:2``); its
    output is the result's ``output``."""

    state_machine_arn: str
    input: Any = None

    def spec(self, task_id: str, key: str) -> JobSpec:
        from .vocabulary import JobSpec  # with the first job of any kind

        name = child_name(task_id, key)
        params = {"StateMachineArn": self.state_machine_arn, "Name": name, "Input": self.input or {}}
        return JobSpec(JobKind.EXECUTION, self.state_machine_arn, params, name=name)


def _reasons(d: dict[str, Any]) -> list[str]:
    # DescribeExecution of the child: its own error and cause.
    return [str(d[k]) for k in ("status", "error", "cause") if d.get(k)]


KIND = KINDS.add(
    Kind(
        JobKind.EXECUTION,
        "state machine",
        named_by="target",
        reasons=_reasons,
        states=("RunExecution",),
        integration="states:startExecution.sync:2",
        run_actions=frozenset({"states:StartExecution", "states:DescribeExecution", "states:StopExecution"}),
        events_rule="StepFunctionsGetEventsForStepFunctionsExecutionRule",
        status_actions=frozenset({"states:DescribeExecution", "states:GetExecutionHistory"}),
        stop_actions=frozenset({"states:StopExecution"}),
    )
)
