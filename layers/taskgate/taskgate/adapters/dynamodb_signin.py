"""SignInStore on DynamoDB, in the task table: registered clients (``client#``), pending
sign-ins (``pending#``), authorization codes (``code#``), refresh-token families (``grant#``),
consents (``consent#``), cached Client ID Metadata Documents (``cimd#``) and registration
counters (``limit#``), each with the table's TTL attribute.

These items carry no ``ownerId`` attribute, so the owner index never sees them. A record is
one JSON attribute; the few attributes a condition reads are top-level beside it.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from typing import Any

from botocore.exceptions import ClientError

from ..auth.state import ClientRecord, CodeRecord, CodeUse, GrantRecord, PendingSignIn, digest
from .aws_errors import error_code, translating
from .dynamodb_items import CONDITION_FAILED, conditional, dumps, n, s

MAX_KEY_PART = 200


def _part(value: str) -> str:
    # Keys the caller chooses (client ids, URLs) can be long or odd; the key stays short.
    return value if len(value) <= MAX_KEY_PART and value.isprintable() else "sha256:" + digest(value)


def _record(obj: Any) -> dict[str, str]:
    return s(dumps(dataclasses.asdict(obj)))


def _load[T](cls: type[T], item: dict[str, Any]) -> T:
    values = json.loads(item["record"]["S"])
    fields = {f.name: f for f in dataclasses.fields(cls)}  # type: ignore[arg-type]
    for name, value in values.items():
        if isinstance(value, list) and name in fields:
            values[name] = tuple(value)
    return cls(**values)


class DynamoDBSignInStore:
    def __init__(self, client: Callable[[], Any], table_name: str) -> None:
        # A client factory, asked at every call (see DynamoDBTaskStore).
        self._client = client
        self._table = table_name

    @property
    def _ddb(self) -> Any:
        return self._client()

    def _get(self, key: str, now: int) -> dict[str, Any] | None:
        item = self._ddb.get_item(TableName=self._table, Key={"taskId": s(key)}, ConsistentRead=True).get(
            "Item"
        )
        if item is None or int(item["expiresAt"]["N"]) <= now:
            return None  # DynamoDB deletes expired items late; until then they are gone to us
        return dict(item)

    def _update(self, key: str, **request: Any) -> bool:
        """An UpdateItem under a condition: whether the condition held (and the item changed)."""
        return (
            conditional(self._ddb.update_item, TableName=self._table, Key={"taskId": s(key)}, **request)
            is not None
        )

    def _put(self, key: str, kind: str, record: Any, expires_at: int, **extra: dict[str, str]) -> None:
        self._ddb.put_item(
            TableName=self._table,
            Item={
                "taskId": s(key),
                "kind": s(kind),
                "record": _record(record),
                "expiresAt": n(expires_at),
                **extra,
            },
            ConditionExpression="attribute_not_exists(taskId)",
        )

    # ---- clients -----------------------------------------------------------------------

    @translating
    def add_client(self, client: ClientRecord, *, expires_at: int) -> None:
        self._put(f"client#{_part(client.client_id)}", "oauth-client", client, expires_at)

    @translating
    def get_client(self, client_id: str, now: int) -> ClientRecord | None:
        item = self._get(f"client#{_part(client_id)}", now)
        return _load(ClientRecord, item) if item else None

    @translating
    def keep_client(self, client_id: str, *, expires_at: int) -> None:
        self._update(
            f"client#{_part(client_id)}",
            UpdateExpression="SET expiresAt = :e",
            ConditionExpression="attribute_exists(taskId) AND expiresAt < :e",
            ExpressionAttributeValues={":e": n(expires_at)},
        )

    @translating
    def count(self, key: str, *, limit: int, expires_at: int) -> bool:
        return self._update(
            f"limit#{_part(key)}",
            UpdateExpression="SET expiresAt = if_not_exists(expiresAt, :e), kind = :k ADD used :one",
            ConditionExpression="attribute_not_exists(used) OR used < :limit",
            ExpressionAttributeValues={
                ":e": n(expires_at),
                ":k": s("oauth-limit"),
                ":one": n(1),
                ":limit": n(limit),
            },
        )

    # ---- pending sign-ins --------------------------------------------------------------

    @translating
    def start_sign_in(self, pending: PendingSignIn) -> None:
        self._put(
            f"pending#{pending.pending_id}",
            "oauth-pending",
            pending,
            pending.expires_at,
            stage=s(pending.stage),
        )

    @translating
    def advance_sign_in(
        self,
        pending_id: str,
        *,
        stage: str,
        to: str,
        now: int,
        expect_csrf: str | None = None,
        **changes: str,
    ) -> PendingSignIn | None:
        key = f"pending#{_part(pending_id)}"
        item = self._get(key, now)
        if item is None:
            return None
        after = dataclasses.replace(_load(PendingSignIn, item), stage=to, **changes)  # type: ignore[arg-type]
        condition = "stage = :from AND expiresAt > :now"
        values: dict[str, Any] = {":from": s(stage), ":to": s(to), ":now": n(now), ":r": _record(after)}
        if expect_csrf is not None:
            condition += " AND csrf = :csrf"
            values[":csrf"] = s(expect_csrf)
        names = ""
        if after.csrf is not None:
            names = ", csrf = :newcsrf"
            values[":newcsrf"] = s(after.csrf)
        moved = self._update(
            key,
            UpdateExpression=f"SET stage = :to, #r = :r{names}",
            ConditionExpression=condition,
            ExpressionAttributeNames={"#r": "record"},
            ExpressionAttributeValues=values,
        )
        return after if moved else None

    # ---- codes -------------------------------------------------------------------------

    @translating
    def add_code(self, code: CodeRecord) -> None:
        self._put(f"code#{code.code_digest}", "oauth-code", code, code.expires_at)

    @translating
    def use_code(self, code_digest: str, now: int) -> tuple[CodeUse, CodeRecord | None]:
        key = {"taskId": s(f"code#{_part(code_digest)}")}
        try:
            item = self._ddb.update_item(
                TableName=self._table,
                Key=key,
                UpdateExpression="SET usedAt = :now",
                ConditionExpression="attribute_exists(taskId) AND attribute_not_exists(usedAt) AND expiresAt > :now",
                ExpressionAttributeValues={":now": n(now)},
                ReturnValues="ALL_NEW",
                ReturnValuesOnConditionCheckFailure="ALL_OLD",
            )["Attributes"]
        except ClientError as error:
            if error_code(error) != CONDITION_FAILED:
                raise
            old: dict[str, Any] | None = error.response.get("Item")  # type: ignore[assignment]
            if old and "usedAt" in old:
                return CodeUse.REPLAYED, _load(CodeRecord, old)
            return CodeUse.UNKNOWN, None
        return CodeUse.FIRST, _load(CodeRecord, item)

    # ---- refresh-token families --------------------------------------------------------

    @translating
    def add_grant(self, grant: GrantRecord) -> None:
        self._put(
            f"grant#{grant.family}", "oauth-grant", grant, grant.expires_at, current=s(grant.current_digest)
        )

    @translating
    def get_grant(self, family: str, now: int) -> GrantRecord | None:
        item = self._get(f"grant#{_part(family)}", now)
        if item is None:
            return None
        return dataclasses.replace(_load(GrantRecord, item), current_digest=item["current"]["S"])

    @translating
    def rotate_grant(
        self, family: str, *, old_digest: str, new_digest: str, expires_at: int, now: int
    ) -> bool:
        return self._update(
            f"grant#{_part(family)}",
            UpdateExpression="SET #c = :new, expiresAt = :e",
            ConditionExpression="#c = :old AND expiresAt > :now",
            ExpressionAttributeNames={"#c": "current"},
            ExpressionAttributeValues={
                ":new": s(new_digest),
                ":old": s(old_digest),
                ":e": n(expires_at),
                ":now": n(now),
            },
        )

    @translating
    def revoke_grant(self, family: str) -> None:
        self._ddb.delete_item(TableName=self._table, Key={"taskId": s(f"grant#{_part(family)}")})

    # ---- consents ----------------------------------------------------------------------

    @staticmethod
    def _consent_key(owner: str, client_id: str, redirect_host: str) -> str:
        return f"consent#{digest(chr(0).join((owner, client_id, redirect_host)))}"

    @translating
    def has_consent(self, owner: str, client_id: str, redirect_host: str, now: int) -> bool:
        return self._get(self._consent_key(owner, client_id, redirect_host), now) is not None

    @translating
    def add_consent(self, owner: str, client_id: str, redirect_host: str, *, expires_at: int) -> None:
        self._ddb.put_item(
            TableName=self._table,
            Item={
                "taskId": s(self._consent_key(owner, client_id, redirect_host)),
                "kind": s("oauth-consent"),
                "consentClient": s(client_id[:1000]),
                "expiresAt": n(expires_at),
            },
        )

    # ---- Client ID Metadata Documents --------------------------------------------------

    @translating
    def cached_document(self, url: str, now: int) -> str | None:
        item = self._get(f"cimd#{digest(url)}", now)
        return str(item["document"]["S"]) if item else None

    @translating
    def cache_document(self, url: str, document: str, *, expires_at: int) -> None:
        self._ddb.put_item(
            TableName=self._table,
            Item={
                "taskId": s(f"cimd#{digest(url)}"),
                "kind": s("oauth-cimd"),
                "document": s(document),
                "expiresAt": n(expires_at),
            },
        )
