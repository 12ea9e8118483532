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
progress numbers and log lines) is passed to ``news`` as notifications, for a reply that
can carry them.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

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
        sleep: Callable[[float], None] = time.sleep,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self._tasks = tasks
        self._slots = slots
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
        deadline = self._monotonic() + seconds
        cursor = Cursor(record.progress_count, record.log_count)
        pause = FIRST_READ_SECONDS
        read = record
        while not settled(read):
            left = deadline - self._monotonic()
            if left <= 0:
                break
            # A waiting request holds a thread of a process serving many (the local server):
            # it counts as inline work, and a busy process answers now rather than queue.
            with self._slots.held(owner) as waiting:
                if not waiting:
                    break
                self._sleep(min(pause, left))
            pause = min(pause * 2, read.poll_interval_ms / 1000)
            read = self._tasks.get(owner, read.task_id)
            if news_to is not None:
                fresh, cursor = news(read, cursor, log_level=log_level, tagged=False)
                for notification, _ in fresh:
                    news_to(notification)
        return read
