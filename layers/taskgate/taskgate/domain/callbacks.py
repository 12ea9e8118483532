"""Callback URLs: how an outside system ends a job a tool handed off (``tools.jobs.Callback``).

A URL is ``<public url>/callbacks/<task id>?secret=<secret>``: 256 random bits, of which
the row keeps only a SHA-256 hash, good for one outcome and only until the wait's
deadline. Whoever holds it can end that one wait (as a task token can), and nothing else:
it needs no AWS credentials and no sign-in. The secret travels in the query string, which
the API's access log leaves out (it logs the path), or as ``Authorization: Bearer`` (read
when the query has none).

A delivery is one conditional write (the hash, its expiry, the task still working on
that job): the first outcome wins, a late or repeated one changes nothing and is told so.
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import secrets
import unicodedata
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from ..jobs.vocabulary import CallbackSlot
from ..text import cut
from .ending import TaskEnder
from .errors import TransitionRejected
from .limits import MAX_STATUS_MESSAGE_BYTES, json_size
from .model import TaskRecord
from .ports import Clock, TaskStore, Workflow

logger = logging.getLogger(__name__)

# What one delivery may carry (its output is kept in the task's row).
MAX_CALLBACK_OUTPUT_BYTES = 65_536
# Far above a task id (a UUID), far below DynamoDB's 2,048-byte key: a longer one names no task,
# and asking the table would be a ValidationException (a 500), not a 404.
MAX_TASK_ID_BYTES = 256


def new_secret() -> str:
    return secrets.token_urlsafe(32)


def hash_secret(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


def callback_url(base: str, task_id: str, secret: str) -> str:
    return f"{base.rstrip('/')}/callbacks/{task_id}?secret={secret}"


class Delivery(BaseModel):
    """What the outside system POSTs."""

    model_config = ConfigDict(extra="forbid")

    status: Literal["succeeded", "failed", "heartbeat"]
    output: Any = None
    error: str | None = Field(default=None, max_length=256)
    message: str | None = Field(default=None, max_length=4096)
    progress: float | None = Field(default=None, allow_inf_nan=False)
    total: float | None = Field(default=None, allow_inf_nan=False)

    @field_validator("error", "message")
    @classmethod
    def _readable(cls, text: str | None) -> str | None:
        # Shown to the task's client as its status or its error: no control or format
        # characters (a terminal escape, a bidi override) from an outside system.
        if text is None:
            return None
        return "".join(" " if unicodedata.category(ch) in ("Cc", "Cf") else ch for ch in text)


@dataclass(frozen=True)
class Reply:
    """The HTTP answer to a delivery."""

    status: int
    body: dict[str, Any]


def _refused(status: int, message: str) -> Reply:
    return Reply(status, {"error": message})


class CallbackService:
    def __init__(self, store: TaskStore, workflow: Workflow, clock: Clock) -> None:
        self._store = store
        self._workflow = workflow
        self._clock = clock
        self._ender = TaskEnder(store, workflow, clock)

    def deliver(self, task_id: str, secret: str, body: Any) -> Reply:
        plausible = secret and "#" not in task_id and len(task_id.encode()) <= MAX_TASK_ID_BYTES
        record = self._store.get(task_id) if plausible else None
        slot = record.callback if record is not None else None
        # The secret first: without it nothing about the task (not even that it exists) is said.
        if record is None or slot is None or not hmac.compare_digest(slot.secret_hash, hash_secret(secret)):
            return _refused(404, "No such callback.")
        now = self._clock()
        refused = _refusal(record, slot, now)
        if refused is not None:
            return refused
        try:
            delivery = Delivery.model_validate(body)
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(map(str, e['loc'])) or 'body'}: {e['msg']}" for e in exc.errors()
            )
            return _refused(400, f"Invalid callback: {problems}")
        if json_size(delivery.output) > MAX_CALLBACK_OUTPUT_BYTES:
            return _refused(413, f"The output is larger than {MAX_CALLBACK_OUTPUT_BYTES} bytes.")
        if delivery.status == "heartbeat":
            return self._heartbeat(record, slot, delivery, now)
        return self._outcome(record, slot, delivery, now)

    def _heartbeat(self, record: TaskRecord, slot: CallbackSlot, delivery: Delivery, now: int) -> Reply:
        message = cut(
            delivery.message or _fraction(delivery) or "The callback's system is working.",
            MAX_STATUS_MESSAGE_BYTES,
        )
        try:
            self._store.note_job_status(
                record.task_id, slot.key, message, now, record.kept_alive(now), secret_hash=slot.secret_hash
            )
        except TransitionRejected:
            return _refused(410, "This callback is no longer awaited.")
        if slot.token:
            self._workflow.heartbeat(slot.token)
        return Reply(200, {"status": "accepted"})

    def _outcome(self, record: TaskRecord, slot: CallbackSlot, delivery: Delivery, now: int) -> Reply:
        if delivery.status == "succeeded":
            outcome: dict[str, Any] = {"ok": True, "output": delivery.output}
        else:
            outcome = {
                "Error": delivery.error or "Callback.Failed",
                "Cause": delivery.message or "The outside system reported a failure.",
            }
        try:
            token = self._store.record_job_outcome(
                record.task_id, slot.key, outcome, now, record.kept_alive(now), secret_hash=slot.secret_hash
            )
        except TransitionRejected:
            # Another delivery, a cancel or the deadline landed first.
            return _refused(410, "This callback is no longer awaited.")
        if token is not None and not self._workflow.resume(token):
            # The execution is gone (stopped, timed out): the outcome can never be used.
            self._ender.fail(record, "The task's execution ended while it waited for the callback.")
        # Not parked yet: the state machine finds the outcome when it comes to wait.
        return Reply(200, {"status": "accepted"})


def _refusal(record: TaskRecord, slot: CallbackSlot, now: int) -> Reply | None:
    """Why a delivery with the right secret is refused now, if it is (410: it was good once)."""
    if record.status.terminal:
        return _refused(410, f"The task has ended ({record.status.value}); this callback changes nothing.")
    if slot.key in record.job_outcomes:
        return _refused(410, "This callback URL has been used.")
    if slot.expires_at_ms <= now:
        return _refused(410, "This callback URL has expired.")
    return None


def _fraction(delivery: Delivery) -> str | None:
    if delivery.progress is None:
        return None
    if delivery.total is not None:
        return f"{delivery.progress:g}/{delivery.total:g}"
    return f"{delivery.progress:g}"
