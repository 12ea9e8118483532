"""The table's change stream (DynamoDB Streams, NEW_AND_OLD_IMAGES) as the domain reads it:
a record of a write to a task row becomes a ``TaskChange``; any other record (a session, a
lease, a row's removal) is None."""

from __future__ import annotations

from typing import Any

from ..domain.wake_ups import TaskChange


def _text(image: dict[str, Any], name: str) -> str | None:
    value = image.get(name)
    return value.get("S") if isinstance(value, dict) else None


def _number(image: dict[str, Any], name: str) -> int | None:
    value = image.get(name)
    raw = value.get("N") if isinstance(value, dict) else None
    return int(raw) if isinstance(raw, str) and raw.lstrip("-").isdigit() else None


def change_of(record: dict[str, Any]) -> TaskChange | None:
    stream = record.get("dynamodb") or {}
    new, old = stream.get("NewImage") or {}, stream.get("OldImage") or {}
    task_id, owner = _text(new, "taskId"), _text(new, "ownerId")
    new_status, old_status = _text(new, "status"), _text(old, "status")
    if record.get("eventName") != "MODIFY" or not (task_id and owner and new_status and old_status):
        return None
    return TaskChange(
        task_id=task_id,
        owner=owner,
        tool=_text(new, "tool") or "",
        old_status=old_status,
        new_status=new_status,
        version=_number(new, "rowVersion"),
        old_version=_number(old, "rowVersion"),
        sequence=str(stream.get("SequenceNumber", "")),
        status_message=_text(new, "statusMessage"),
        created_at=_text(new, "createdAt") or "",
        last_updated_at=_text(new, "lastUpdatedAt") or "",
    )
