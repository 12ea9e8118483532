"""In-memory fakes of the domain's ports, for the unit tier and the bench.

``MemoryTaskStore`` / ``MemoryWorkflow`` / ``MemorySessionStore`` / ``MemoryBlobs``
implement the domain ports (``taskgate.domain.ports``, ``taskgate.domain.sessions``)
with plain dicts: no DynamoDB item encoding, no botocore, no network. The task
store honours the domain's transition table. ``CannedAws`` is the bench's other
option,
used for the "real adapters" rows: the real boto3 clients and adapters run
(parameter validation, serialization, SigV4 signing, response parsing) and a
``before-send`` hook answers each request from a tiny in-memory table instead of
the network.
"""

from __future__ import annotations

import dataclasses
import json
import threading
from collections.abc import Iterator
from typing import Any

from taskgate.domain.errors import DependencyFailure, TaskAlreadyExists, TransitionRejected
from taskgate.domain.limits import ROW_FIXED_BYTES, json_size, map_size, row_size
from taskgate.domain.model import ACTIVE, Expiry, Outcome, TaskRecord, TaskStatus
from taskgate.domain.results import ResultStore
from taskgate.domain.sessions import Session, StreamState
from taskgate.domain.transitions import Op, check, target
from taskgate.tools.registry import ToolRegistry

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
        self._active: dict[str, set[str]] = {}
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

    # -- TaskStore ----------------------------------------------------------------
    def create(self, record: TaskRecord) -> None:
        with self._lock:
            if record.task_id in self.records:
                raise TaskAlreadyExists(record.task_id)
            self._put(record)
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
            (r for r in self.records.values() if r.owner == owner),
            key=lambda r: r.created_at_ms,
            reverse=True,
        )
        page = mine[start : start + limit]
        return page, (str(start + limit) if start + limit < len(mine) else None)

    def count_active(self, owner: str, up_to: int) -> int:
        return min(len(self._active.get(owner, ())), up_to)

    def list_active(self) -> list[str]:
        return [task_id for ids in self._active.values() for task_id in ids]

    def active_pages(self, page_size: int = 1000) -> Iterator[list[str]]:
        with self._lock:
            ids = self.list_active()
        for start in range(0, len(ids), page_size):
            yield ids[start : start + page_size]

    def get_many(self, task_ids: list[str]) -> list[TaskRecord]:
        assert len(task_ids) <= 100
        found = [self.records.get(task_id) for task_id in task_ids]
        return [
            dataclasses.replace(
                r, arguments={}, result=None, checkpoint=None, input_requests={}, input_responses={}
            )
            for r in found
            if r is not None
        ]

    def report_progress(self, task_id: str, message: str, now_ms: int, alive: Expiry) -> None:
        with self._lock:
            record = self._row(Op.PROGRESS, task_id)
            self._put(_touched(record, now_ms, alive, status_message=message))

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
            )
            self._put(cancelled)
            return cancelled


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

    ``start`` queues an execution; ``World.settle`` runs the queued steps through
    the real worker, parks on a token when a step asks (as AwaitInput does), and
    queues the execution again when ``resume`` is called with that token. With
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
        self.calls: dict[str, str] = {}
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

    def set_log_level(self, session_id: str, level: str) -> None:
        session = self.sessions.get(session_id)
        if session is not None:
            self.sessions[session_id] = dataclasses.replace(session, log_level=level)

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

    def remember_call(self, key: str, task_id: str, expires_at_ms: int) -> None:
        self.calls[key] = task_id

    def find_call(self, key: str) -> str | None:
        return self.calls.get(key)

    def subscriptions(self, session_id: str, *, consistent: bool = True) -> dict[str, str]:
        return dict(self.subs.get(session_id, {}))

    def subscribe(self, session_id: str, uri: str, version: str, *, expires_at_ms: int, limit: int) -> bool:
        mine = self.subs.setdefault(session_id, {})
        if uri not in mine and len(mine) >= limit:
            return False
        mine[uri] = version
        return True

    def unsubscribe(self, session_id: str, uri: str) -> None:
        self.subs.get(session_id, {}).pop(uri, None)

    def advance_subscription(self, session_id: str, uri: str, seen: str, now: str) -> bool:
        mine = self.subs.get(session_id, {})
        if mine.get(uri) != seen:
            return False
        mine[uri] = now
        return True


def install_in_wiring(store: MemoryTaskStore, workflow: MemoryWorkflow, sessions: MemorySessionStore) -> None:
    """Make ``taskgate.wiring`` (the composition root ``api_handler`` uses) build on the fakes:
    its adapter factories are replaced, so no boto3 client is ever created. Call before
    anything asks wiring for a service; ``wiring.reset`` must not be called afterwards."""
    from taskgate import wiring

    wiring.reset()
    replacements: dict[str, Any] = {
        "store": lambda: store,
        "workflow": lambda: workflow,
        "sessions": lambda: sessions,
        "results": lambda: ResultStore(None, max_inline_bytes=262_144),
    }
    for name, factory in replacements.items():
        setattr(wiring, name, factory)


# ---------------------------------------------------------------------------------
# A whole server on the fakes: the unit tier's world.


class FakeClock:
    """Milliseconds that move only when a test says so."""

    def __init__(self, start_ms: int = 1_800_000_000_000) -> None:
        self.now = start_ms

    def __call__(self) -> int:
        return self.now

    def advance(self, ms: int) -> None:
        self.now += ms


class World:
    """The API, the worker and the sweeper wired on in-memory fakes, as
    ``taskgate.wiring`` wires them on AWS. ``settle`` plays the state machine."""

    def __init__(
        self,
        tools: ToolRegistry | None = None,
        *,
        anonymous_owner: str = "anonymous",
        max_inline_result_bytes: int = 262_144,
        max_result_response_bytes: int = 2_097_152,
        with_bucket: bool = True,
        stream_seconds: float = 1.0,
        inline_calls: int = 16,
        **limit_overrides: int,
    ) -> None:
        from taskgate.config import DEFAULT_TOOL_MODULES
        from taskgate.domain.limits import Limits
        from taskgate.domain.service import TaskService
        from taskgate.domain.sweeper import Sweeper
        from taskgate.domain.worker import Worker
        from taskgate.protocol.request_state import RequestStates, ephemeral_keys
        from taskgate.protocol.server import McpServer
        from taskgate.protocol.shared import InlineSlots, Services
        from taskgate.protocol.v2025 import Era2025
        from taskgate.protocol.v2025.streams import ResultStreams
        from taskgate.protocol.v2026 import Era2026
        from taskgate.tools.registry import registry

        self.clock = FakeClock()
        self.store = MemoryTaskStore()
        self.workflow = MemoryWorkflow()
        self.blobs = MemoryBlobs()
        self.sessions = MemorySessionStore()
        if tools is None:
            # What a default deployment serves, plus the test-only tools.
            tools = registry.load([*DEFAULT_TOOL_MODULES.split(","), "tests.fixture_tools"])
        self.tools = tools
        limits = {
            "default_ttl_ms": 3_600_000,
            "max_ttl_ms": 86_400_000,
            "poll_interval_ms": 1_000,
            "max_active_per_owner": 100,
            "max_argument_bytes": 262_144,
            "max_input_response_bytes": 65_536,
            "max_checkpoint_bytes": 65_536,
            **limit_overrides,
        }
        self.limits = Limits(**limits)
        self.results = ResultStore(
            self.blobs if with_bucket else None,
            max_inline_bytes=max_inline_result_bytes,
            max_delivered_bytes=max_result_response_bytes,
        )
        self.tasks = TaskService(self.store, self.workflow, self.clock, self.limits, self.results)
        self.worker = Worker(
            self.store,
            self.tools,
            self.clock,
            self.results,
            limits=self.limits,
            max_runtime_ms=0,
            yield_margin_ms=60_000,
        )
        self.sweeper = Sweeper(
            self.store, self.workflow, self.clock, stale_after_ms=300_000, max_runtime_ms=0
        )
        self.events: list[tuple[str, dict[str, Any]]] = []
        # requestState sealed under a key of this world's own, expiring on its clock.
        self.request_states = RequestStates(ephemeral_keys, ttl_ms=600_000, clock=self.clock)
        services = Services(
            self.tasks,
            self.tools,
            self._audit,
            anonymous_owner,
            InlineSlots(inline_calls),
            request_states=self.request_states,
        )
        # A stream's wait runs the queued executions and moves a fake clock instead.
        self._stream_time = 0.0
        self.streams = ResultStreams(
            self.tasks,
            self.sessions,
            results=self.results,
            slots=services.inline,
            budget_seconds=stream_seconds,
            log_retention_ms=3_600_000,
            sleep=self._stream_sleep,
            monotonic=lambda: self._stream_time,
        )
        self.server = McpServer(
            [
                Era2026(services),
                Era2025(
                    services,
                    sessions=self.sessions,
                    streams=self.streams,
                    clock=self.clock,
                    session_ttl_ms=86_400_000,
                ),
            ],
            audit=self._audit,
        )
        self._tokens = 0

    def _stream_sleep(self, seconds: float) -> None:
        self._stream_time += seconds
        self.settle()

    def _audit(self, event: str, fields: dict[str, Any]) -> None:
        self.events.append((event, fields))

    def step(self, task_id: str) -> Any:
        """One RunTool step, then what the state machine does with its outcome."""
        from taskgate.domain.worker import StepKind

        outcome = self.worker.run_step(task_id)
        if outcome.kind is StepKind.INPUT_REQUIRED:
            self._tokens += 1
            token = f"token-{self._tokens}"
            try:
                self.store.park(task_id, token, self.clock())
            except TransitionRejected:
                self.workflow.executions[task_id] = "SUCCEEDED"  # AwaitInput's Catch: Done
            else:
                self.workflow.waiting[token] = task_id
        elif outcome.kind is StepKind.CONTINUE:
            self.workflow.runnable.append(task_id)
        elif self.workflow.executions.get(task_id) == "RUNNING":
            self.workflow.executions[task_id] = "SUCCEEDED"
        return outcome

    def settle(self, max_steps: int = 100) -> None:
        """Run every queued execution until each has finished or parked."""
        for _ in range(max_steps):
            if not self.workflow.runnable:
                return
            self.step(self.workflow.runnable.pop(0))
        raise AssertionError("executions did not settle")

    def handle(self, body: Any, headers: dict[str, str] | None = None, owner: str = "anonymous") -> Any:
        return self.server.handle(body, headers or {}, owner)

    def mcp(self, owner: str = "anonymous") -> Any:
        """A raw 2026-07-28 client whose requests go straight into the server as ``owner``."""
        from tests.mcp_client import Mcp

        def post(body: Any, headers: dict[str, str]) -> tuple[int, Any]:
            # Executions run between requests, as the state machine runs beside the API.
            self.settle()
            reply = self.server.handle(body, headers, owner)
            if reply.stream is not None:
                return reply.status, "".join(reply.stream)
            return reply.status, reply.body

        return Mcp(post)


# ---------------------------------------------------------------------------------
# Real boto3 clients, network replaced by a before-send hook.


class _Body:
    def __init__(self, data: bytes) -> None:
        self._data = data

    def stream(self, **kwargs: Any) -> Iterator[bytes]:
        yield self._data


class CannedAws:
    """Answers DynamoDB PutItem/GetItem/Query(COUNT) and Step Functions
    StartExecution/SendTaskSuccess/StopExecution from memory, after botocore has
    validated, serialized and signed the request. Enough for tools/call and tasks/get."""

    def __init__(self) -> None:
        self.items: dict[str, dict[str, Any]] = {}
        self.calls = 0

    def finish_all(self) -> None:
        """Take every item off the active index (bench setup between batches)."""
        for item in self.items.values():
            item.pop("activeOwner", None)

    def attach(self, client: Any) -> None:
        client.meta.events.register("before-send", self._send)

    def _send(self, request: Any, **kwargs: Any) -> Any:
        from botocore.awsrequest import AWSResponse
        from botocore.compat import HTTPHeaders

        self.calls += 1
        target = request.headers.get("X-Amz-Target", b"")
        operation = (target.decode() if isinstance(target, bytes) else str(target)).rpartition(".")[2]
        body = json.loads(request.body or b"{}")
        out: dict[str, Any] = {}
        if operation == "PutItem":
            item = body["Item"]
            self.items[item["taskId"]["S"]] = item
        elif operation == "GetItem":
            found = self.items.get(body["Key"]["taskId"]["S"])
            if found is not None:
                out = {"Item": found}
        elif operation == "Query":
            owner = body["ExpressionAttributeValues"][":owner"]["S"]
            count = sum(1 for i in self.items.values() if i.get("activeOwner", {}).get("S") == owner)
            out = {"Count": count, "ScannedCount": count}
        elif operation == "StartExecution":
            out = {
                "executionArn": f"arn:aws:states:us-east-1:123456789012:execution:bench:{body['name']}",
                "startDate": 1_800_000_000.0,
            }
        elif operation in ("SendTaskSuccess", "StopExecution"):
            out = {"stopDate": 1_800_000_000.0} if operation == "StopExecution" else {}
        else:
            raise NotImplementedError(f"CannedAws does not answer {operation}")
        data = json.dumps(out).encode()
        headers = HTTPHeaders()
        headers["content-type"] = "application/x-amz-json-1.0"
        headers["content-length"] = str(len(data))
        return AWSResponse(request.url, 200, headers, _Body(data))
