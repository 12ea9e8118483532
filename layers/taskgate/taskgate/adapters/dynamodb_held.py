"""HeldStore on DynamoDB: one item per owner in the task table, ``held#<owner>``.

Item layout: taskId S (``held#`` + the owner) · leases M (lease id -> M {kind S, until N
epoch ms}) · expiresAt N (the table's TTL: an hour past the latest lease taken, so an
owner's item outlives every lease in it and then goes). Like the session items it carries
no ``ownerId``: the owner index never lists it.

A take is one conditional write (``size(leases) < :cap``), so two instances taking at once
never pass the cap between them. A write that finds the cap reached looks once at the item:
leases past their end (their instance died, or never released them) are removed, and the
take is tried again.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..domain.held import Lease
from .aws_errors import translating
from .dynamodb_items import conditional, expires_at, n, s

# A take that loses a race for the last slot, or finds leases to prune, tries again.
_ATTEMPTS = 4
# How long an owner's item outlives the latest lease written to it.
_KEEP_MS = 3_600_000


def _lease_value(lease: Lease) -> dict[str, Any]:
    return {"M": {"kind": s(lease.kind), "until": n(lease.until_ms)}}


def _leases(item: dict[str, Any] | None) -> list[Lease]:
    entries = ((item or {}).get("leases") or {}).get("M", {})
    return [
        Lease(lease_id, value["M"]["kind"]["S"], int(value["M"]["until"]["N"]))
        for lease_id, value in entries.items()
    ]


class DynamoDBHeldStore:
    def __init__(self, client: Callable[[], Any], table_name: str) -> None:
        # A client factory, asked at every call (see DynamoDBTaskStore).
        self._client = client
        self._table = table_name

    @property
    def _ddb(self) -> Any:
        return self._client()

    def _key(self, owner: str) -> dict[str, Any]:
        return {"taskId": s(f"held#{owner}")}

    def _item(self, owner: str) -> dict[str, Any] | None:
        found: dict[str, Any] | None = self._ddb.get_item(
            TableName=self._table, Key=self._key(owner), ConsistentRead=True
        ).get("Item")
        return found

    @translating
    def take(self, owner: str, lease: Lease, *, cap: int, now_ms: int) -> bool:
        values = {":lease": _lease_value(lease), ":exp": expires_at(lease.until_ms + _KEEP_MS)}
        for _ in range(_ATTEMPTS):
            added = conditional(
                self._ddb.update_item,
                TableName=self._table,
                Key=self._key(owner),
                UpdateExpression="SET leases.#id = :lease, expiresAt = :exp",
                ConditionExpression="attribute_exists(leases) AND size(leases) < :cap",
                ExpressionAttributeNames={"#id": lease.lease_id},
                ExpressionAttributeValues={**values, ":cap": n(cap)},
            )
            if added is not None:
                return True
            leases = _leases(self._item(owner))
            if not leases:
                # The owner's first lease (or an item emptied since): the map itself.
                first = conditional(
                    self._ddb.update_item,
                    TableName=self._table,
                    Key=self._key(owner),
                    UpdateExpression="SET leases = :leases, expiresAt = :exp",
                    ConditionExpression="attribute_not_exists(leases) OR size(leases) = :zero",
                    ExpressionAttributeValues={
                        ":leases": {"M": {lease.lease_id: _lease_value(lease)}},
                        ":exp": values[":exp"],
                        ":zero": n(0),
                    },
                )
                if first is not None:
                    return True
                continue
            ended = [held.lease_id for held in leases if held.until_ms <= now_ms]
            if not ended:
                return False
            # Expired leases are nobody's: removing them needs no condition.
            names = {f"#e{i}": lease_id for i, lease_id in enumerate(ended)}
            conditional(
                self._ddb.update_item,
                TableName=self._table,
                Key=self._key(owner),
                UpdateExpression="REMOVE " + ", ".join(f"leases.{name}" for name in names),
                ConditionExpression="attribute_exists(leases)",
                ExpressionAttributeNames=names,
            )
        return False

    @translating
    def release(self, owner: str, lease_id: str) -> None:
        # Conditional, so that releasing never creates an item for an owner who has none.
        conditional(
            self._ddb.update_item,
            TableName=self._table,
            Key=self._key(owner),
            UpdateExpression="REMOVE leases.#id",
            ConditionExpression="attribute_exists(leases)",
            ExpressionAttributeNames={"#id": lease_id},
        )

    @translating
    def open_leases(self, owner: str, now_ms: int) -> list[Lease]:
        return [lease for lease in _leases(self._item(owner)) if lease.until_ms > now_ms]
