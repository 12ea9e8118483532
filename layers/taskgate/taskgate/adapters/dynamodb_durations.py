"""DurationStore on DynamoDB (domain/durations.py), in the task table under ``tool#…`` keys.

Like the session items, they carry no ``ownerId``: the owner index never sees them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..domain.ports import Clock
from .aws_errors import translating
from .dynamodb_items import conditional, expires_at, expires_at_ms, n, s


class DynamoDBDurationStore:
    def __init__(self, client: Callable[[], Any], table_name: str, clock: Clock) -> None:
        # A client factory, asked at every call (see DynamoDBTaskStore).
        self._client = client
        self._table = table_name
        self._clock = clock

    @translating
    def longest_step_ms(self, key: str) -> int | None:
        # Eventually consistent (half the price): a figure a second late only delays learning.
        item = self._client().get_item(TableName=self._table, Key={"taskId": s(key)}).get("Item")
        if item is None or expires_at_ms(item) <= self._clock():
            return None
        return int(item["longestStepMs"]["N"])

    @translating
    def raise_longest_step(self, key: str, ms: int, now_ms: int, expires_at_ms: int) -> bool:
        written = conditional(
            self._client().update_item,
            TableName=self._table,
            Key={"taskId": s(key)},
            UpdateExpression="SET longestStepMs = :ms, kind = :kind, notedAt = :now, expiresAt = :exp",
            # Only upwards; an expired item (DynamoDB deletes late) is no figure any more.
            ConditionExpression="attribute_not_exists(taskId) OR longestStepMs < :ms OR expiresAt <= :nowS",
            ExpressionAttributeValues={
                ":ms": n(ms),
                ":kind": s("duration"),
                ":now": n(now_ms),
                ":exp": expires_at(expires_at_ms),
                ":nowS": expires_at(now_ms),
            },
        )
        return written is not None
