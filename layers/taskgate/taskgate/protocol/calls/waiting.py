"""A request waiting on a hidden task's row, within its budget (``RowWait``).

A plain call that became a hidden task (protocol/calls/plan.py ``Plan.WAIT``) and a handle's
``taskgate_task_result`` both answer from the task's row: the API invocation reads the row
until the task has ended, asks a question, or the request's budget (what its caller waits,
within its front's cut: ``Caller.budget_seconds``) is up, and answers from the last read.
The work itself runs in the worker, started before this wait: nothing of it runs in the API
invocation, which may be frozen the moment it has answered (Lambda).

Reads start often and slow down to the task's ``pollInterval``: a quick tool's answer is not
held back by a second's poll, and a long one costs a read a second (a strongly consistent
GetItem: a wait that ends a read early answers sooner). What the tool reports meanwhile (its
progress numbers and log lines) is passed to ``news_to`` as notifications, for a reply that
can carry them.

A waiting request is long-lived as a held call is: it takes one of its owner's places
(domain/holds.py) for as long as it waits, and one whose owner holds them all does not wait
(its caller is answered from the row as it is: a handle, or "ask again").
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable
from typing import Any

from ...domain.errors import TaskgateError
from ...domain.holds import Hold, Holds
from ...domain.model import TaskRecord, TaskStatus
from ...domain.service import TaskService
from ..wire.task_events import Cursor, news
from .slots import InlineSlots

# The first read after this long, each next one after twice as long, up to the pollInterval.
FIRST_READ_SECONDS = 0.05

News = Callable[[dict[str, Any]], None]


def settled(record: TaskRecord) -> bool:
    """Whether there is something to answer from this read: the task ended, or it asks."""
    return record.status.terminal or record.status is TaskStatus.INPUT_REQUIRED


class RowWait:
    def __init__(
        self,
        tasks: TaskService,
        slots: InlineSlots,
        *,
        holds: Holds | None = None,
        sleep: Callable[[float], None] = time.sleep,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self._tasks = tasks
        self._slots = slots
        self._holds = holds
        self._sleep = sleep
        self._monotonic = monotonic

    def wait(
        self,
        owner: str,
        record: TaskRecord,
        seconds: float,
        *,
        news_to: News | None = None,
        log_level: str | None = None,
    ) -> TaskRecord:
        """The task as last read: ended, asking, or still working when ``seconds`` are up.
        ``news_to`` is given each progress and log notification (at ``log_level`` or above)
        the tool reports meanwhile. A TaskNotFound (the task expired) is raised."""
        return self.wait_for(owner, record, seconds, news_to=news_to, log_level=log_level)[0]

    def wait_for(
        self,
        owner: str,
        record: TaskRecord,
        seconds: float,
        *,
        news_to: News | None = None,
        log_level: str | None = None,
    ) -> tuple[TaskRecord, float]:
        """``wait``, and how long it waited (0: not at all, as when its owner holds every place)."""
        if settled(record) or seconds <= 0:
            return record, 0.0
        hold = self._holds.take(owner) if self._holds is not None else None
        if self._holds is not None and hold is None:
            return record, 0.0  # its owner holds every place: no wait for this one
        start = self._monotonic()
        try:
            read = self._wait(owner, record, seconds, hold, news_to, log_level)
            return read, self._monotonic() - start
        finally:
            if hold is not None:
                with contextlib.suppress(TaskgateError):
                    hold.release()  # else its lease runs out

    def _wait(
        self,
        owner: str,
        record: TaskRecord,
        seconds: float,
        hold: Hold | None,
        news_to: News | None,
        log_level: str | None,
    ) -> TaskRecord:
        start = self._monotonic()
        deadline, renewed = start + seconds, start
        cursor = Cursor(record.progress_count, record.log_count)
        pause = FIRST_READ_SECONDS
        read = record
        while not settled(read):
            now = self._monotonic()
            left = deadline - now
            if left <= 0:
                break
            if (
                hold is not None
                and self._holds is not None
                and (now - renewed) * 2000 >= self._holds.lease_ms
            ):
                # Renewed at half its lease: a wait longer than the lease keeps its place.
                renewed = now
                hold.renew()
            # A waiting request holds a thread of a process serving many (the local server):
            # it counts as inline work, and a busy process answers now rather than queue.
            with self._slots.held(owner) as waiting:
                if not waiting:
                    break
                self._sleep(min(pause, left))
            pause = min(pause * 2, read.poll_interval_ms / 1000)
            read = self._tasks.get(owner, read.task_id)
            if news_to is not None:
                claim = self._tasks.progress_claim(read.task_id)
                fresh, cursor = news(read, cursor, log_level=log_level, tagged=False, claim=claim)
                for notification, _ in fresh:
                    news_to(notification)
        return read
