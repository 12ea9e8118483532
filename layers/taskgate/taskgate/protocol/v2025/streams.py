"""``tasks/result`` over resumable SSE, short enough for API Gateway.

A stream lives at most ``budget`` seconds (under API Gateway's 29 s), then ends
with a ``retry`` hint; the client reconnects with ``Last-Event-ID`` to any
instance, which replays what it missed from the store and carries on. A stream
also ends right after it asks the client something: the answer arrives as a
separate POST, and Lambda buffers whole responses anyway.
"""

from __future__ import annotations

import json
import secrets
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import replace
from typing import Any

from ...clock import now_ms
from ...codes import INTERNAL_ERROR, INVALID_PARAMS
from ...domain.errors import ResultUnavailable, TaskNotFound
from ...domain.model import TaskRecord, TaskStatus
from ...domain.service import TaskService
from ...domain.sessions import SessionStore, StreamState
from . import wire as w

SSE_HEADERS = {"content-type": "text/event-stream", "cache-control": "no-cache"}
# Notifications a waiting stream also carries (resource updates of its session), polled
# with it; called with the stream's monotonic clock.
Notices = Callable[[float], list[dict[str, Any]]]


def _dumps(message: dict[str, Any]) -> str:
    return json.dumps(message, separators=(",", ":"))


def sse_event(event_id: str, message: dict[str, Any]) -> str:
    return f"id: {event_id}\nevent: message\ndata: {_dumps(message)}\n\n"


class ResultStreams:
    def __init__(
        self,
        tasks: TaskService,
        store: SessionStore,
        *,
        budget_seconds: float,
        log_retention_ms: int,
        poll_seconds: float,
        retry_ms: int = 500,
        sleep: Callable[[float], None] = time.sleep,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self._tasks = tasks
        self._store = store
        self._budget = budget_seconds
        self._poll = poll_seconds
        self._retry_ms = retry_ms
        self._log_retention_ms = log_retention_ms
        self._sleep = sleep
        self._monotonic = monotonic

    def open(
        self,
        owner: str,
        record: TaskRecord,
        request_id: Any,
        *,
        hide_task: bool = False,
        notices: Notices | None = None,
    ) -> Iterator[str]:
        """A ``tasks/result`` stream for ``record``; with ``hide_task``, the stream of a
        plain ``tools/call`` that became this task, on which nothing names the task."""
        state = StreamState(
            stream_id=uuid.uuid4().hex,
            owner=owner,
            task_id=record.task_id,
            request_id=request_id,
            expires_at_ms=record.expires_at_ms,
            hides_task=hide_task,
        )
        self._store.create_stream(state)
        # The priming event gives the client an id to resume from before anything else happens.
        yield self._priming(state.stream_id, 0)
        yield from self._live(state, notices)

    def finished_call(
        self, owner: str, request_id: Any, message: dict[str, Any], *, deliver: bool
    ) -> Iterator[str]:
        """A response already known, logged for replay; with ``deliver=False`` the
        stream ends after the priming event and the client gets it on resume."""
        state = StreamState(
            stream_id=uuid.uuid4().hex,
            owner=owner,
            task_id="",
            request_id=request_id,
            expires_at_ms=now_ms() + self._log_retention_ms,
            events=(json.dumps(message, separators=(",", ":")),),
            done=True,
        )
        self._store.create_stream(state)
        # Position 0: a resume replays the logged response.
        yield self._priming(state.stream_id, 0)
        if deliver:
            yield sse_event(f"{state.stream_id}:1", message)

    def resume(self, owner: str, last_event_id: str, notices: Notices | None = None) -> Iterator[str] | None:
        stream_id, _, rest = last_event_id.partition(":")
        seen = rest.split(":", 1)[0]
        state = self._store.get_stream(stream_id) if stream_id else None
        if state is None or state.owner != owner or not seen.isdigit() or int(seen) > len(state.events):
            return None
        return self._replay_then_live(state, int(seen), notices)

    def _priming(self, stream_id: str, position: int) -> str:
        # Every stream opens with an id-bearing event, so a client always has a
        # fresh cursor even when the stream then carries only (unlogged)
        # notifications. It points at the log position; the suffix keeps ids unique.
        return f"id: {stream_id}:{position}:{secrets.token_hex(4)}\nretry: {self._retry_ms}\ndata: \n\n"

    def _replay_then_live(self, state: StreamState, seen: int, notices: Notices | None) -> Iterator[str]:
        for index, event in enumerate(state.events[seen:], start=seen + 1):
            yield f"id: {state.stream_id}:{index}\nevent: message\ndata: {event}\n\n"
        # After the replay, so resuming from it never skips a replayed event.
        yield self._priming(state.stream_id, len(state.events))
        if not state.done:
            yield from self._live(state, notices)

    def _live(self, state: StreamState, notices: Notices | None = None) -> Iterator[str]:
        # Notifications are sent live and never logged: they carry no event id, so
        # a reconnect resumes after the last logged event, and the stream item is
        # written only for what must not be lost (questions and the response).
        seen_status: str | None = None
        seen_message: str | None = None
        deadline = self._monotonic() + self._budget
        while True:
            try:
                record: TaskRecord | None = self._tasks.get(state.owner, state.task_id)
            except TaskNotFound as exc:
                record = None
                error = {"code": INVALID_PARAMS, "message": f"Failed to retrieve task: {exc.reason}"}
                logged = [{"jsonrpc": "2.0", "id": state.request_id, "error": error}]
            if record is not None:
                status = w.status_of(record)
                if status != seen_status and not state.hides_task:
                    yield f"data: {_dumps(w.status_notification(record))}\n\n"
                if record.progress_token is not None and record.status_message != seen_message:
                    elapsed = max(1, now_ms() - record.created_at_ms)
                    progress = w.progress_notification(record, elapsed, tagged=not state.hides_task)
                    yield f"data: {_dumps(progress)}\n\n"
                seen_status, seen_message = status, record.status_message
                logged = self._logged_events(state, record)
            for notice in notices(self._monotonic()) if notices is not None else []:
                yield f"data: {_dumps(notice)}\n\n"
            if logged:
                # Server-to-client requests of every kind (elicitation, sampling, roots).
                asked = [m for m in logged if "method" in m and "id" in m]
                after = replace(
                    self._with(state, logged, done=not asked),
                    emitted_keys=state.emitted_keys | {m["id"] for m in asked},
                )
                if not self._store.append_events(state, after):
                    # Another instance appended to this stream; its log is the truth.
                    fresh = self._store.get_stream(state.stream_id)
                    if fresh is None:
                        return
                    for index in range(len(state.events), len(fresh.events)):
                        yield f"id: {state.stream_id}:{index + 1}\nevent: message\ndata: {fresh.events[index]}\n\n"
                    state = fresh
                    if state.done:
                        return
                    continue
                for offset, message in enumerate(logged, start=len(state.events) + 1):
                    yield sse_event(f"{state.stream_id}:{offset}", message)
                # After a question the answer comes as its own POST; after the response, nothing.
                return
            if self._monotonic() >= deadline:
                return
            self._sleep(self._poll)

    def _logged_events(self, state: StreamState, record: TaskRecord) -> list[dict[str, Any]]:
        tagged = not state.hides_task
        if record.status.terminal:
            try:
                record = self._tasks.with_result(record)
            except ResultUnavailable as gone:
                # Logged like any answer, so a resumed stream gets the same clear error
                # instead of a broken stream and a retry that can never succeed.
                record = replace(record, result=None, error={"code": INTERNAL_ERROR, "message": str(gone)})
            return [w.payload_message(record, state.request_id, tagged=tagged)]
        if record.status is TaskStatus.INPUT_REQUIRED:
            asks = [
                w.elicitation_request(record.task_id, key, request, tagged=tagged)
                for key, request in record.input_requests.items()
            ]
            return [ask for ask in asks if ask["id"] not in state.emitted_keys]
        return []

    @staticmethod
    def _with(state: StreamState, messages: list[dict[str, Any]], *, done: bool) -> StreamState:
        encoded = tuple(json.dumps(m, separators=(",", ":")) for m in messages)
        return replace(state, events=state.events + encoded, done=done)
