"""In-memory ports: the domain's ports (``taskgate.domain.ports``, ``taskgate.domain.sessions``)
over plain dicts, for tests and the bench. No DynamoDB item encoding, no botocore, no network.

``MemoryTaskStore`` honours the domain's transition table, as the DynamoDB store's
condition expressions do (tests/integration/test_transitions.py runs one matrix against
both); it and ``MemorySessionStore`` refuse an item DynamoDB would refuse (400 KB).
``MemorySignInStore`` is sign-in's (taskgate/auth). ``memory_ports`` hands them to the composition root (``taskgate.root.Taskgate``).
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..auth.state import ClientRecord, CodeRecord, CodeUse, GrantRecord, PendingSignIn, digest
from ..domain.calls import CallClaim
from ..domain.errors import DependencyFailure, TaskAlreadyExists, TransitionRejected
from ..domain.limits import ROW_FIXED_BYTES, json_size, map_size, row_size
from ..domain.model import ACTIVE, Expiry, Outcome, TaskRecord, TaskStatus
from ..domain.ports import Clock
from ..domain.progress import ProgressReport
from ..domain.sessions import Session, StreamState, Subscribed, uri_bytes
from ..domain.transitions import Op, check, target
from ..jobs.vocabulary import CallbackSlot, JobKind, JobProgress, PendingJob
from ..protocol.wire.request_state import ephemeral_keys
from ..root import Ports

if TYPE_CHECKING:
    from ..auth.build import SignInPorts
    from ..domain.worker import StepOutcome, Worker

# DynamoDB refuses an item over 400 KB (a ValidationException, which the adapters
# translate into DependencyFailure); the fakes refuse the same writes.
DYNAMODB_ITEM_BYTES = 409_600


def _refuse_oversize(size: int) -> None:
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

    # -- helpers (not part of the port) -------------------------------------------
    def _put(self, record: TaskRecord) -> None:
        # ROW_FIXED_BYTES is taskgate's allowance for what it does not count; the
        # fields themselves are measured as DynamoDB stores them.
        _refuse_oversize(row_size(record) - ROW_FIXED_BYTES)
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

    def watch(self, task_id: str, until_ms: int | None) -> None:
        with self._lock:
            record = self.records.get(task_id)
            if record is None or record.status.terminal:
                raise TransitionRejected(task_id)
            self._put(dataclasses.replace(record, watched_until_ms=until_ms))

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
            _refuse_oversize(json_size(request))
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


class MemoryWorkflow:
    """``Workflow`` as the state machine behaves, without running anything by itself.

    ``start`` queues an execution; ``Memory.settle`` runs the queued steps through the
    real worker, parks on a token when a step asks (as AwaitInput does), and queues the
    execution again when ``resume`` is called with that token. With
    ``complete_into`` set (the bench), ``start`` finishes the task at once.
    """

    def __init__(self, complete_into: MemoryTaskStore | None = None) -> None:
        self.started = 0
        self.resumed = 0
        self.stopped = 0
        self._complete_into = complete_into
        # task id -> RUNNING | SUCCEEDED | FAILED | ABORTED
        self.executions: dict[str, str] = {}
        self.stop_reasons: dict[str, str] = {}
        self.runnable: list[str] = []
        self.waiting: dict[str, str] = {}  # token -> task id
        self.heartbeats: list[str] = []
        # Set to an exception to make the next call of that name raise it.
        self.fail_next: dict[str, Exception] = {}
        # The stored execution ids Stop and Describe were given (None: a row without one).
        self.addressed: list[str | None] = []

    def _maybe_fail(self, name: str) -> None:
        exc = self.fail_next.pop(name, None)
        if exc is not None:
            raise exc

    def execution_for(self, task_id: str) -> str:
        return f"execution:{task_id}"

    def start(self, task_id: str, input_wait_seconds: int) -> str:
        self._maybe_fail("start")
        self.started += 1
        if task_id in self.executions:
            return self.execution_for(task_id)  # same name, same input: idempotent, as Step Functions is
        self.executions[task_id] = "RUNNING"
        store = self._complete_into
        if store is not None:
            record = store.records[task_id]
            store.finish(
                task_id,
                status=TaskStatus.COMPLETED,
                outcome=Outcome.SUCCESS,
                result={"content": [{"type": "text", "text": "done"}], "isError": False},
                error=None,
                message="The operation completed.",
                now_ms=record.created_at_ms,
                alive=record.kept_alive(record.created_at_ms),
            )
            self.executions[task_id] = "SUCCEEDED"
            return self.execution_for(task_id)
        self.runnable.append(task_id)
        return self.execution_for(task_id)

    def resume(self, task_token: str) -> bool:
        self._maybe_fail("resume")
        self.resumed += 1
        task_id = self.waiting.pop(task_token, None)
        if task_id is None or self.executions.get(task_id) != "RUNNING":
            return False
        self.runnable.append(task_id)
        return True

    def heartbeat(self, task_token: str) -> bool:
        self._maybe_fail("heartbeat")
        self.heartbeats.append(task_token)
        task_id = self.waiting.get(task_token)
        return task_id is not None and self.executions.get(task_id) == "RUNNING"

    def stop(self, task_id: str, reason: str, execution: str | None = None) -> None:
        self._maybe_fail("stop")
        self.stopped += 1
        self.addressed.append(execution)
        if self.executions.get(task_id) == "RUNNING":
            self.executions[task_id] = "ABORTED"
            self.stop_reasons[task_id] = reason
        self.runnable = [t for t in self.runnable if t != task_id]

    def status(self, task_id: str, execution: str | None = None) -> str | None:
        self._maybe_fail("status")
        self.addressed.append(execution)
        if self._complete_into is not None:
            return "RUNNING"
        return self.executions.get(task_id)


class MemoryJobs:
    """``Jobs`` as the services behave: a job runs from when the state machine's wait starts
    it (``World.settle`` plays that) until a test ends it (``World.finish_job``) or it is
    stopped. ``progress`` is what describing a running job reports."""

    def __init__(self) -> None:
        self.running: dict[str, PendingJob] = {}  # task id -> the job it waits on
        self.started: list[tuple[str, str]] = []  # (task id, key), in order
        self.stopped: dict[str, str] = {}  # task id -> why
        self.progress: dict[str, JobProgress] = {}
        self.described = 0
        # Set to an exception to make the next call of that name raise it.
        self.fail_next: dict[str, Exception] = {}

    def start(self, task_id: str, job: PendingJob) -> None:
        self.running[task_id] = job
        self.started.append((task_id, job.key))

    def describe(self, task_id: str, job: PendingJob, execution: str | None = None) -> JobProgress | None:
        exc = self.fail_next.pop("describe", None)
        if exc is not None:
            raise exc
        self.described += 1
        if self.running.get(task_id) != job:
            return None
        return self.progress.get(task_id, JobProgress("RUNNING"))

    def stop(self, task_id: str, job: PendingJob, reason: str, execution: str | None = None) -> None:
        exc = self.fail_next.pop("stop", None)
        if exc is not None:
            raise exc
        if self.running.get(task_id) == job:
            del self.running[task_id]
            self.stopped[task_id] = reason


class MemoryBlobs:
    """``BlobStore`` over a dict."""

    def __init__(self) -> None:
        self.objects: dict[str, bytes] = {}
        self.keep_days: dict[str, int] = {}

    def put(self, key: str, data: bytes, *, keep_days: int) -> None:
        self.objects[key] = data
        self.keep_days[key] = keep_days

    def get(self, key: str) -> bytes:
        return self.objects[key]

    def get_range(self, key: str, start: int, length: int) -> tuple[bytes, int]:
        data = self.objects[key]
        return data[start : start + max(1, length)], len(data)

    def delete(self, key: str) -> None:
        self.objects.pop(key, None)


def _stream_size(stream: StreamState) -> int:
    """The stream item's size as DynamoDB counts it (JSON strings stored as written)."""
    return (
        json_size(stream.request_id)
        + sum(len(e.encode()) for e in stream.events)
        + sum(len(k.encode()) for k in stream.emitted_keys)
        + len(stream.owner.encode())
        + len(stream.task_id)
    )


class MemorySessionStore:
    """``SessionStore`` over dicts (only the 2025-11-25 era touches it)."""

    def __init__(self) -> None:
        self.sessions: dict[str, Session] = {}
        self.streams: dict[str, StreamState] = {}
        self.calls: dict[str, CallClaim] = {}
        # The places owners' long-lived requests hold (domain/holds.py): key -> (holder, lease end).
        self.places: dict[str, tuple[str, int]] = {}
        self._calls_lock = threading.Lock()
        # What an eventually consistent read returns for a stream, when a test makes it lag.
        self.lagging: dict[str, StreamState] = {}
        self.subs: dict[str, dict[str, str]] = {}

    def create_session(self, session: Session) -> None:
        self.sessions[session.session_id] = session

    def get_session(self, session_id: str, *, consistent: bool = True) -> Session | None:
        return self.sessions.get(session_id)

    def delete_session(self, session_id: str) -> None:
        self.sessions.pop(session_id, None)
        self.subs.pop(session_id, None)

    def add_hidden_task(self, session_id: str, task_id: str) -> None:
        session = self.sessions.get(session_id)
        if session is not None:
            self.sessions[session_id] = dataclasses.replace(
                session, hidden_tasks=session.hidden_tasks | {task_id}
            )

    def set_log_level(self, session_id: str, level: str) -> None:
        session = self.sessions.get(session_id)
        if session is not None:
            self.sessions[session_id] = dataclasses.replace(session, log_level=level)

    def remember_task(
        self, session_id: str, task_id: str, created_at_ms: int, *, forget: Sequence[str] = ()
    ) -> None:
        session = self.sessions.get(session_id)
        if session is not None:
            recent = {k: v for k, v in session.recent_tasks.items() if k not in forget}
            self.sessions[session_id] = dataclasses.replace(
                session, recent_tasks={**recent, task_id: created_at_ms}
            )

    def create_stream(self, stream: StreamState) -> None:
        _refuse_oversize(_stream_size(stream))
        self.streams[stream.stream_id] = stream

    def get_stream(self, stream_id: str, *, consistent: bool = True) -> StreamState | None:
        if not consistent and stream_id in self.lagging:
            return self.lagging[stream_id]
        return self.streams.get(stream_id)

    def append_events(self, before: StreamState, after: StreamState) -> bool:
        if self.streams.get(before.stream_id) != before:
            return False
        _refuse_oversize(_stream_size(after))
        self.streams[after.stream_id] = after
        return True

    def claim_call(self, key: str, task_id: str, expires_at_ms: int, digest: str = "") -> CallClaim | None:
        with self._calls_lock:
            if key in self.calls:
                return self.calls[key]
            self.calls[key] = CallClaim(task_id, digest=digest)
            return None

    def cancel_call(self, key: str, expires_at_ms: int) -> CallClaim:
        with self._calls_lock:
            claim = dataclasses.replace(self.calls.get(key) or CallClaim(None), cancelled=True)
            self.calls[key] = claim
            return claim

    def find_call(self, key: str) -> CallClaim | None:
        return self.calls.get(key)

    def take_place(self, key: str, holder: str, *, until_ms: int, now_ms: int) -> bool:
        with self._calls_lock:
            found = self.places.get(key)
            if found is not None and found[1] > now_ms and found[0] != holder:
                return False
            self.places[key] = (holder, until_ms)
            return True

    def leave_place(self, key: str, holder: str) -> None:
        with self._calls_lock:
            if self.places.get(key, ("", 0))[0] == holder:
                del self.places[key]

    def subscriptions(self, session_id: str, *, consistent: bool = True) -> dict[str, str]:
        return dict(self.subs.get(session_id, {}))

    def subscribe(
        self, session_id: str, uri: str, version: str, *, expires_at_ms: int, limit: int, max_uri_bytes: int
    ) -> Subscribed:
        mine = self.subs.setdefault(session_id, {})
        if uri not in mine:
            if len(mine) >= limit:
                return Subscribed.TOO_MANY
            if sum(map(uri_bytes, mine)) + uri_bytes(uri) > max_uri_bytes:
                return Subscribed.TOO_LARGE
        after = {**mine, uri: version}
        # One DynamoDB item holds them all (a hashed key per URI): refused past 400 KB as there.
        _refuse_oversize(sum(41 + uri_bytes(u) + len(v.encode()) for u, v in after.items()))
        mine[uri] = version
        return Subscribed.YES

    def unsubscribe(self, session_id: str, uri: str) -> None:
        self.subs.get(session_id, {}).pop(uri, None)

    def advance_subscription(self, session_id: str, uri: str, seen: str, now: str) -> bool:
        mine = self.subs.get(session_id, {})
        if mine.get(uri) != seen:
            return False
        mine[uri] = now
        return True


class FakeClock:
    """Milliseconds that move only when a test says so."""

    def __init__(self, start_ms: int = 1_800_000_000_000) -> None:
        self.now = start_ms

    def __call__(self) -> int:
        return self.now

    def advance(self, ms: int) -> None:
        self.now += ms


class MemorySignInStore:
    """``SignInStore`` (taskgate/auth) over a dict, with the DynamoDB adapter's semantics:
    expired items are gone to reads, and every conditional write decides once."""

    def __init__(self) -> None:
        self.items: dict[str, tuple[Any, int]] = {}
        self.counters: dict[str, int] = {}
        self.used_codes: set[str] = set()
        self._lock = threading.Lock()

    def _live(self, key: str, now: int) -> Any:
        found = self.items.get(key)
        return found[0] if found and found[1] > now else None

    def add_client(self, client: ClientRecord, *, expires_at: int) -> None:
        with self._lock:
            assert f"client#{client.client_id}" not in self.items
            self.items[f"client#{client.client_id}"] = (client, expires_at)

    def get_client(self, client_id: str, now: int) -> ClientRecord | None:
        found: ClientRecord | None = self._live(f"client#{client_id}", now)
        return found

    def keep_client(self, client_id: str, *, expires_at: int) -> None:
        with self._lock:
            found = self.items.get(f"client#{client_id}")
            if found and found[1] < expires_at:
                self.items[f"client#{client_id}"] = (found[0], expires_at)

    def count(self, key: str, *, limit: int, expires_at: int) -> bool:
        with self._lock:
            if self.counters.get(key, 0) >= limit:
                return False
            self.counters[key] = self.counters.get(key, 0) + 1
            return True

    def start_sign_in(self, pending: PendingSignIn) -> None:
        with self._lock:
            self.items[f"pending#{pending.pending_id}"] = (pending, pending.expires_at)

    def advance_sign_in(
        self,
        pending_id: str,
        *,
        stage: str,
        to: str,
        now: int,
        expect_csrf: str | None = None,
        **changes: str,
    ) -> PendingSignIn | None:
        with self._lock:
            found: PendingSignIn | None = self._live(f"pending#{pending_id}", now)
            if found is None or found.stage != stage:
                return None
            if expect_csrf is not None and found.csrf != expect_csrf:
                return None
            after = dataclasses.replace(found, stage=to, **changes)  # type: ignore[arg-type]
            self.items[f"pending#{pending_id}"] = (after, found.expires_at)
            return after

    def add_code(self, code: CodeRecord) -> None:
        with self._lock:
            self.items[f"code#{code.code_digest}"] = (code, code.expires_at)

    def use_code(self, code_digest: str, now: int) -> tuple[CodeUse, CodeRecord | None]:
        with self._lock:
            record: CodeRecord | None = self._live(f"code#{code_digest}", now)
            if record is None:
                return CodeUse.UNKNOWN, None
            if code_digest in self.used_codes:
                return CodeUse.REPLAYED, record
            self.used_codes.add(code_digest)
            return CodeUse.FIRST, record

    def add_grant(self, grant: GrantRecord) -> None:
        with self._lock:
            assert f"grant#{grant.family}" not in self.items
            self.items[f"grant#{grant.family}"] = (grant, grant.expires_at)

    def get_grant(self, family: str, now: int) -> GrantRecord | None:
        found: GrantRecord | None = self._live(f"grant#{family}", now)
        return found

    def rotate_grant(
        self, family: str, *, old_digest: str, new_digest: str, expires_at: int, now: int
    ) -> bool:
        with self._lock:
            found: GrantRecord | None = self._live(f"grant#{family}", now)
            if found is None or found.current_digest != old_digest:
                return False
            self.items[f"grant#{family}"] = (
                dataclasses.replace(found, current_digest=new_digest),
                expires_at,
            )
            return True

    def revoke_grant(self, family: str) -> None:
        with self._lock:
            self.items.pop(f"grant#{family}", None)

    def has_consent(self, owner: str, client_id: str, redirect_host: str, now: int) -> bool:
        return (
            self._live(f"consent#{digest(chr(0).join((owner, client_id, redirect_host)))}", now) is not None
        )

    def add_consent(self, owner: str, client_id: str, redirect_host: str, *, expires_at: int) -> None:
        with self._lock:
            self.items[f"consent#{digest(chr(0).join((owner, client_id, redirect_host)))}"] = (
                True,
                expires_at,
            )

    def cached_document(self, url: str, now: int) -> str | None:
        found: str | None = self._live(f"cimd#{url}", now)
        return found

    def cache_document(self, url: str, document: str, *, expires_at: int) -> None:
        with self._lock:
            self.items[f"cimd#{url}"] = (document, expires_at)


@dataclass
class Memory:
    """One set of in-memory ports, kept so a test can look inside them and move the clock.

    ``ports()`` hands them to ``Taskgate``; ``blobs=False`` is a deployment without a
    result bucket. A stream's wait neither sleeps nor reads the real clock: it calls
    ``on_wait`` (a test runs the queued executions there) and moves ``stream_time``."""

    # A FakeClock (moved by the test) or the real one (``taskgate.clock.now_ms``: the bench).
    clock: Clock = field(default_factory=FakeClock)
    store: MemoryTaskStore = field(default_factory=MemoryTaskStore)
    workflow: MemoryWorkflow = field(default_factory=MemoryWorkflow)
    sessions: MemorySessionStore = field(default_factory=MemorySessionStore)
    blobs: MemoryBlobs = field(default_factory=MemoryBlobs)
    jobs: MemoryJobs = field(default_factory=MemoryJobs)
    sign_in: MemorySignInStore = field(default_factory=MemorySignInStore)
    # The secrets a tool reads with ``taskgate.tools.secret`` (ARN -> value): Secrets Manager's part.
    secrets: dict[str, str] = field(default_factory=dict)
    stream_time: float = 0.0
    on_wait: Callable[[], None] = lambda: None
    tokens: int = 0

    def step(self, worker: Worker, task_id: str) -> StepOutcome:
        """One RunTool step, then what the state machine does with its outcome: park on a
        new token (AwaitInput), run again (TaskgateContinue) or end the execution."""
        from ..domain.worker import StepKind

        outcome = worker.run_step(task_id)
        executions = self.workflow.executions
        if outcome.kind is StepKind.INPUT_REQUIRED:
            self.tokens += 1
            token = f"token-{self.tokens}"
            try:
                self.store.park(task_id, token, self.clock())
            except TransitionRejected:
                executions[task_id] = "SUCCEEDED"  # AwaitInput's Catch: Done
            else:
                self.workflow.waiting[token] = task_id
        elif outcome.kind is StepKind.CONTINUE:
            self.workflow.runnable.append(task_id)
        elif outcome.kind is StepKind.HAND_OFF:
            self.start_job(task_id)
        elif executions.get(task_id) == "RUNNING":
            executions[task_id] = "SUCCEEDED"
        return outcome

    def start_job(self, task_id: str) -> None:
        """What the state machine does with a job a step handed off (LoadJob, StartJob and
        the wait): a callback parks on a token (unless its outcome came first: then RunTool
        runs); any other job starts in ``jobs`` and runs until ``finish_job``."""
        record = self.store.get(task_id)
        request = self.store.job_requests.get(task_id)
        if record is None or record.status is not TaskStatus.WORKING or request is None:
            self.workflow.executions[task_id] = "SUCCEEDED"  # StartJob's Choice: Done
            return
        if request["kind"] == JobKind.CALLBACK:
            self.tokens += 1
            token = f"callback-token-{self.tokens}"
            try:
                self.store.park_callback(task_id, request["key"], token, self.clock())
            except TransitionRejected:
                self.workflow.runnable.append(task_id)  # AwaitCallback's Catch: RunTool decides
            else:
                self.workflow.waiting[token] = task_id
            return
        assert record.job is not None
        self.jobs.start(task_id, record.job)

    def finish_job(
        self, task_id: str, output: Any = None, *, error: str | None = None, cause: str = ""
    ) -> None:
        """The job the task waits on ends, with ``output`` (or failed, with ``error`` and
        ``cause``): the wait state's result or its Catch, then RecordJobOutcome (a cancel
        that came first wins), then RunTool."""
        job = self.jobs.running.pop(task_id)
        raw: dict[str, Any] = {"Error": error, "Cause": cause} if error else {"ok": True, "output": output}
        record = self.store.records[task_id]
        now = self.clock()
        try:
            self.store.record_job_outcome(task_id, job.key, raw, now, record.kept_alive(now))
        except TransitionRejected:
            self.workflow.executions[task_id] = "SUCCEEDED"  # RecordJobOutcome's Catch: Done
            return
        self.workflow.runnable.append(task_id)

    def settle(self, worker: Worker, max_steps: int = 100) -> None:
        """Run every queued execution until each has finished or parked, as the state
        machine would beside the API."""
        for _ in range(max_steps):
            if not self.workflow.runnable:
                return
            self.step(worker, self.workflow.runnable.pop(0))
        raise AssertionError(f"executions did not settle in {max_steps} steps")

    def _wait(self, seconds: float) -> None:
        self.stream_time += seconds
        self.on_wait()

    def ports(
        self, *, with_bucket: bool = True, keys: Callable[[], Sequence[bytes]] = ephemeral_keys
    ) -> Ports:
        return Ports(
            store=lambda: self.store,
            workflow=lambda: self.workflow,
            sessions=lambda: self.sessions,
            blobs=(lambda: self.blobs) if with_bucket else (lambda: None),
            request_state_keys=keys,
            clock=self.clock,
            sleep=self._wait,
            monotonic=lambda: self.stream_time,
            jobs=lambda: self.jobs,
            sign_in=self._sign_in_ports,
            tool_secrets=self._secret,
        )

    def _secret(self, arn: str) -> bytes:
        # A secret not set here is one the tool may not read (not in ToolSecretArns).
        return self.secrets[arn].encode()

    def _sign_in_ports(self) -> SignInPorts:
        from ..auth.build import SignInPorts
        from ..auth.signing import ephemeral_source

        return SignInPorts(store=lambda: self.sign_in, signing_keys=ephemeral_source())
