"""The 2026-07-28 ``io.modelcontextprotocol/tasks`` extension's shapes of a task."""

from __future__ import annotations

from typing import Any

from ...clock import iso_from_ms
from ...codes import INTERNAL_ERROR
from ...domain.model import TaskRecord, TaskStatus
from ..wire.versions import STATELESS, VERSION_META

EXTENSION = "io.modelcontextprotocol/tasks"
PROTOCOL_VERSION = STATELESS
META_PROTOCOL_VERSION = VERSION_META
META_CLIENT_CAPABILITIES = "io.modelcontextprotocol/clientCapabilities"
META_SERVER_INFO = "io.modelcontextprotocol/serverInfo"
# The request's log level (SEP-2575): without it, no notifications/message for the request.
META_LOG_LEVEL = "io.modelcontextprotocol/logLevel"


def declares_tasks(meta: dict[str, Any]) -> bool:
    caps = meta.get(META_CLIENT_CAPABILITIES)
    if not isinstance(caps, dict):
        return False
    extensions = caps.get("extensions")
    return isinstance(extensions, dict) and EXTENSION in extensions


def missing_capability_data() -> dict[str, Any]:
    return {"requiredCapabilities": {"extensions": {EXTENSION: {}}}}


def input_required(requests: dict[str, Any], request_state: str | None) -> dict[str, Any]:
    """An ``InputRequiredResult``: the questions (none: a round that only carries the call
    on), and the sealed state the next round echoes."""
    result: dict[str, Any] = {"resultType": "input_required"}
    if requests or request_state is None:
        result["inputRequests"] = requests
    if request_state is not None:
        result["requestState"] = request_state
    return result


def task_fields(record: TaskRecord) -> dict[str, Any]:
    out: dict[str, Any] = {
        "taskId": record.task_id,
        "status": record.status.value,
        "createdAt": iso_from_ms(record.created_at_ms),
        "lastUpdatedAt": iso_from_ms(record.last_updated_at_ms),
        "ttlMs": record.ttl_ms,
        "pollIntervalMs": record.poll_interval_ms,
    }
    if record.status_message:
        out["statusMessage"] = record.status_message
    return out


def create_task_result(record: TaskRecord) -> dict[str, Any]:
    return {"resultType": "task", **task_fields(record)}


def detailed_task(record: TaskRecord) -> dict[str, Any]:
    """A ``DetailedTask``: the result or error inline once terminal, questions while parked.

    A tool result with ``isError: true`` is ``completed`` in this era, so the
    stored outcome needs no mapping here.
    """
    out = {"resultType": "complete", **task_fields(record)}
    if record.status is TaskStatus.COMPLETED and record.result is not None:
        out["result"] = {"resultType": "complete", **record.result}
    elif record.status is TaskStatus.FAILED:
        out["error"] = record.error or {"code": INTERNAL_ERROR, "message": "The task failed"}
    elif record.status is TaskStatus.INPUT_REQUIRED:
        out["inputRequests"] = record.input_requests
    return out
