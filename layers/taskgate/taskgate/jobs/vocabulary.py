"""Work a task hands off: jobs that run elsewhere while the task waits at no compute.

A tool hands off a job (``ToolContext.hand_off``) and its step ends; the state machine
starts the job through a native integration that waits for it (``.sync`` for another
state machine, a Batch job, an ECS task or a Glue job run; ``.waitForTaskToken`` for a
callback URL), records the job's outcome in the task's row, and runs the tool again
from the top, which finds the outcome under the hand-off's key.

The row keeps, while a job is pending: ``job`` (a ``PendingJob``: what is waited on, for
the status shown by tasks/get, for a cancel and for the sweeper), ``jobRequest`` (what
the state machine passes to the service) and, for a callback, the hash of its secret.
A job's outcome is kept under its key in ``jobOutcomes`` for the task's life.
"""

from __future__ import annotations

import enum
import json
from dataclasses import dataclass
from typing import Any, Protocol

from ..text import cut

# What the state machine stores when a job's output does not fit in the row.
OUTPUT_TOO_LARGE = "Taskgate.OutputTooLarge"
# What it stores when the job's wait ran past the task's time (TimeoutSeconds).
TIMED_OUT = ("States.Timeout", "States.HeartbeatTimeout")
# A reason read from a failed job is cut to this many bytes.
MAX_REASON_BYTES = 1_024


class JobKind(enum.StrEnum):
    EXECUTION = "execution"  # states:startExecution.sync:2
    BATCH = "batch"  # batch:submitJob.sync
    ECS = "ecs"  # ecs:runTask.sync
    GLUE = "glue"  # glue:startJobRun.sync
    CALLBACK = "callback"  # a callback URL (.waitForTaskToken)


_NOUNS = {
    JobKind.EXECUTION: "state machine",
    JobKind.BATCH: "Batch job",
    JobKind.ECS: "ECS task",
    JobKind.GLUE: "Glue job",
    JobKind.CALLBACK: "callback",
}


@dataclass(frozen=True)
class PendingJob:
    """The job a task waits on, as its row keeps it (small: no request parameters)."""

    key: str
    kind: JobKind
    # What it runs on: the state machine's ARN, the Batch queue, the ECS cluster, the Glue
    # job's name ("" for a callback).
    target: str
    # The child execution's name (known before it starts: it is chosen here).
    name: str | None
    started_at_ms: int
    # Past this the sweeper fails the task and stops the job (the task's TTL or its
    # MaxTaskRuntimeSeconds, whichever comes first).
    deadline_ms: int

    @property
    def noun(self) -> str:
        return _NOUNS[self.kind]

    @property
    def label(self) -> str:
        """How a person is told what the task waits on: the state machine (not the child
        execution, whose name is taskgate's), the Batch job, the ECS task definition, the
        Glue job, the callback's key."""
        if self.kind is JobKind.CALLBACK:
            return f"the callback '{self.key}'"
        what = self.name or ""
        if self.kind in (JobKind.EXECUTION, JobKind.GLUE) or not what:
            what = self.target.split(":")[6] if self.target.count(":") >= 6 else self.target
            what = what.rsplit("/", 1)[-1]
        return f"the {self.noun} {what}" if what else f"the {self.noun}"

    def waiting_message(self) -> str:
        return f"Waiting for {self.label}."

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "key": self.key,
            "kind": self.kind.value,
            "target": self.target,
            "startedAt": self.started_at_ms,
            "deadline": self.deadline_ms,
        }
        if self.name is not None:
            out["name"] = self.name
        return out

    @classmethod
    def from_json(cls, raw: dict[str, Any]) -> PendingJob:
        return cls(
            key=str(raw["key"]),
            kind=JobKind(raw["kind"]),
            target=str(raw.get("target", "")),
            name=raw.get("name"),
            started_at_ms=int(raw.get("startedAt", 0)),
            deadline_ms=int(raw["deadline"]),
        )


@dataclass(frozen=True)
class JobRequest:
    """What the state machine needs to start and wait for the job (``jobRequest``)."""

    job: PendingJob
    # The service call's parameters, named as the integration names them.
    params: dict[str, Any]
    timeout_seconds: int
    # A callback's: the most seconds between heartbeats (0: none are needed).
    heartbeat_seconds: int = 0

    def to_json(self) -> dict[str, Any]:
        return {
            "key": self.job.key,
            "kind": self.job.kind.value,
            "timeoutSeconds": self.timeout_seconds,
            "heartbeatSeconds": self.heartbeat_seconds,
            "params": self.params,
        }


@dataclass(frozen=True)
class CallbackSlot:
    """A callback URL's secret (hashed: the secret itself is never stored), when it stops
    being accepted, and the task token once the state machine waits on it."""

    secret_hash: str
    # 0 once used: a URL is good for one outcome.
    expires_at_ms: int
    # The hand-off it answers.
    key: str
    token: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {"hash": self.secret_hash, "expiresAt": self.expires_at_ms, "key": self.key}


@dataclass(frozen=True)
class JobOutcome:
    """How a job ended, read from what the state machine (or a callback) stored."""

    ok: bool
    output: Any = None
    # For a failure: the error's name and a reason a person can read.
    error: str | None = None
    reason: str | None = None

    @property
    def timed_out(self) -> bool:
        return self.error in TIMED_OUT

    @classmethod
    def read(cls, kind: JobKind, raw: Any) -> JobOutcome:
        if not isinstance(raw, dict):
            return cls(ok=False, error="Taskgate.BadOutcome", reason="The job's outcome could not be read.")
        if "Error" in raw:
            return cls(ok=False, error=str(raw["Error"]), reason=_reason(kind, raw.get("Cause")))
        output = raw.get("output")
        if kind is JobKind.ECS:
            failed = _failed_container(output)
            if failed is not None:
                return cls(ok=False, output=output, error="Ecs.ContainerFailed", reason=failed)
        return cls(ok=True, output=output)

    def failure_message(self, job_label: str) -> str:
        if self.error == OUTPUT_TOO_LARGE:
            return f"{_capital(job_label)} finished, but {self.reason or 'its output is too large'}"
        if self.error == "States.HeartbeatTimeout":
            return f"{_capital(job_label)} sent no heartbeat in time ({self.error})."
        if self.timed_out:
            return f"{_capital(job_label)} did not finish within the task's time ({self.error})."
        detail = f": {self.reason}" if self.reason else ""
        return f"{_capital(job_label)} failed ({self.error}){detail}"


@dataclass(frozen=True)
class JobProgress:
    """A job's status as its service reports it, for the task's statusMessage."""

    message: str
    progress: float | None = None
    total: float | None = None


class Jobs(Protocol):
    """The services jobs run in (the adapters; in memory for tests)."""

    def describe(self, task_id: str, job: PendingJob, execution: str | None = None) -> JobProgress | None:
        """The job's status now; None when it cannot be found (not started yet, gone).
        ``execution``: the task's execution (its row keeps it), which started the job."""

    def stop(self, task_id: str, job: PendingJob, reason: str, execution: str | None = None) -> None:
        """Stop the job; one that has ended or was never started is not an error."""


def _capital(text: str) -> str:
    return text[:1].upper() + text[1:]


def _lower_keys(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k).lower(): _lower_keys(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_lower_keys(v) for v in value]
    return value


def _execution_reason(d: dict[str, Any]) -> list[str]:
    # DescribeExecution of the child: its own error and cause.
    return [str(d[k]) for k in ("status", "error", "cause") if d.get(k)]


def _batch_reason(d: dict[str, Any]) -> list[str]:
    found = d.get("container")
    container: dict[str, Any] = found if isinstance(found, dict) else {}
    parts = [str(d[k]) for k in ("status", "statusreason") if d.get(k)]
    if container.get("exitcode") not in (None, 0):
        parts.append(f"exit code {container['exitcode']}")
    if container.get("reason"):
        parts.append(str(container["reason"]))
    return parts


def _glue_reason(d: dict[str, Any]) -> list[str]:
    return [str(d[k]) for k in ("jobrunstate", "errormessage") if d.get(k)]


def _ecs_reason(d: dict[str, Any]) -> list[str]:
    return [str(d[k]) for k in ("laststatus", "stoppedreason", "stopcode") if d.get(k)]


# What each service's description of a failed job says, in the order a person reads it.
_REASONS = {
    JobKind.EXECUTION: _execution_reason,
    JobKind.BATCH: _batch_reason,
    JobKind.GLUE: _glue_reason,
    JobKind.ECS: _ecs_reason,
}


def _reason(kind: JobKind, cause: Any) -> str | None:
    """A readable reason from a failure's Cause: the services' own words where the Cause
    is their description of the job (JSON), the Cause itself otherwise."""
    if cause is None or cause == "":
        return None
    parsed: Any = cause
    if isinstance(cause, str):
        try:
            parsed = json.loads(cause)
        except ValueError:
            return cut(cause, MAX_REASON_BYTES)
    if not isinstance(parsed, dict):
        return cut(str(cause), MAX_REASON_BYTES)
    read = _REASONS.get(kind)
    parts = read(_lower_keys(parsed)) if read is not None else []
    text = "; ".join(parts) if parts else json.dumps(parsed, ensure_ascii=False)
    return cut(text, MAX_REASON_BYTES)


def _failed_container(output: Any) -> str | None:
    """ECS reports a task that stopped as done whatever its containers exited with; a
    container that exited non-zero (or never ran) fails the job here."""
    if not isinstance(output, dict):
        return None
    containers = _lower_keys(output).get("containers")
    if not isinstance(containers, list):
        return None
    for container in containers:
        if not isinstance(container, dict):
            continue
        code = container.get("exitcode")
        if code not in (None, 0):
            name = container.get("name") or "a container"
            reason = f"; {container['reason']}" if container.get("reason") else ""
            return f"{name} exited with code {code}{reason}"
    return None
