"""What a running task tells its caller besides its status: the progress numbers its tool
reports and the lines it logs, kept in the task row for the streams that carry them to
the caller (domain/worker.py writes them; protocol/wire/task_events.py reads them).

Progress only goes forward (MCP: each notification's ``progress`` value must increase). A tool
that asks runs again from the top once answered, and one that checkpoints resumes in a new
step, so the values it reports may repeat or fall. Two writes keep what a client sees rising:
the step stores a report's numbers only when they rise above the row's (its statusMessage and
log lines are stored whatever the value, so they still tell what happens), and a stream sends a
progress notification only after a conditional write has raised the highest value sent for its
token on the task (``TaskStore.claim_progress``), so no replay, resumed piece or second stream
sends a value twice or a lower one.

A row holds at most 400 KB, so what it keeps of them is bounded: the last progress
report (its message cut like a statusMessage) and a window of the latest log lines, each
line and the window as a whole within a byte budget; older lines fall out of the window,
and the count of lines logged tells a reader how many it missed.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..text import cut
from .limits import MAX_STATUS_MESSAGE_BYTES, json_size
from .model import LogLine, Progress, TaskRecord

# The window of log lines a row keeps.
MAX_LOG_LINES = 20
MAX_LOG_LINE_BYTES = 1_024
MAX_LOG_BYTES = 8_192


@dataclass(frozen=True)
class ProgressReport:
    """One write of a working task's progress: the statusMessage, the last numbers and
    the log window, each whole (the step is the row's only writer while it runs, so it
    keeps them and writes them as they are)."""

    message: str
    progress: Progress | None
    progress_count: int
    log_lines: tuple[LogLine, ...]
    log_count: int


def with_report(row: TaskRecord, report: ProgressReport) -> TaskRecord:
    """``row`` as it reads once ``report`` is written (to size the write before it is sent)."""
    return dataclasses.replace(
        row,
        status_message=report.message,
        progress=report.progress,
        progress_count=report.progress_count,
        log_lines=report.log_lines,
        log_count=report.log_count,
    )


# Whether a progress value may be sent for a token now (TaskService.claim_progress, bound to a task).
ProgressClaim = Callable[[str | int, float], bool]


def progress_key(token: str | int) -> str:
    """A progress token as the task keeps its highest value sent: 1 and "1" are two tokens."""
    return json.dumps(token, separators=(",", ":"))


def rises(progress: Progress | None, value: float) -> bool:
    """Whether a report of ``value`` moves the stored numbers forward."""
    return progress is None or value > progress.progress


def bounded_progress(value: float, total: float | None, message: str | None) -> Progress:
    return Progress(value, total, cut(message, MAX_STATUS_MESSAGE_BYTES) if message is not None else None)


def bounded_line(level: str, data: Any) -> LogLine:
    """A line as kept: data past its budget becomes its text, cut."""
    if json_size(data) <= MAX_LOG_LINE_BYTES:
        return LogLine(level, data)
    text = data if isinstance(data, str) else str(data)
    return LogLine(level, cut(text, MAX_LOG_LINE_BYTES - 16))


def with_line(window: tuple[LogLine, ...], line: LogLine) -> tuple[LogLine, ...]:
    """``window`` with ``line`` added and its oldest lines dropped past the bounds."""
    kept = [*window, line][-MAX_LOG_LINES:]
    while len(kept) > 1 and sum(json_size(x.to_json()) for x in kept) > MAX_LOG_BYTES:
        kept.pop(0)
    return tuple(kept)


def window_size(lines: tuple[LogLine, ...]) -> int:
    return json_size([x.to_json() for x in lines]) if lines else 0
