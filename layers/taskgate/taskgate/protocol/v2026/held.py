"""A 2026-07-28 plain call held open on a front that streams (``Plan.HOLD``).

The caller did not opt in to tasks, so it may not be given one, and this era's streams
cannot be resumed. Where the front passes bytes on as they are written (API Gateway's
REST API with response streaming: up to 15 minutes), the call is held: its hidden task
runs on the worker as any task does, and this stream reads the task row at its
pollInterval and sends what is new (the tool's progress numbers and log lines), then
the response. A call still running when the caller's wait is up is answered with a job
handle instead. Closing the stream is this era's cancellation: a caller that goes away
takes its task with it.

Each held call holds one of its owner's few places (domain/holds.py, counted in the table):
deployed, a held call is a Lambda execution of its own for as long as it lasts, and one
owner must not take the account's concurrency from everyone. A call that finds its owner's
places all held is handed over at once (a task handle, as when the wait is up), or, with
handles off, refused. Locally its waits count against its owner's share of the process's
slots, not everyone's.
"""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import Callable, Iterator
from typing import Any

from ...clock import now_ms
from ...codes import INTERNAL_ERROR
from ...domain.errors import TaskgateError, TaskNotFound
from ...domain.holds import Holds
from ...domain.model import TaskRecord, TaskStatus
from ...domain.service import TaskService
from ..calls.handle_tools import handed
from ..calls.slots import InlineSlots
from ..wire.task_events import Cursor, news

# A comment line when nothing else was sent for this long: idle streams are closed by
# intermediaries (API Gateway's idle timeout is 5 minutes on regional endpoints).
KEEP_ALIVE_SECONDS = 15.0


def _event(message: dict[str, Any]) -> str:
    return f"event: message\ndata: {json.dumps(message, separators=(',', ':'), ensure_ascii=False)}\n\n"


def _response(record: TaskRecord, request_id: Any) -> dict[str, Any]:
    """What the plain call would have answered had it run inline."""
    if record.status is TaskStatus.COMPLETED and record.result is not None:
        return {"jsonrpc": "2.0", "id": request_id, "result": {"resultType": "complete", **record.result}}
    if record.status is TaskStatus.CANCELLED:
        error: dict[str, Any] = {"code": INTERNAL_ERROR, "message": "The call was cancelled"}
    else:
        error = dict(record.error or {"code": INTERNAL_ERROR, "message": "The call failed"})
    return {"jsonrpc": "2.0", "id": request_id, "error": error}


class HeldCalls:
    def __init__(
        self,
        tasks: TaskService,
        slots: InlineSlots,
        *,
        holds: Holds | None = None,
        watch_ms: int,
        refresh_seconds: float,
        sleep: Callable[[float], None] = time.sleep,
        monotonic: Callable[[], float] = time.monotonic,
        clock: Callable[[], int] = now_ms,
    ) -> None:
        self._tasks = tasks
        self._slots = slots
        self._holds = holds
        self._watch_ms = watch_ms
        self._refresh = refresh_seconds
        self._sleep = sleep
        self._monotonic = monotonic
        self._clock = clock

    def stream(
        self,
        owner: str,
        record: TaskRecord,
        request_id: Any,
        *,
        log_level: str | None,
        hand_over_at_ms: int | None,
        expected_seconds: float | None,
    ) -> Iterator[str]:
        hold = self._holds.take(owner) if self._holds is not None else None
        if self._holds is not None and hold is None:
            yield _event(self._no_place(owner, record, request_id, hand_over_at_ms, expected_seconds))
            return
        answered = False
        try:
            cursor = Cursor()
            read = record
            sent = watched = self._monotonic()
            while True:
                fresh, cursor = news(read, cursor, log_level=log_level, tagged=False)
                for notification, _ in fresh:
                    sent = self._monotonic()
                    yield _event(notification)
                final = self._final(owner, read, request_id, hand_over_at_ms, expected_seconds)
                if final is not None:
                    answered = True
                    yield _event(final)
                    return
                if self._monotonic() - sent >= KEEP_ALIVE_SECONDS:
                    sent = self._monotonic()
                    yield ": keep-alive\n\n"
                if self._monotonic() - watched >= self._refresh:
                    # Still held: if this instance dies, the task is not kept for nobody,
                    # nor its owner's place.
                    watched = self._monotonic()
                    self._tasks.watch(read.task_id, self._watch_ms)
                    if hold is not None:
                        hold.renew()
                with self._slots.held(owner):
                    self._sleep(read.poll_interval_ms / 1000)
                try:
                    read = self._tasks.get(owner, read.task_id, consistent=False)
                except TaskNotFound as gone:
                    answered = True
                    error = {"code": INTERNAL_ERROR, "message": f"The call's work is gone: {gone.reason}"}
                    yield _event({"jsonrpc": "2.0", "id": request_id, "error": error})
                    return
        finally:
            if not answered:
                # The stream closed under us: in this era that is the caller cancelling.
                with contextlib.suppress(TaskgateError):
                    self._tasks.cancel(owner, record.task_id)
            if hold is not None:
                with contextlib.suppress(TaskgateError):
                    hold.release()  # else its lease runs out

    def _no_place(
        self,
        owner: str,
        record: TaskRecord,
        request_id: Any,
        hand_over_at_ms: int | None,
        expected_seconds: float | None,
    ) -> dict[str, Any]:
        """The answer to a call whose owner holds all its places: its task handle at once,
        or (handles off) a refusal, and its task cancelled."""
        if hand_over_at_ms is not None:
            self._tasks.watch(record.task_id, None)
            return {
                "jsonrpc": "2.0",
                "id": request_id,
                "result": {"resultType": "complete", **handed(record, expected_seconds)},
            }
        with contextlib.suppress(TaskgateError):
            self._tasks.cancel(owner, record.task_id)
        places = self._holds.places if self._holds is not None else 0
        message = f"Server busy: you already have {places} calls held open; try again when one ends"
        return {"jsonrpc": "2.0", "id": request_id, "error": {"code": INTERNAL_ERROR, "message": message}}

    def _final(
        self,
        owner: str,
        record: TaskRecord,
        request_id: Any,
        hand_over_at_ms: int | None,
        expected_seconds: float | None,
    ) -> dict[str, Any] | None:
        """The call's response, once there is one."""
        if record.status.terminal:
            return _response(self._tasks.with_result(record), request_id)
        if record.status is TaskStatus.INPUT_REQUIRED:
            # This era sends no requests on a response stream, and a held call has no
            # round to carry the questions in: only a client that speaks tasks can answer.
            self._tasks.cancel(owner, record.task_id)
            error = {
                "code": INTERNAL_ERROR,
                "message": f"Tool {record.tool} asked for input while it ran; call it as a task to answer it",
            }
            return {"jsonrpc": "2.0", "id": request_id, "error": error}
        if hand_over_at_ms is not None and self._clock() >= hand_over_at_ms:
            self._tasks.watch(record.task_id, None)
            return {
                "jsonrpc": "2.0",
                "id": request_id,
                "result": {"resultType": "complete", **handed(record, expected_seconds)},
            }
        return None
