"""TaskEventsFunction: the table's change stream -> wake-ups on the stack's event bus.

The event source mapping hands over a batch of the stream's records, already filtered to the
changes worth an event (a task that ended, one that started waiting for an answer:
``taskgate.domain.wake_ups.FILTER_PATTERNS``), a row's records in the order they were written.
Each becomes an event with its idempotency key; a record whose event the bus refused is
reported, so the stream delivers it, and every record after it, again.
"""

# ruff: noqa: E402 (the layers' architecture is checked before the first native import)
from __future__ import annotations

from taskgate.layer_check import check_layer_architecture

check_layer_architecture()

from typing import Any

from aws_lambda_powertools import Logger

from taskgate import wiring
from taskgate.adapters.dynamodb_changes import change_of

logger = Logger()

_root = wiring.root()
_root.settings.require("task_event_bus")
_wake_ups = _root.wake_ups


@logger.inject_lambda_context(clear_state=True)
def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    records = event.get("Records") or []
    failed = _wake_ups.publish([change_of(record) for record in records])
    if failed is None:
        return {"batchItemFailures": []}
    sequence = records[failed]["dynamodb"]["SequenceNumber"]
    logger.warning("the bus refused an event; the stream delivers it again", extra={"sequence": sequence})
    return {"batchItemFailures": [{"itemIdentifier": sequence}]}
