"""Jobs a tool hands off (``ctx.hand_off``): the task waits for them at no compute.

    result = ctx.hand_off("etl", StepFunctionsExecution(ETL_ARN, input={"day": args.day}))
    return f"{result.output['rows']} rows loaded"

The step ends at ``hand_off``; the state machine starts the job, waits for it natively
(``.sync``, or a callback URL), stores its outcome under the key and runs the tool again
from the top, where ``hand_off`` returns it. Keys are unique over the task's life, as a
question's are: a tool that runs again never starts the same job twice. Work before a
hand-off runs again too: keep it cheap, or ``checkpoint`` it.

A job that fails raises ``JobFailed`` (a ``ToolError``: uncaught, the tool's result is an
error that says what failed and why); ``check=False`` returns it as a ``JobResult``.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..jobs.vocabulary import JobKind, JobOutcome, PendingJob
from .errors import ToolError


@dataclass(frozen=True)
class JobSpec:
    """What ``hand_off`` asks the state machine to run (built by the job classes below)."""

    kind: JobKind
    # The state machine ARN, the Batch job queue, the ECS cluster, the Glue job ("" for a callback).
    target: str
    params: dict[str, Any]
    # A child execution's name: chosen here, so the execution can be found (and stopped)
    # before it reports anything.
    name: str | None = None
    # At most this long (capped by the task's own time: its TTL and MaxTaskRuntimeSeconds).
    timeout_seconds: int | None = None
    heartbeat_seconds: int | None = None
    # Called with the callback URL once it is stored, before the step ends.
    send: Callable[[str], None] | None = None

    def pending(self, key: str, started_at_ms: int, deadline_ms: int) -> PendingJob:
        return PendingJob(key, self.kind, self.target, self.name, started_at_ms, deadline_ms)

    def label(self, key: str) -> str:
        return self.pending(key, 0, 0).label


def _slug(text: str, limit: int) -> str:
    return re.sub(r"[^A-Za-z0-9_-]", "-", text)[:limit]


def child_name(task_id: str, key: str) -> str:
    """The child execution's name: the same for every run of the step that hands it off,
    so Step Functions starts it once (a Standard machine refuses a second execution of a
    name), and at most 80 characters of [A-Za-z0-9_-] whatever the key."""
    digest = hashlib.sha256(key.encode()).hexdigest()[:16]
    return f"tg-{_slug(task_id, 40)}-{digest}"


@dataclass(frozen=True)
class StepFunctionsExecution:
    """An execution of another state machine (``states:startExecution.sync:2``); its
    output is the result's ``output``."""

    state_machine_arn: str
    input: Any = None

    def spec(self, task_id: str, key: str) -> JobSpec:
        name = child_name(task_id, key)
        params = {"StateMachineArn": self.state_machine_arn, "Name": name, "Input": self.input or {}}
        return JobSpec(JobKind.EXECUTION, self.state_machine_arn, params, name=name)


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
        name = _slug(self.job_name or f"taskgate-{key}", 128)
        params = {
            "JobName": name,
            "JobQueue": self.job_queue,
            "JobDefinition": self.job_definition,
            "Parameters": dict(self.parameters),
            "ContainerOverrides": dict(self.container_overrides),
        }
        return JobSpec(JobKind.BATCH, self.job_queue, params, name=name)


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


@dataclass(frozen=True)
class GlueJobRun:
    """A run of an AWS Glue job (``glue:startJobRun.sync``); the result's ``output`` is
    the run as GetJobRun tells it."""

    job_name: str
    arguments: Mapping[str, str] = field(default_factory=dict)

    def spec(self, task_id: str, key: str) -> JobSpec:
        params = {"JobName": self.job_name, "Arguments": dict(self.arguments)}
        return JobSpec(JobKind.GLUE, self.job_name, params, name=self.job_name)


@dataclass(frozen=True)
class Callback:
    """Any outside system, through a callback URL: single-use, unguessable, expiring with
    the wait. ``send(url)`` hands it to the system (it runs once the URL is stored, before
    the step ends); the system POSTs JSON to it, needing no AWS credentials:

        {"status": "succeeded", "output": …}
        {"status": "failed", "error": "…", "message": "…"}
        {"status": "heartbeat", "message": "…", "progress": 3, "total": 10}

    A heartbeat shows its message as the task's statusMessage. With ``heartbeat_seconds``
    the wait fails when none arrives for that long."""

    send: Callable[[str], None] | None = None
    timeout_seconds: int | None = None
    heartbeat_seconds: int | None = None

    def spec(self, task_id: str, key: str) -> JobSpec:
        return JobSpec(
            JobKind.CALLBACK,
            "",
            {},
            timeout_seconds=self.timeout_seconds,
            heartbeat_seconds=self.heartbeat_seconds,
            send=self.send,
        )


Job = StepFunctionsExecution | BatchJob | EcsTask | GlueJobRun | Callback


@dataclass(frozen=True)
class JobResult:
    """How a handed-off job ended: ``output`` (what it produced) when ``ok``; ``error``
    and ``reason`` otherwise."""

    key: str
    ok: bool
    output: Any = None
    error: str | None = None
    reason: str | None = None


class JobFailed(ToolError):
    """A handed-off job failed (or did not finish in the task's time). Uncaught, the
    tool's result is an error saying which job failed and why."""

    def __init__(self, message: str, result: JobResult) -> None:
        super().__init__(message)
        self.result = result


def read_result(key: str, kind: JobKind, label: str, raw: Any, *, check: bool) -> JobResult:
    outcome = JobOutcome.read(kind, raw)
    result = JobResult(key, outcome.ok, outcome.output, outcome.error, outcome.reason)
    if check and not outcome.ok:
        raise JobFailed(outcome.failure_message(label), result)
    return result
