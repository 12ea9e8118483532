"""The task as the domain sees it: one record, whichever protocol era created it."""

from __future__ import annotations

import enum
import hashlib
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..jobs.vocabulary import CallbackSlot, PendingJob


class TaskStatus(enum.StrEnum):
    WORKING = "working"
    INPUT_REQUIRED = "input_required"
    COMPLETED = "completed"
    FAILED = "failed"
    CANCELLED = "cancelled"

    @property
    def terminal(self) -> bool:
        return self in TERMINAL


TERMINAL = frozenset({TaskStatus.COMPLETED, TaskStatus.FAILED, TaskStatus.CANCELLED})
ACTIVE = frozenset({TaskStatus.WORKING, TaskStatus.INPUT_REQUIRED})


class Outcome(enum.StrEnum):
    """How the work ended, stored once and mapped per era.

    The 2026-07-28 extension reports a tool result with ``isError: true`` as
    ``completed``; 2025-11-25 reports it as ``failed``. Keeping the outcome apart
    from the status lets each wire layer map it without rewriting the row.
    """

    SUCCESS = "success"
    TOOL_ERROR = "tool_error"
    PROTOCOL_ERROR = "protocol_error"


@dataclass(frozen=True)
class Expiry:
    """When a task's row may go, and the ``ttl`` that tells the client so."""

    expires_at_ms: int
    ttl_ms: int


@dataclass(frozen=True)
class Progress:
    """The numbers a tool last reported (``ctx.progress``), as MCP's progress notification
    carries them: ``progress`` grows from report to report; ``total`` may be unknown."""

    progress: float
    total: float | None = None
    message: str | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"progress": self.progress}
        if self.total is not None:
            out["total"] = self.total
        if self.message is not None:
            out["message"] = self.message
        return out

    @classmethod
    def from_json(cls, raw: dict[str, Any]) -> Progress:
        return cls(raw["progress"], raw.get("total"), raw.get("message"))


@dataclass(frozen=True)
class LogLine:
    """One ``ctx.log`` line a task keeps for its client (``notifications/message`` params)."""

    level: str
    data: Any

    def to_json(self) -> dict[str, Any]:
        return {"level": self.level, "data": self.data}


@dataclass(frozen=True)
class NewTask:
    """The task a caller asks for, as its request was checked at the edge: what
    ``TaskService.create`` makes a ``TaskRecord`` of."""

    owner: str
    tool: str
    arguments: dict[str, Any]
    # Their size as the caller measured it when it checked the request (the arguments and
    # the answers the task inherits) against the limits, once; None: the service checks them.
    arguments_bytes: int | None = None
    # The TTL the client asked for (None: the default; capped at the maximum).
    requested_ttl_ms: int | None = None
    # Answers the task inherits (2026-07-28: a tools/call's inputResponses), kept in the row.
    input_responses: dict[str, Any] = field(default_factory=dict)
    progress_token: str | int | None = None
    client_capabilities: dict[str, Any] | None = None
    # A plain call's hidden task: the id its call claimed (domain/calls.py).
    task_id: str | None = None
    # The least severe log line kept for the caller (None: none).
    log_level: str | None = None
    # The caller must come back within this (TaskRecord.watched_until_ms); None: not watched.
    watch_ms: int | None = None


@dataclass(frozen=True)
class TaskRecord:
    """One task's row, as the domain reads it."""

    task_id: str
    owner: str
    tool: str
    arguments: dict[str, Any]
    status: TaskStatus
    created_at_ms: int
    last_updated_at_ms: int
    # What clients are told: expires_at_ms - created_at_ms (it grows while the task lives).
    ttl_ms: int
    poll_interval_ms: int
    expires_at_ms: int
    # The effective TTL granted at creation: each write that shows the task alive keeps
    # it for at least this long after, so a running task never expires under its client.
    retention_ms: int
    status_message: str | None = None
    input_requests: dict[str, Any] = field(default_factory=dict)
    input_responses: dict[str, Any] = field(default_factory=dict)
    result: dict[str, Any] | None = None
    error: dict[str, Any] | None = None
    outcome: Outcome | None = None
    # The execution StartExecution gave this task, on whichever state machine started it
    # (None in rows written before it was stored: the current machine's, by its name).
    execution_arn: str | None = None
    task_token: str | None = None
    checkpoint: Any = None
    # 2025-11-25: the tools/call request's progressToken stays valid for the task's life.
    progress_token: str | int | None = None
    # Results too large for the row live in the result bucket under this key.
    result_ref: str | None = None
    # What the client declared it can answer (elicitation, sampling, roots): a tool never
    # asks for anything else. None: not recorded (rows written before it was), anything goes.
    client_capabilities: dict[str, Any] | None = None
    # What the execution's history holds so far, as counted by the worker (domain/history.py).
    history_events: int = 0
    # The tool's last progress numbers and how many reports it has made: a stream that
    # sent report n sends the next one only when the count passes n.
    progress: Progress | None = None
    progress_count: int = 0
    # The tool's latest log lines (domain/progress.py bounds them) and how many it has
    # logged in all: line i of ``log_lines`` is line ``log_count - len(log_lines) + i``.
    log_lines: tuple[LogLine, ...] = ()
    log_count: int = 0
    # The least severe level of log line the caller wants kept; None: none are.
    log_level: str | None = None
    # A plain call's hidden task: cancelled when its caller has not come back by then
    # (epoch ms; every resumed stream moves it on). None: nobody is watched for.
    watched_until_ms: int | None = None
    # The last round of a plain call this hidden task answered (protocol/calls/rounds.py):
    # each round's requestState names the next number, and is taken once.
    call_round: int = 0
    # The job the task waits on while it waits (jobs/vocabulary.py), and every job's outcome
    # by its hand-off key, kept for the task's life (the tool reads them when it runs again).
    job: PendingJob | None = None
    job_outcomes: dict[str, Any] = field(default_factory=dict)
    # When a read last asked the job's service for its status (epoch ms): reads do so at
    # most once per JOB_STATUS_INTERVAL_MS, however many clients poll.
    job_checked_at_ms: int | None = None
    # A callback job's URL secret (hashed) and, once parked on it, the task token.
    callback: CallbackSlot | None = None

    def expired(self, now_ms: int) -> bool:
        return self.expires_at_ms <= now_ms

    def caller_gone(self, now_ms: int) -> bool:
        """A watched task whose caller did not come back in time (it hung up for good)."""
        return self.watched_until_ms is not None and self.watched_until_ms <= now_ms

    @property
    def parking(self) -> str | None:
        """A name for the questions the task waits on now (None: it waits on none): each
        time it parks on questions it gets a new task token, so this changes with them."""
        if self.status is not TaskStatus.INPUT_REQUIRED or not self.task_token:
            return None
        return hashlib.sha256(b"taskgate/parking:" + self.task_token.encode()).hexdigest()[:32]

    def kept_alive(self, now_ms: int) -> Expiry:
        expires = max(self.expires_at_ms, now_ms + self.retention_ms)
        return Expiry(expires_at_ms=expires, ttl_ms=expires - self.created_at_ms)
