"""EventPublisher on EventBridge: the wake-ups on the stack's bus (``PutEvents``, ten a call,
in order). An entry the bus refuses stops the run there: the change stream delivers it, and
every change after it, again (a consumer drops the copies by their key)."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from ..domain.wake_ups import SOURCE, WakeUp
from .aws_errors import translating

# PutEvents takes at most ten entries a call.
_PER_CALL = 10


class EventBridgePublisher:
    def __init__(self, client: Callable[[], Any], bus: str) -> None:
        self._client = client
        self._bus = bus

    @translating
    def publish(self, events: list[WakeUp]) -> int:
        went = 0
        for start in range(0, len(events), _PER_CALL):
            chunk = events[start : start + _PER_CALL]
            resp = self._client().put_events(
                Entries=[
                    {
                        "Source": SOURCE,
                        "DetailType": event.detail_type,
                        "Detail": json.dumps(event.detail, separators=(",", ":"), ensure_ascii=False),
                        "EventBusName": self._bus,
                        "Resources": [],
                    }
                    for event in chunk
                ]
            )
            for entry in resp.get("Entries", []):
                if entry.get("ErrorCode"):
                    return went
                went += 1
        return went
