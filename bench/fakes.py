"""In-process stand-ins for AWS, so the warm and memory figures are taskgate's code alone.

``MemoryTaskStore`` / ``MemoryWorkflow`` / ``MemorySessionStore`` implement the
domain ports (``taskgate.domain.ports``, ``taskgate.domain.sessions``) with plain
dicts: no DynamoDB item encoding, no botocore. ``CannedAws`` is the other option,
used for the "real adapters" rows: the real boto3 clients and adapters run
(parameter validation, serialization, SigV4 signing, response parsing) and a
``before-send`` hook answers each request from a tiny in-memory table instead of
the network.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterator
from typing import Any

from taskgate.domain.errors import TaskAlreadyExists, TransitionRejected
from taskgate.domain.model import ACTIVE, Expiry, Outcome, TaskRecord, TaskStatus
from taskgate.domain.sessions import Session, StreamState


class MemoryTaskStore:
    """``TaskStore`` over a dict, with the same conditional-write semantics as the DynamoDB one.

    ``capacity`` bounds how many rows it keeps (oldest dropped first), so a long run
    measures the server's memory rather than the fake table's.
    """

    def __init__(self, capacity: int | None = None) -> None:
        self.records: dict[str, TaskRecord] = {}
        self._active: dict[str, set[str]] = {}
        self._capacity = capacity

    # -- helpers (not part of the port) -------------------------------------------
    def _put(self, record: TaskRecord) -> None:
        self.records[record.task_id] = record
        ids = self._active.setdefault(record.owner, set())
        if record.status in ACTIVE:
            ids.add(record.task_id)
        else:
            ids.discard(record.task_id)

    def put(self, record: TaskRecord) -> None:
        """Write a row as-is (bench setup: park or reset a task)."""
        self._put(record)

    def finish_all(self) -> None:
        """Complete every active task (bench setup between batches)."""
        for ids in self._active.values():
            for task_id in list(ids):
                record = self.records[task_id]
                self.records[task_id] = dataclasses.replace(record, status=TaskStatus.COMPLETED)
            ids.clear()

    def _active_record(self, task_id: str, *allowed: TaskStatus) -> TaskRecord:
        record = self.records.get(task_id)
        if record is None or record.status not in (allowed or ACTIVE):
            raise TransitionRejected(task_id)
        return record

    # -- TaskStore ----------------------------------------------------------------
    def create(self, record: TaskRecord) -> None:
        if record.task_id in self.records:
            raise TaskAlreadyExists(record.task_id)
        self._put(record)
        if self._capacity is not None and len(self.records) > self._capacity:
            oldest = next(iter(self.records))
            gone = self.records.pop(oldest)
            self._active.get(gone.owner, set()).discard(oldest)

    def get(self, task_id: str) -> TaskRecord | None:
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

    def report_progress(self, task_id: str, message: str, now_ms: int, alive: Expiry) -> None:
        record = self._active_record(task_id, TaskStatus.WORKING)
        self._put(_touched(record, now_ms, alive, status_message=message))

    def save_checkpoint(self, task_id: str, state: Any, now_ms: int, alive: Expiry) -> None:
        record = self._active_record(task_id)
        self._put(_touched(record, now_ms, alive, checkpoint=state))

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
        try:
            record = self._active_record(task_id)
        except TransitionRejected:
            return False
        changes: dict[str, Any] = {
            "status": status,
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
        resume: bool,
        task_token: str,
        now_ms: int,
        alive: Expiry,
    ) -> None:
        record = self._active_record(task_id, TaskStatus.INPUT_REQUIRED)
        if record.task_token != task_token or not set(responses) <= set(record.input_requests):
            raise TransitionRejected(task_id)
        answered = {**record.input_responses, **responses}
        if resume:
            self._put(
                _touched(
                    record,
                    now_ms,
                    alive,
                    status=TaskStatus.WORKING,
                    input_responses=answered,
                    input_requests={},
                    task_token=None,
                )
            )
        else:
            left = {k: v for k, v in record.input_requests.items() if k not in responses}
            self._put(_touched(record, now_ms, alive, input_responses=answered, input_requests=left))

    def cancel(self, task_id: str, message: str, now_ms: int, alive: Expiry) -> TaskRecord:
        record = self._active_record(task_id)
        cancelled = _touched(
            record,
            now_ms,
            alive,
            status=TaskStatus.CANCELLED,
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
    """``Workflow`` that records calls. With ``complete_into`` set, ``start`` finishes
    the task at once with a canned result (a worker that takes no time)."""

    def __init__(self, complete_into: MemoryTaskStore | None = None) -> None:
        self.started = 0
        self.resumed = 0
        self.stopped = 0
        self._complete_into = complete_into

    def start(self, task_id: str, input_wait_seconds: int) -> None:
        self.started += 1
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

    def resume(self, task_token: str) -> bool:
        self.resumed += 1
        return True

    def stop(self, task_id: str, reason: str) -> None:
        self.stopped += 1

    def status(self, task_id: str) -> str | None:
        return "RUNNING"


class MemorySessionStore:
    """``SessionStore`` over dicts (only the 2025-11-25 era touches it)."""

    def __init__(self) -> None:
        self.sessions: dict[str, Session] = {}
        self.streams: dict[str, StreamState] = {}

    def create_session(self, session: Session) -> None:
        self.sessions[session.session_id] = session

    def get_session(self, session_id: str) -> Session | None:
        return self.sessions.get(session_id)

    def delete_session(self, session_id: str) -> None:
        self.sessions.pop(session_id, None)

    def create_stream(self, stream: StreamState) -> None:
        self.streams[stream.stream_id] = stream

    def get_stream(self, stream_id: str) -> StreamState | None:
        return self.streams.get(stream_id)

    def append_events(self, before: StreamState, after: StreamState) -> bool:
        if self.streams.get(before.stream_id) != before:
            return False
        self.streams[after.stream_id] = after
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
        "blobs": lambda: None,
    }
    for name, factory in replacements.items():
        setattr(wiring, name, factory)


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
