"""The 2025-11-25 (experimental core) Tasks shapes of a task.

Same record as the 2026 wire; different names (``ttl``/``pollInterval``), a
nested ``CreateTaskResult``, and a tool result with ``isError: true`` reported
as ``failed`` — the stored outcome is mapped here, never rewritten.
"""

from __future__ import annotations

from typing import Any

from ...clock import iso_from_ms
from ...codes import INTERNAL_ERROR
from ...domain.model import Outcome, TaskRecord, TaskStatus
from ..wire.versions import HANDSHAKE, served_by

PROTOCOL_VERSION = HANDSHAKE
SUPPORTED_VERSIONS = served_by(HANDSHAKE)
RELATED_TASK = "io.modelcontextprotocol/related-task"
ELICIT_ID_PREFIX = "tg-elicit:"


def status_of(record: TaskRecord) -> str:
    if record.status is TaskStatus.COMPLETED and record.outcome is Outcome.TOOL_ERROR:
        return TaskStatus.FAILED.value
    return record.status.value


def task_fields(record: TaskRecord) -> dict[str, Any]:
    out: dict[str, Any] = {
        "taskId": record.task_id,
        "status": status_of(record),
        "createdAt": iso_from_ms(record.created_at_ms),
        "lastUpdatedAt": iso_from_ms(record.last_updated_at_ms),
        "ttl": record.ttl_ms,
        "pollInterval": record.poll_interval_ms,
    }
    if record.status_message:
        out["statusMessage"] = record.status_message
    return out


def create_task_result(record: TaskRecord) -> dict[str, Any]:
    return {"task": task_fields(record)}


def related(task_id: str | None) -> dict[str, Any]:
    """The related-task ``_meta`` entry, or nothing where no task is to be named."""
    return {RELATED_TASK: {"taskId": task_id}} if task_id is not None else {}


def payload_message(record: TaskRecord, request_id: Any, *, tagged: bool = True) -> dict[str, Any]:
    """What ``tasks/result`` answers for a terminal task: exactly what the original
    ``tools/call`` would have returned, tagged with the related task (untagged, it is
    that plain call's own response)."""
    tag = related(record.task_id if tagged else None)
    if record.status is TaskStatus.COMPLETED and record.result is not None:
        result = dict(record.result)
        meta = {**(result.get("_meta") or {}), **tag}
        if meta:
            result["_meta"] = meta
        return {"jsonrpc": "2.0", "id": request_id, "result": result}
    if record.status is TaskStatus.CANCELLED:
        error: dict[str, Any] = {"code": INTERNAL_ERROR, "message": "The task was cancelled"}
    else:
        error = dict(record.error or {"code": INTERNAL_ERROR, "message": "The task failed"})
    # The related task rides in ``data`` where that can hold it without changing what the
    # tool sent: an object gains the key, an absent ``data`` becomes one. Any other
    # ``data`` (a string, a list, a number) is the tool's and comes back exactly as it was.
    if "data" not in error or error["data"] is None:
        if tag:
            error["data"] = dict(tag)
    elif isinstance(error["data"], dict):
        error["data"] = {**error["data"], **tag}
    return {"jsonrpc": "2.0", "id": request_id, "error": error}


def status_notification(record: TaskRecord) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "method": "notifications/tasks/status", "params": task_fields(record)}


def progress_notification(record: TaskRecord, progress: int, *, tagged: bool = True) -> dict[str, Any]:
    params: dict[str, Any] = {"progressToken": record.progress_token, "progress": progress}
    if record.status_message:
        params["message"] = record.status_message
    if tagged:
        params["_meta"] = related(record.task_id)
    return {"jsonrpc": "2.0", "method": "notifications/progress", "params": params}


def elicitation_request(
    task_id: str, key: str, request: dict[str, Any], *, tagged: bool = True
) -> dict[str, Any]:
    """A stored input request, sent as a server-to-client request whose id says
    which task and question the client's answer belongs to."""
    params = dict(request.get("params") or {})
    meta = {**(params.get("_meta") or {}), **related(task_id if tagged else None)}
    if meta:
        params["_meta"] = meta
    else:
        params.pop("_meta", None)
    return {
        "jsonrpc": "2.0",
        "id": f"{ELICIT_ID_PREFIX}{task_id}:{key}",
        "method": request.get("method", "elicitation/create"),
        "params": params,
    }


def parse_elicitation_id(msg_id: Any) -> tuple[str, str] | None:
    if not isinstance(msg_id, str) or not msg_id.startswith(ELICIT_ID_PREFIX):
        return None
    task_id, sep, key = msg_id[len(ELICIT_ID_PREFIX) :].partition(":")
    return (task_id, key) if sep and task_id and key else None
