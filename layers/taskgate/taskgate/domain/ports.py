"""What the domain needs from the outside world, as protocols.

The DynamoDB, Step Functions and S3 adapters implement these (and translate AWS
errors into ``ServiceUnavailable`` / ``DependencyFailure``); the unit tests use
in-memory fakes (tests/fakes.py) that honour the same transition table.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, Protocol

from .model import Expiry, Outcome, TaskRecord, TaskStatus
from .progress import ProgressReport

if TYPE_CHECKING:
    from ..jobs.vocabulary import CallbackSlot, PendingJob


class TaskStore(Protocol):
    def create(self, record: TaskRecord) -> None:
        """Durably create the row; raise TaskAlreadyExists if the id is taken."""

    def get(self, task_id: str, *, consistent: bool = True) -> TaskRecord | None:
        """The row, or None when there is none. Strongly consistent unless
        ``consistent=False`` (half the price; it may lag a recent write by about a
        second: for readers that will simply look again, like a waiting stream)."""

    def list_for_owner(
        self, owner: str, *, limit: int, cursor: str | None
    ) -> tuple[list[TaskRecord], str | None]:
        """One page of the owner's tasks, newest first, and the next page's cursor.
        Raise ValueError for a cursor this store did not issue."""

    def count_active(self, owner: str, up_to: int) -> int:
        """The owner's live tasks, counted no further than ``up_to``."""

    def active_pages(self) -> Iterator[list[str]]:
        """Ids of all live tasks, a page at a time as the store reads them."""

    def get_many(
        self, task_ids: list[str], *, consistent: bool = True, whole: bool = False
    ) -> list[TaskRecord]:
        """Reads of up to 100 tasks in one batch (missing ones left out), strongly consistent
        unless ``consistent=False``; without their payloads (arguments, result, checkpoint,
        questions and answers: for the sweeper, which judges tasks by their status and
        times) unless ``whole`` (a listen stream, which shows them as ``tasks/get`` would)."""

    def report_progress(
        self, task_id: str, report: ProgressReport, now_ms: int, alive: Expiry, *, check_caller: bool = True
    ) -> None:
        """Write the statusMessage, progress numbers and log window while working; raise
        TransitionRejected otherwise, or (``check_caller``) when the task is watched for a
        caller that did not come back by ``now_ms`` (``TaskRecord.caller_gone``)."""

    def watch(self, task_id: str, until_ms: int | None) -> None:
        """Expect the task's caller back by ``until_ms`` (None: stop watching); raise
        TransitionRejected unless the task is active."""

    def take_round(self, task_id: str, owner: str, number: int, watch_until_ms: int | None) -> TaskRecord:
        """Take round ``number`` of the owner's task's plain call (``call_round`` < ``number``
        becomes ``number``), and (``watch_until_ms``) expect its caller back by then, in one
        write whatever the task's status; return the row as written. Raise TransitionRejected,
        changing nothing, when the task is missing, another owner's, or had that round."""

    def claim_progress(self, task_id: str, token: str | int, value: float) -> bool:
        """Raise the highest progress value sent for ``token`` on this task to ``value``, by a
        conditional write: True when it was lower (or none was sent), so that ``value`` may be
        sent now; False when ``value`` is not above it (or the row is gone)."""

    def ask(
        self, task_id: str, requests: dict[str, Any], now_ms: int, alive: Expiry, *, history_events: int = 0
    ) -> None:
        """Store outstanding questions while working, and add ``history_events`` to the
        task's count (domain/history.py); raise TransitionRejected otherwise."""

    def save_checkpoint(
        self, task_id: str, state: Any, now_ms: int, alive: Expiry, *, history_events: int = 0
    ) -> None:
        """Persist a tool checkpoint while active, adding ``history_events`` to the task's
        count; raise TransitionRejected otherwise."""

    def finish(
        self,
        task_id: str,
        *,
        status: TaskStatus,
        outcome: Outcome,
        result: dict[str, Any] | None,
        error: dict[str, Any] | None,
        message: str | None,
        now_ms: int,
        alive: Expiry,
        result_ref: str | None = None,
    ) -> bool:
        """Move an active task to a terminal status; False if it was already terminal."""

    def answer_inputs(
        self,
        task_id: str,
        responses: dict[str, Any],
        *,
        task_token: str,
        now_ms: int,
        alive: Expiry,
        max_answer_bytes: int,
        likely_last: bool = False,
    ) -> bool:
        """Record answers to outstanding questions in one conditional write, and return
        True when that write answered the last outstanding question: the same write
        moves the task back to working (RESUME), so exactly one answer resumes a task
        however many arrive at once. Otherwise it only records them (ANSWER).

        Raise TransitionRejected, changing nothing, if the task is no longer parked on
        ``task_token``, an answered key is no longer outstanding, or the answers the
        task holds would pass ``max_answer_bytes``. ``likely_last`` is the caller's
        guess from an earlier read (which write to try first), never the decision."""

    def cancel(self, task_id: str, message: str, now_ms: int, alive: Expiry) -> TaskRecord:
        """Move an active task to cancelled and return it as it now is.
        Raise TransitionRejected if it was not active."""

    def hand_off(
        self,
        task_id: str,
        job: PendingJob,
        request: dict[str, Any],
        now_ms: int,
        alive: Expiry,
        *,
        callback: CallbackSlot | None = None,
        history_events: int = 0,
    ) -> None:
        """Store the job the tool hands off (``request``: what the state machine starts it
        with; ``callback``: its URL's slot) while working, replacing one an earlier attempt
        of the step stored, with the job's waiting message; raise TransitionRejected
        otherwise."""

    def record_job_outcome(
        self,
        task_id: str,
        key: str,
        outcome: dict[str, Any],
        now_ms: int,
        alive: Expiry,
        *,
        secret_hash: str | None = None,
    ) -> str | None:
        """Record the outcome of the pending job ``key`` while working; the job is then no
        longer pending. With ``secret_hash`` (a callback URL's delivery) only while that is
        the pending callback's, unexpired at ``now_ms``. Return the task token the state
        machine waits on for the callback (None: not parked on it yet). Raise
        TransitionRejected, changing nothing, otherwise."""

    def note_job_status(
        self,
        task_id: str,
        key: str,
        message: str,
        now_ms: int,
        alive: Expiry,
        *,
        checked_before_ms: int | None = None,
        secret_hash: str | None = None,
        report: ProgressReport | None = None,
    ) -> None:
        """Set statusMessage from the pending job ``key``'s status while working: only if
        no status was noted after ``checked_before_ms`` (reads share one look at the
        job's service per interval), or (``secret_hash``) from its unexpired callback's
        heartbeat. With ``report``, its progress and log window too (no step runs while
        the task waits, so the look that won is their only writer). Raise
        TransitionRejected otherwise."""


class Workflow(Protocol):
    def execution_for(self, task_id: str) -> str:
        """The id the task's execution will have once started (kept in its row, so that a
        later Describe or Stop finds it wherever the workflow has moved since)."""

    def start(self, task_id: str, input_wait_seconds: int) -> str:
        """Start the durable execution for a task and return its id (``execution_for``'s);
        idempotent per task id.

        ``input_wait_seconds`` bounds how long the execution may stay parked for
        input: past the task's TTL nobody can answer it any more."""

    def resume(self, task_token: str) -> bool:
        """Resume an execution parked for input (or on a callback); False if the token is
        no longer valid."""

    def heartbeat(self, task_token: str) -> bool:
        """Tell an execution parked on a callback that its system is alive; False if the
        token is no longer valid."""

    def stop(self, task_id: str, reason: str, execution: str | None = None) -> None:
        """Stop the task's execution (``execution``: its stored id; None for rows written
        before ids were stored); a stopped or finished execution is not an error."""

    def status(self, task_id: str, execution: str | None = None) -> str | None:
        """RUNNING, SUCCEEDED, FAILED, TIMED_OUT or ABORTED; None if it never started."""


class BlobStore(Protocol):
    def put(self, key: str, data: bytes, *, keep_days: int) -> None:
        """Store ``data``; the store may delete it ``keep_days`` days after, not sooner."""

    def get(self, key: str) -> bytes:
        """The data; raise KeyError when nothing is stored under ``key`` (any more)."""

    def get_range(self, key: str, start: int, length: int) -> tuple[bytes, int]:
        """Up to ``length`` (>= 1) bytes from ``start``, and the object's whole size;
        no bytes when ``start`` is at or past the end. KeyError when nothing is stored."""

    def delete(self, key: str) -> None: ...


class Clock(Protocol):
    def __call__(self) -> int:
        """Milliseconds since the epoch."""
