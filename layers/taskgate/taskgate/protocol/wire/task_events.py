"""What a running task has to tell the client waiting on it: the tool's progress numbers
and log lines, kept in the task row (domain/progress.py), as MCP notifications.

A stream remembers how far its client got as a ``Cursor`` (progress reports and log
lines had), which travels in the SSE event ids the client echoes on resume
(protocol/v2025/streams.py): no resume sends a log line twice. A progress notification is
sent only once a conditional write has raised the task's highest value sent for its token
(``claim``, domain/progress.py): whatever a stream's cursor says, and however many streams
read the task, no value is sent twice and none goes backwards.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from ...domain.model import LogLine, Progress, TaskRecord
from ...domain.progress import ProgressClaim
from ...tools.peer import at_least

RELATED_TASK = "io.modelcontextprotocol/related-task"


class Cursor(NamedTuple):
    """How far a client has read a task's progress and log lines."""

    # Progress reports and log lines the client has had.
    progress: int = 0
    logs: int = 0


def progress_notification(
    token: str | int, progress: Progress, *, task_id: str | None = None
) -> dict[str, Any]:
    params: dict[str, Any] = {"progressToken": token, **progress.to_json()}
    if task_id is not None:
        params["_meta"] = {RELATED_TASK: {"taskId": task_id}}
    return {"jsonrpc": "2.0", "method": "notifications/progress", "params": params}


def log_notification(line: LogLine, *, task_id: str | None = None) -> dict[str, Any]:
    params: dict[str, Any] = line.to_json()
    if task_id is not None:
        params["_meta"] = {RELATED_TASK: {"taskId": task_id}}
    return {"jsonrpc": "2.0", "method": "notifications/message", "params": params}


def news(
    record: TaskRecord,
    cursor: Cursor,
    *,
    log_level: str | None,
    tagged: bool,
    claim: ProgressClaim,
) -> tuple[list[tuple[dict[str, Any], Cursor]], Cursor]:
    """The notifications the client has not had, each with the cursor after it, and the
    cursor after all of them: the log lines since (at ``log_level`` or above; lines that
    fell out of the row's window are gone), then the latest progress (to a client that
    sent a progressToken), once per report however many were made since, and only when
    ``claim`` says its value is above every one sent for the token."""
    task_id = record.task_id if tagged else None
    out: list[tuple[dict[str, Any], Cursor]] = []
    first_kept = record.log_count - len(record.log_lines)
    for number in range(max(cursor.logs, first_kept), record.log_count):
        cursor = Cursor(cursor.progress, number + 1)
        line = record.log_lines[number - first_kept]
        if log_level is not None and at_least(line.level, log_level):
            out.append((log_notification(line, task_id=task_id), cursor))
    cursor = Cursor(cursor.progress, max(cursor.logs, record.log_count))
    if record.progress_count > cursor.progress and record.progress is not None:
        cursor = Cursor(record.progress_count, cursor.logs)
        token = record.progress_token
        if token is not None and claim(token, record.progress.progress):
            out.append((progress_notification(token, record.progress, task_id=task_id), cursor))
    return out, cursor
