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

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from ..text import cut
from .kinds import KINDS
from .kinds import JobKind as JobKind  # where the kinds' names are kept; named here too

# What the state machine stores when a job's output does not fit in the row.
OUTPUT_TOO_LARGE = "Taskgate.OutputTooLarge"
# What it stores when the job's wait ran past the task's time (TimeoutSeconds).
TIMED_OUT = ("States.Timeout", "States.HeartbeatTimeout")
# A reason read from a failed job is cut to this many bytes.
MAX_REASON_BYTES = 1_024


@dataclass(frozen=True)
class PendingJob:
    """The job a task waits on, as its row keeps it (small: no request parameters)."""

    key: str
    # Its kind's name in the registry (jobs/kinds.py).
    kind: str
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
        return KINDS[self.kind].noun

    @property
    def label(self) -> str:
        """How a person is told what the task waits on: the state machine (not the child
        execution, whose name is taskgate's), the Batch job, the ECS task definition, the
        Glue job, the callback's key: what its kind is told apart by."""
        named_by = KINDS[self.kind].named_by
        if named_by == "key":
            return f"the {self.noun} '{self.key}'"
        what = self.name or ""
        if named_by == "target" or not what:
            what = self.target.split(":")[6] if self.target.count(":") >= 6 else self.target
            what = what.rsplit("/", 1)[-1]
        return f"the {self.noun} {what}" if what else f"the {self.noun}"

    def waiting_message(self) -> str:
        return f"Waiting for {self.label}."

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "key": self.key,
            "kind": self.kind,
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
            kind=str(raw["kind"]),
            target=str(raw.get("target", "")),
            name=raw.get("name"),
            started_at_ms=int(raw.get("startedAt", 0)),
            deadline_ms=int(raw["deadline"]),
        )


@dataclass(frozen=True)
class JobSpec:
    """What ``hand_off`` asks the state machine to run (built by each kind's job class)."""

    # Its kind's name in the registry (jobs/kinds.py).
    kind: str
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


class Job(Protocol):
    """What a tool hands off (``ctx.hand_off``): a job of some kind, as its spec."""

    def spec(self, task_id: str, key: str) -> JobSpec: ...


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
            "kind": self.job.kind,
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
    def read(cls, kind: str, raw: Any) -> JobOutcome:
        """How a job of ``kind`` ended, from what the state machine (or a callback) stored."""
        if not isinstance(raw, dict):
            return cls(ok=False, error="Taskgate.BadOutcome", reason="The job's outcome could not be read.")
        found = KINDS[kind]
        if "Error" in raw:
            return cls(ok=False, error=str(raw["Error"]), reason=_reason(found.reasons, raw.get("Cause")))
        output = raw.get("output")
        failed = found.failed_output(output) if found.failed_output is not None else None
        if failed is not None:
            error, reason = failed
            return cls(ok=False, output=output, error=error, reason=reason)
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


def slug(text: str, limit: int) -> str:
    """``text`` as a service accepts it in a name: [A-Za-z0-9_-], at most ``limit`` characters."""
    return re.sub(r"[^A-Za-z0-9_-]", "-", text)[:limit]


def lower_keys(value: Any) -> Any:
    """``value`` with every dict key lower-cased (the services and Step Functions spell them
    differently): what a kind's readers are given."""
    if isinstance(value, dict):
        return {str(k).lower(): lower_keys(v) for k, v in value.items()}
    if isinstance(value, list):
        return [lower_keys(v) for v in value]
    return value


def _reason(reasons: Callable[[dict[str, Any]], list[str]] | None, cause: Any) -> str | None:
    """A readable reason from a failure's Cause: the service's own words where the Cause is
    its description of the job (JSON, read by the kind's ``reasons``), the Cause itself
    otherwise."""
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
    parts = reasons(lower_keys(parsed)) if reasons is not None else []
    text = "; ".join(parts) if parts else json.dumps(parsed, ensure_ascii=False)
    return cut(text, MAX_REASON_BYTES)
