"""``tasks/result`` over resumable SSE, as cheap as polling.

A waiting stream reads the task, sends what is due (status and progress
notifications; a question; the response) and ends with ``retry`` set to the
task's ``pollInterval``: the client reconnects with ``Last-Event-ID`` to any
instance, which replays what it missed and reads again. So a client waiting an
hour on ``tasks/result`` costs what one polling ``tasks/get`` at ``pollInterval``
costs, instead of holding an API Lambda for 20 s at a time. A deployer may let a
stream hold on for up to ``budget`` seconds (``STREAM_MAX_SECONDS``), reading at
the task's ``pollInterval``, trading Lambda time for fewer reconnects.

The event log keeps markers, never message bodies: "question K was asked", "the
response was sent". A replay rebuilds each message from the task row (and the
result bucket), so a result of any size can be replayed and the log item stays
small. Only a plain call's response that has no task row (a tool that closed its
stream, SEP-1699) is kept: in the marker when small, in the result bucket when not.

Notifications (the tool's progress numbers and log lines, task status) are never
logged: each carries an event id whose suffix is the stream's ``Cursor`` (how many
progress reports and log lines its client has had), so a resume sends only what is
new, and the row it reads holds the rest (protocol/wire/task_events.py).

A plain ``tools/call`` that became a hidden task (protocol/calls/plan.py) is such a
stream too, served in pieces of at most ``call_piece_seconds`` so that each ends well
inside API Gateway's cut: every piece tells the task its caller is still there
(``watch_ms``: a caller that stops coming back has hung up, and its task is cancelled),
and a call still running at ``hand_over_at_ms`` is answered with a handle the model can
drive instead of leaving the caller to time out.
"""

from __future__ import annotations

import json
import re
import secrets
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from typing import Any

from ...clock import now_ms
from ...codes import INTERNAL_ERROR, INVALID_PARAMS
from ...domain.errors import ResultUnavailable, TaskNotFound
from ...domain.limits import MAX_STORED_ID_BYTES, Limits, json_size
from ...domain.model import TaskRecord, TaskStatus
from ...domain.results import ResultStore
from ...domain.service import TaskService
from ...domain.sessions import SessionStore, StreamState
from ..calls.slots import InlineSlots
from ..calls.waiting import FIRST_READ_SECONDS
from ..wire.task_events import Cursor, news
from . import wire as w

SSE_HEADERS = {"content-type": "text/event-stream", "cache-control": "no-cache"}
# Notifications a waiting stream also carries (resource updates of its session), polled
# with it; called with the stream's monotonic clock.
Notices = Callable[[float], list[dict[str, Any]]]
# A plain call's logged response stays in its marker up to this size; larger ones
# go to the result bucket, so a stream item is always far below DynamoDB's 400 KB.
INLINE_LOGGED_BYTES = 16_384
# "{stream id}:{position}", then optionally ":" and the cursor "c{progress}.{logs}"
# and/or a nonce "n{hex}" (priming events). A stream whose client has had no progress
# or log line (every stream but a hidden task's) keeps the ids it always had:
# "{stream id}:{position}", priming events ":{hex}". ASCII only.
_EVENT_ID = re.compile(r"([0-9a-f]{1,64}):([0-9]{1,9})(?::(?:c([0-9]{1,9})\.([0-9]{1,9}))?n?[0-9a-f]{0,16})?")

# Markers of the event log (each a small JSON object).
_RESPONSE = {"response": 1}


def _dumps(message: dict[str, Any]) -> str:
    # UTF-8 on the wire: ASCII escaping would send non-ASCII text up to six times over.
    return json.dumps(message, separators=(",", ":"), ensure_ascii=False)


def sse_event(event_id: str, message: dict[str, Any]) -> str:
    return f"id: {event_id}\nevent: message\ndata: {_dumps(message)}\n\n"


def _cursor_id(stream_id: str, position: int, cursor: Cursor) -> str:
    if not (cursor.progress or cursor.logs):
        return f"{stream_id}:{position}"
    return f"{stream_id}:{position}:c{cursor.progress}.{cursor.logs}"


def _priming_id(stream_id: str, position: int, cursor: Cursor) -> str:
    nonce = secrets.token_hex(4)
    if not (cursor.progress or cursor.logs):
        return f"{stream_id}:{position}:{nonce}"
    return f"{_cursor_id(stream_id, position, cursor)}n{nonce}"


# Builds the answer of a plain call handed to the model as a handle (protocol/calls/handle_tools.py).
HandOver = Callable[[TaskRecord], dict[str, Any]]


def _marker(value: dict[str, Any]) -> str:
    return json.dumps(value, separators=(",", ":"))


@dataclass
class _Seen:
    """What a stream last told its client of the task: its status, and how far the
    client got in the tool's progress and log lines."""

    status: str | None = None
    cursor: Cursor = field(default_factory=Cursor)


class ResultStreams:
    def __init__(
        self,
        tasks: TaskService,
        store: SessionStore,
        *,
        results: ResultStore,
        slots: InlineSlots,
        budget_seconds: float,
        log_retention_ms: int,
        call_piece_seconds: float = 20.0,
        hand_over: HandOver | None = None,
        sleep: Callable[[float], None] = time.sleep,
        monotonic: Callable[[], float] = time.monotonic,
        clock: Callable[[], int] = now_ms,
    ) -> None:
        self._tasks = tasks
        self._store = store
        self._results = results
        self._slots = slots
        self._budget = budget_seconds
        self._call_piece = call_piece_seconds
        self._hand_over = hand_over
        self._log_retention_ms = log_retention_ms
        self._sleep = sleep
        self._monotonic = monotonic
        self._clock = clock

    @staticmethod
    def check_request_id(request_id: Any) -> None:
        """The request id a stream keeps for its replays; raise PayloadTooLarge past
        its bound (before anything, a task included, is created for the stream)."""
        Limits.check_stored_id("The request id", request_id)

    def open(
        self,
        owner: str,
        record: TaskRecord,
        request_id: Any,
        *,
        hide_task: bool = False,
        notices: Notices | None = None,
        log_level: str | None = None,
        watch_ms: int | None = None,
        hand_over_at_ms: int | None = None,
    ) -> Iterator[str]:
        """A ``tasks/result`` stream for ``record``; with ``hide_task``, the stream of a
        plain ``tools/call`` that became this task, on which nothing names the task
        (``watch_ms``, ``hand_over_at_ms``: see the module). ``log_level``: the least
        severe log line the client wants. The log is created here, before the response
        starts: a refusal is still a JSON-RPC error."""
        self.check_request_id(request_id)
        state = StreamState(
            stream_id=uuid.uuid4().hex,
            owner=owner,
            task_id=record.task_id,
            request_id=request_id,
            expires_at_ms=record.expires_at_ms,
            hides_task=hide_task,
            watch_ms=watch_ms,
            hand_over_at_ms=hand_over_at_ms,
        )
        self._store.create_stream(state)
        return self._opened(state, record, notices, log_level)

    def _opened(
        self, state: StreamState, record: TaskRecord, notices: Notices | None, log_level: str | None
    ) -> Iterator[str]:
        # The priming event gives the client an id to resume from before anything else happens.
        yield self._priming(state.stream_id, 0, Cursor(), record.poll_interval_ms)
        yield from self._live(state, record, notices, Cursor(), log_level, opening=True)

    def finished_call(
        self, owner: str, request_id: Any, message: dict[str, Any], *, deliver: bool
    ) -> Iterator[str]:
        """A response already known, logged for replay; with ``deliver=False`` the
        stream ends after the priming event and the client gets it on resume. A
        response that cannot be logged (its id past the bound, or too large with no
        result bucket) is delivered on this stream at once."""
        stream_id = uuid.uuid4().hex
        marker = (
            self._log_message(stream_id, message) if json_size(request_id) <= MAX_STORED_ID_BYTES else None
        )
        retry = self._tasks.limits.poll_interval_ms
        if marker is None:
            return iter([self._priming(stream_id, 0, Cursor(), retry), sse_event(f"{stream_id}:1", message)])
        state = StreamState(
            stream_id=stream_id,
            owner=owner,
            task_id="",
            request_id=request_id,
            expires_at_ms=now_ms() + self._log_retention_ms,
            events=(marker,),
            done=True,
        )
        self._store.create_stream(state)
        # Position 0: a resume replays the logged response.
        events = [self._priming(stream_id, 0, Cursor(), retry)]
        if deliver:
            events.append(sse_event(f"{stream_id}:1", message))
        return iter(events)

    def _log_message(self, stream_id: str, message: dict[str, Any]) -> str | None:
        if json_size(message) <= INLINE_LOGGED_BYTES:
            return _marker({"message": message})
        ref = self._results.keep(f"streams/{stream_id}", message, keep_ms=self._log_retention_ms)
        return _marker({"ref": ref}) if ref is not None else None

    def resume(
        self,
        owner: str,
        last_event_id: str,
        notices: Notices | None = None,
        log_level: str | None = None,
    ) -> Iterator[str] | None:
        """The stream after ``last_event_id``, or None when there is no such stream of
        ``owner``'s (or the id is not one this server issued)."""
        parsed = _EVENT_ID.fullmatch(last_event_id)
        if parsed is None:
            return None
        stream_id, seen = parsed.group(1), int(parsed.group(2))
        cursor = Cursor(int(parsed.group(3) or 0), int(parsed.group(4) or 0))
        # Reconnecting is this era's polling: read at polling's price (eventually
        # consistent, half a read unit), and again consistently when the log looks
        # older than the id the client holds.
        state = self._store.get_stream(stream_id, consistent=False)
        if state is None or seen > len(state.events):
            state = self._store.get_stream(stream_id)
        if state is None or state.owner != owner or seen > len(state.events):
            return None
        if state.done and seen == len(state.events):
            # The client has had the response: nothing will ever follow. (The TypeScript
            # SDK reconnects after a JSON-RPC error response, every ``retry``, for as long
            # as it is told there is a stream; "unknown stream" ends that after two tries.)
            return None
        return self._replay_then_live(state, seen, cursor, notices, log_level)

    def _priming(self, stream_id: str, position: int, cursor: Cursor, retry_ms: int) -> str:
        # Every stream opens with an id-bearing event, so a client always has a
        # fresh cursor even when the stream then carries only notifications. It
        # points at the log position and the notifications had; the nonce keeps ids
        # unique. ``retry`` is the task's pollInterval: reconnecting is this era's polling.
        event_id = _priming_id(stream_id, position, cursor)
        return f"id: {event_id}\nretry: {retry_ms}\ndata: \n\n"

    def _read(self, state: StreamState) -> TaskRecord | dict[str, Any]:
        """The task, or the error response a client gets when it is gone. A waiting
        stream's read may lag a write by about a second (half the price of a
        consistent one): it only delays what the next read shows, and every message
        the log keeps is decided by a conditional append."""
        try:
            return self._tasks.get(state.owner, state.task_id, consistent=False)
        except TaskNotFound as exc:
            error = {"code": INVALID_PARAMS, "message": f"Failed to retrieve task: {exc.reason}"}
            return {"jsonrpc": "2.0", "id": state.request_id, "error": error}

    def _replay_then_live(
        self,
        state: StreamState,
        seen: int,
        cursor: Cursor,
        notices: Notices | None,
        log_level: str | None,
    ) -> Iterator[str]:
        if state.watch_ms is not None and not state.done:
            # The caller came back: its hidden task is still wanted.
            self._tasks.watch(state.task_id, state.watch_ms)
        read: TaskRecord | dict[str, Any] | None = None
        if state.task_id and (not state.done or len(state.events) > seen):
            read = self._read(state)
            if isinstance(read, TaskRecord) and any('"ask"' in marker for marker in state.events[seen:]):
                read = self._still_asking(state, read)
        if isinstance(read, TaskRecord) and len(state.events) > seen:
            # What the client missed before the events it is about to get again.
            claim = self._tasks.progress_claim(state.task_id)
            fresh, cursor = news(read, cursor, log_level=log_level, tagged=not state.hides_task, claim=claim)
            for notification, after in fresh:
                yield sse_event(_cursor_id(state.stream_id, seen, after), notification)
        for index, marker in enumerate(state.events[seen:], start=seen + 1):
            message = self._rebuild(state, json.loads(marker), read)
            if message is not None:
                # Its id keeps the cursor: a client that resumes from it (after answering a
                # question) is not sent again what it has had.
                yield sse_event(_cursor_id(state.stream_id, index, cursor), message)
        retry = read.poll_interval_ms if isinstance(read, TaskRecord) else self._tasks.limits.poll_interval_ms
        # After the replay, so resuming from it never skips a replayed event.
        yield self._priming(state.stream_id, len(state.events), cursor, retry)
        if not state.done and read is not None:
            yield from self._live(state, read, notices, cursor, log_level)

    def _rebuild(
        self, state: StreamState, marker: dict[str, Any], read: TaskRecord | dict[str, Any] | None
    ) -> dict[str, Any] | None:
        """The message a marker stands for, as the client first got it; None for a
        question no longer outstanding (it was answered: asking again would only
        make the client answer twice)."""
        if "jsonrpc" in marker:
            return marker  # a log written before markers: the message itself
        if "message" in marker:
            return marker["message"]  # type: ignore[no-any-return]
        if "ref" in marker:
            try:
                return self._results.load(marker["ref"])
            except ResultUnavailable as gone:
                error = {"code": INTERNAL_ERROR, "message": str(gone)}
                return {"jsonrpc": "2.0", "id": state.request_id, "error": error}
        if not isinstance(read, TaskRecord):
            return read  # the task is gone: what the client gets instead
        tagged = not state.hides_task
        if "response" in marker:
            return self._response(state, read)
        key = marker.get("ask")
        if not isinstance(key, str) or read.status is not TaskStatus.INPUT_REQUIRED:
            return None
        request = read.input_requests.get(key)
        if request is None:
            return None
        return w.elicitation_request(read.task_id, key, request, tagged=tagged)

    def _live(
        self,
        state: StreamState,
        first: TaskRecord | dict[str, Any],
        notices: Notices | None,
        cursor: Cursor,
        log_level: str | None,
        *,
        opening: bool = False,
    ) -> Iterator[str]:
        # Notifications are sent live and never logged: their ids carry the cursor, so a
        # reconnect resumes after the last logged event and sends only newer ones; the
        # stream item is written only for what must not be lost (questions, the response).
        seen = _Seen(cursor=cursor)
        # A plain call's first piece reads often at first (a tool not yet known to be quick
        # runs here too, and its answer should not wait a pollInterval), then at the pollInterval.
        pause = FIRST_READ_SECONDS if opening and state.hides_task else None
        deadline = self._monotonic() + (self._call_piece if state.hides_task else self._budget)
        read = first
        while True:
            handing_over = False
            if isinstance(read, TaskRecord):
                yield from self._task_notices(state, read, seen, log_level)
                due, poll = self._due(state, read), read.poll_interval_ms / 1000
                if due and read.status is TaskStatus.INPUT_REQUIRED:
                    read = self._still_asking(state, read)
                    due = self._due(state, read)
                if not due and self._hand_over_due(state, read):
                    due, handing_over = [self._handle(state, read)], True
            else:
                due, poll = [(_marker({"message": read}), read)], 0.0
            for notice in notices(self._monotonic()) if notices is not None else []:
                yield f"data: {_dumps(notice)}\n\n"
            if due:
                if handing_over:
                    # The model drives the task from here: nobody resumes this stream now.
                    self._tasks.watch(state.task_id, None)
                yield from self._deliver(state, due, seen.cursor)
                # After a question the answer comes as its own POST; after the response, nothing.
                return
            if pause is not None:
                poll, pause = min(pause, poll), min(pause * 2, poll)
            if self._monotonic() + poll > deadline:
                # Nothing due within this stream's budget: the client reconnects
                # after ``retry`` (the task's pollInterval) and this instance is free.
                return
            with self._slots.held(state.owner) as waiting:
                if not waiting:
                    return  # the process is busy: reconnecting later waits just as well
                self._sleep(poll)
            read = self._read(state)

    def _still_asking(self, state: StreamState, read: TaskRecord) -> TaskRecord:
        """The task as it is before one of its questions goes to a plain call's client: a
        read that may lag (half a read's price) could still show a question the client
        already put an end to (notifications/cancelled, or its session closed), and a question
        sent to a call its client gave up on is answered by the session's callback all the
        same, which runs the work on. A question is rare: it costs one consistent read."""
        if not state.hides_task or read.status is not TaskStatus.INPUT_REQUIRED:
            return read
        try:
            return self._tasks.get(state.owner, state.task_id)
        except TaskNotFound:
            return read

    def _task_notices(
        self, state: StreamState, record: TaskRecord, seen: _Seen, log_level: str | None
    ) -> Iterator[str]:
        """The task's status (to a client that knows the task) when it changed, and the
        tool's progress and log lines the client has not had (protocol/wire/task_events.py)."""
        status = w.status_of(record)
        if status != seen.status and not state.hides_task:
            yield f"data: {_dumps(w.status_notification(record))}\n\n"
        seen.status = status
        claim = self._tasks.progress_claim(state.task_id)
        fresh, seen.cursor = news(
            record, seen.cursor, log_level=log_level, tagged=not state.hides_task, claim=claim
        )
        for notification, after in fresh:
            yield sse_event(_cursor_id(state.stream_id, len(state.events), after), notification)

    def _deliver(
        self, state: StreamState, due: list[tuple[str, dict[str, Any]]], cursor: Cursor
    ) -> Iterator[str]:
        """Log what is due (server-to-client requests of every kind, or the response), then
        send it; if another instance appended to this stream first, send what its log holds."""
        asked = [m for _, m in due if "method" in m and "id" in m]
        after = replace(
            state,
            events=state.events + tuple(marker for marker, _ in due),
            done=not asked,
            emitted_keys=state.emitted_keys | {m["id"] for m in asked},
        )
        if self._store.append_events(state, after):
            for offset, (_, message) in enumerate(due, start=len(state.events) + 1):
                yield sse_event(_cursor_id(state.stream_id, offset, cursor), message)
            return
        # Another instance appended to this stream; its log is the truth.
        fresh = self._store.get_stream(state.stream_id)
        if fresh is None:
            return
        current = self._read(fresh)
        for index in range(len(state.events), len(fresh.events)):
            rebuilt = self._rebuild(fresh, json.loads(fresh.events[index]), current)
            if rebuilt is not None:
                yield sse_event(_cursor_id(state.stream_id, index + 1, cursor), rebuilt)

    def _hand_over_due(self, state: StreamState, record: TaskRecord) -> bool:
        return (
            self._hand_over is not None
            and state.hand_over_at_ms is not None
            and not record.status.terminal
            and self._clock() >= state.hand_over_at_ms
        )

    def _handle(self, state: StreamState, record: TaskRecord) -> tuple[str, dict[str, Any]]:
        """The plain call's answer when it is handed over: logged whole (it is small), so
        every replay gives the same one."""
        assert self._hand_over is not None
        message = {"jsonrpc": "2.0", "id": state.request_id, "result": self._hand_over(record)}
        return _marker({"message": message}), message

    def _response(self, state: StreamState, record: TaskRecord) -> dict[str, Any]:
        """A terminal task's response, read for this stream (from the row or S3)."""
        try:
            record = self._tasks.with_result(record)
        except ResultUnavailable as gone:
            # The same clear error on every replay, never a broken stream and a retry
            # that can never succeed.
            record = replace(record, result=None, error={"code": INTERNAL_ERROR, "message": str(gone)})
        return w.payload_message(record, state.request_id, tagged=not state.hides_task)

    def _due(self, state: StreamState, record: TaskRecord) -> list[tuple[str, dict[str, Any]]]:
        """(marker, message) pairs the client must get now and must not lose."""
        tagged = not state.hides_task
        if record.status.terminal:
            return [(_marker(_RESPONSE), self._response(state, record))]
        if record.status is TaskStatus.INPUT_REQUIRED:
            asks = [
                (_marker({"ask": key}), w.elicitation_request(record.task_id, key, request, tagged=tagged))
                for key, request in record.input_requests.items()
            ]
            return [(marker, ask) for marker, ask in asks if ask["id"] not in state.emitted_keys]
        return []
