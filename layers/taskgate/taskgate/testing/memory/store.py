"""``TaskStore`` over a dict: the domain's transition table checked on every change, as the
DynamoDB store's condition expressions check it, and the item size DynamoDB refuses."""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from ...domain.errors import DependencyFailure, TaskAlreadyExists, TransitionRejected
from ...domain.limits import ROW_FIXED_BYTES, json_size, map_size, row_size
from ...domain.model import ACTIVE, Expiry, Outcome, TaskRecord, TaskStatus
from ...domain.progress import ProgressReport, progress_key
from ...domain.transitions import Op, check, target
from ...jobs.vocabulary import CallbackSlot, PendingJob

if TYPE_CHECKING:
    pass


# DynamoDB refuses an item over 400 KB (a ValidationException, which the adapters
# translate into DependencyFailure); the fakes refuse the same writes.
DYNAMODB_ITEM_BYTES = 409_600


def refuse_oversize(size: int) -> None:
    if size > DYNAMODB_ITEM_BYTES:
        raise DependencyFailure(
            "AWS refused the request (ValidationException: Item size has exceeded the maximum allowed size)"
        )


class MemoryTaskStore:
    """``TaskStore`` over a dict. Every change is checked against the domain's
    transition table (``taskgate.domain.transitions``), as the DynamoDB store's
    condition expressions are; tests/integration/test_transitions.py runs the same
    matrix against both.

    ``capacity`` bounds how many rows it keeps (oldest dropped first), so a long run
    measures the server's memory rather than the fake table's.
    """

    def __init__(self, capacity: int | None = None) -> None:
        self.records: dict[str, TaskRecord] = {}
        # The job request each waiting task handed to the state machine (its jobRequest).
        self.job_requests: dict[str, dict[str, Any]] = {}
        self._active: dict[str, set[str]] = {}
        # DynamoDB's owner index is eventually consistent: with ``index_lags`` on, tasks
        # created since are missing from ``list_for_owner`` until ``catch_up_index``.
        self.index_lags = False
        self._unindexed: set[str] = set()
        self._capacity = capacity
        self._lock = threading.Lock()
        # The highest progress value sent, by (task, progress token): claim_progress.
        self.progress_sent: dict[tuple[str, str], float] = {}

    # -- helpers (not part of the port) -------------------------------------------
    def _put(self, record: TaskRecord) -> None:
        # ROW_FIXED_BYTES is taskgate's allowance for what it does not count; the
        # fields themselves are measured as DynamoDB stores them.
        refuse_oversize(row_size(record) - ROW_FIXED_BYTES)
        self.records[record.task_id] = record
        ids = self._active.setdefault(record.owner, set())
        if record.status in ACTIVE:
            ids.add(record.task_id)
        else:
            ids.discard(record.task_id)

    def put(self, record: TaskRecord) -> None:
        """Write a row as-is (test and bench setup)."""
        with self._lock:
            self._put(record)

    def finish_all(self) -> None:
        """Complete every active task (bench setup between batches)."""
        with self._lock:
            for ids in self._active.values():
                for task_id in list(ids):
                    record = self.records[task_id]
                    self.records[task_id] = dataclasses.replace(record, status=TaskStatus.COMPLETED)
                ids.clear()

    def _row(self, op: Op, task_id: str) -> TaskRecord:
        record = self.records.get(task_id)
        if record is None:
            raise TransitionRejected(task_id)
        check(op, task_id, record.status)
        return record

    def park(self, task_id: str, token: str, now_ms: int) -> None:
        """What the state machine's AwaitInput state writes: parked on ``token``, only
        if still working with questions stored (a cancel wins)."""
        with self._lock:
            record = self._row(Op.PARK, task_id)
            if not record.input_requests:
                raise TransitionRejected(task_id)
            self._put(
                dataclasses.replace(
                    record,
                    status=target(Op.PARK, record.status),
                    task_token=token,
                    last_updated_at_ms=now_ms,
                    status_message="Waiting for input from the client.",
                )
            )

    def park_callback(self, task_id: str, key: str, token: str, now_ms: int) -> None:
        """What the state machine's AwaitCallback state writes: parked on ``token``, only
        while working on the job ``key`` with no outcome for it yet (a cancel, or a
        callback that came first, wins)."""
        with self._lock:
            record = self._row(Op.WAIT, task_id)
            if record.job is None or record.job.key != key or key in record.job_outcomes:
                raise TransitionRejected(task_id)
            slot = record.callback or CallbackSlot("", 0, key)
            self._put(
                dataclasses.replace(
                    record, callback=dataclasses.replace(slot, token=token), last_updated_at_ms=now_ms
                )
            )

    # -- TaskStore ----------------------------------------------------------------
    def create(self, record: TaskRecord) -> None:
        with self._lock:
            if record.task_id in self.records:
                raise TaskAlreadyExists(record.task_id)
            self._put(record)
            if self.index_lags:
                self._unindexed.add(record.task_id)
            if self._capacity is not None and len(self.records) > self._capacity:
                oldest = next(iter(self.records))
                gone = self.records.pop(oldest)
                self._active.get(gone.owner, set()).discard(oldest)

    def get(self, task_id: str, *, consistent: bool = True) -> TaskRecord | None:
        return self.records.get(task_id)

    def list_for_owner(
        self, owner: str, *, limit: int, cursor: str | None
    ) -> tuple[list[TaskRecord], str | None]:
        start = 0
        if cursor is not None:
            if not cursor.isdigit():
                raise ValueError("malformed cursor")
            start = int(cursor)
        mine = sorted(
            (r for r in self.records.values() if r.owner == owner and r.task_id not in self._unindexed),
            key=lambda r: r.created_at_ms,
            reverse=True,
        )
        page = mine[start : start + limit]
        return page, (str(start + limit) if start + limit < len(mine) else None)

    def catch_up_index(self) -> None:
        """The owner index has every task now."""
        self._unindexed.clear()

    def count_active(self, owner: str, up_to: int) -> int:
        return min(len(self._active.get(owner, ())), up_to)

    def list_active(self) -> list[str]:
        """Ids of every live task (tests)."""
        return [task_id for ids in self._active.values() for task_id in ids]

    def active_pages(self, page_size: int = 1000) -> Iterator[list[str]]:
        with self._lock:
            ids = self.list_active()
        for start in range(0, len(ids), page_size):
            yield ids[start : start + page_size]

    def get_many(
        self, task_ids: list[str], *, consistent: bool = True, whole: bool = False
    ) -> list[TaskRecord]:
        assert len(task_ids) <= 100
        found = [
            r for r in (self.records.get(task_id) for task_id in dict.fromkeys(task_ids)) if r is not None
        ]
        if whole:
            return found
        return [
            dataclasses.replace(
                r, arguments={}, result=None, checkpoint=None, input_requests={}, input_responses={}
            )
            for r in found
        ]

    def report_progress(
        self, task_id: str, report: ProgressReport, now_ms: int, alive: Expiry, *, check_caller: bool = True
    ) -> None:
        with self._lock:
            record = self._row(Op.PROGRESS, task_id)
            if check_caller and record.caller_gone(now_ms):
                raise TransitionRejected(task_id)
            self._put(
                _touched(
                    record,
                    now_ms,
                    alive,
                    status_message=report.message,
                    progress=report.progress if report.progress is not None else record.progress,
                    progress_count=report.progress_count,
                    log_lines=report.log_lines,
                    log_count=report.log_count,
                )
            )

    def claim_progress(self, task_id: str, token: str | int, value: float) -> bool:
        with self._lock:
            if task_id not in self.records:
                return False
            key = (task_id, progress_key(token))
            if key in self.progress_sent and self.progress_sent[key] >= value:
                return False
            self.progress_sent[key] = value
            return True

    def watch(self, task_id: str, until_ms: int | None) -> None:
        with self._lock:
            record = self.records.get(task_id)
            if record is None or record.status.terminal:
                raise TransitionRejected(task_id)
            self._put(dataclasses.replace(record, watched_until_ms=until_ms))

    def take_round(self, task_id: str, owner: str, number: int, watch_until_ms: int | None) -> TaskRecord:
        with self._lock:
            record = self.records.get(task_id)
            if record is None or record.owner != owner or record.call_round >= number:
                raise TransitionRejected(task_id)
            watched = record.watched_until_ms if watch_until_ms is None else watch_until_ms
            taken = dataclasses.replace(record, call_round=number, watched_until_ms=watched)
            self._put(taken)
            return taken

    def ask(
        self, task_id: str, requests: dict[str, Any], now_ms: int, alive: Expiry, *, history_events: int = 0
    ) -> None:
        with self._lock:
            record = self._row(Op.ASK, task_id)
            used = record.history_events + history_events
            self._put(_touched(record, now_ms, alive, input_requests=dict(requests), history_events=used))

    def save_checkpoint(
        self, task_id: str, state: Any, now_ms: int, alive: Expiry, *, history_events: int = 0
    ) -> None:
        with self._lock:
            record = self._row(Op.CHECKPOINT, task_id)
            used = record.history_events + history_events
            self._put(_touched(record, now_ms, alive, checkpoint=state, history_events=used))

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
        op = Op.COMPLETE if status is TaskStatus.COMPLETED else Op.FAIL
        with self._lock:
            try:
                record = self._row(op, task_id)
            except TransitionRejected:
                return False
            changes: dict[str, Any] = {
                "status": target(op, record.status),
                "outcome": outcome,
                "result": result,
                "error": error,
                "result_ref": result_ref,
                "task_token": None,
                "input_requests": {},
                "callback": _tokenless(record.callback),
            }
            if message is not None:
                changes["status_message"] = message
            self._put(_touched(record, now_ms, alive, **changes))
            return True

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
        # One atomic step, as DynamoDB's conditional write is: whether this answer is
        # the last is decided here, under the lock, not by the caller's earlier read.
        with self._lock:
            record = self._row(Op.ANSWER, task_id)
            if record.task_token != task_token or not set(responses) <= set(record.input_requests):
                raise TransitionRejected(task_id)
            answered = {**record.input_responses, **responses}
            if map_size(answered) > max_answer_bytes:
                raise TransitionRejected(task_id)
            left = {k: v for k, v in record.input_requests.items() if k not in responses}
            if left:
                self._put(_touched(record, now_ms, alive, input_responses=answered, input_requests=left))
                return False
            check(Op.RESUME, task_id, record.status)
            self._put(
                _touched(
                    record,
                    now_ms,
                    alive,
                    status=target(Op.RESUME, record.status),
                    status_message="Resuming with the client's answers.",
                    input_responses=answered,
                    input_requests={},
                    task_token=None,
                )
            )
            return True

    def cancel(self, task_id: str, message: str, now_ms: int, alive: Expiry) -> TaskRecord:
        with self._lock:
            record = self._row(Op.CANCEL, task_id)
            cancelled = _touched(
                record,
                now_ms,
                alive,
                status=target(Op.CANCEL, record.status),
                status_message=message,
                task_token=None,
                input_requests={},
                callback=_tokenless(record.callback),
            )
            self._put(cancelled)
            return cancelled

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
        with self._lock:
            record = self._row(Op.HAND_OFF, task_id)
            refuse_oversize(json_size(request))
            self.job_requests[task_id] = request
            self._put(
                _touched(
                    record,
                    now_ms,
                    alive,
                    job=job,
                    callback=callback,
                    job_checked_at_ms=None,
                    status_message=job.waiting_message(),
                    history_events=record.history_events + history_events,
                )
            )

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
        with self._lock:
            record = self._row(Op.JOB_DONE, task_id)
            if record.job is None or record.job.key != key or key in record.job_outcomes:
                raise TransitionRejected(task_id)
            slot = record.callback
            if secret_hash is not None and not _callback_open(slot, key, secret_hash, now_ms):
                raise TransitionRejected(task_id)
            token = slot.token if slot is not None else None
            if secret_hash is None:
                # The state machine's RecordJobOutcome removes the request; a callback's
                # delivery leaves it (small) for the LoadJob it may have overtaken.
                self.job_requests.pop(task_id, None)
            self._put(
                _touched(
                    record,
                    now_ms,
                    alive,
                    job=None,
                    job_outcomes={**record.job_outcomes, key: outcome},
                    # Single use: the URL is refused from now on (its hash stays, so a
                    # late caller is told it was used rather than that it never existed).
                    callback=dataclasses.replace(slot, expires_at_ms=0, token=None) if slot else None,
                    status_message="Resuming with the job's outcome.",
                )
            )
            return token

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
        with self._lock:
            record = self._row(Op.JOB_STATUS, task_id)
            if record.job is None or record.job.key != key:
                raise TransitionRejected(task_id)
            if secret_hash is not None and not _callback_open(record.callback, key, secret_hash, now_ms):
                raise TransitionRejected(task_id)
            checked = record.job_checked_at_ms
            if checked_before_ms is not None and checked is not None and checked > checked_before_ms:
                raise TransitionRejected(task_id)
            told: dict[str, Any] = {}
            if report is not None:
                told = {
                    "progress_count": report.progress_count,
                    "log_lines": report.log_lines,
                    "log_count": report.log_count,
                }
                if report.progress is not None:
                    told["progress"] = report.progress
            self._put(
                _touched(record, now_ms, alive, status_message=message, job_checked_at_ms=now_ms, **told)
            )


def _tokenless(slot: CallbackSlot | None) -> CallbackSlot | None:
    """A callback slot without its task token: a task that ended holds no capability."""
    return dataclasses.replace(slot, token=None) if slot is not None else None


def _callback_open(slot: CallbackSlot | None, key: str, secret_hash: str, now_ms: int) -> bool:
    return (
        slot is not None
        and slot.key == key
        and slot.secret_hash == secret_hash
        and slot.expires_at_ms > now_ms
    )


def _touched(record: TaskRecord, now_ms: int, alive: Expiry, **changes: Any) -> TaskRecord:
    return dataclasses.replace(
        record,
        last_updated_at_ms=now_ms,
        expires_at_ms=alive.expires_at_ms,
        ttl_ms=alive.ttl_ms,
        **changes,
    )
