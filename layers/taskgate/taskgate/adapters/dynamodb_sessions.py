"""SessionStore on DynamoDB, in the task table under ``session#…`` / ``stream#…`` /
``call#…`` keys.

These items carry no ``ownerId`` attribute, so the owner index never sees them.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence
from typing import Any

from ..domain.calls import CallClaim
from ..domain.errors import ServiceUnavailable
from ..domain.ports import Clock
from ..domain.sessions import Session, StreamState, Subscribed, uri_bytes
from .aws_errors import translating
from .dynamodb_items import conditional, expires_at, expires_at_ms, j, n, s


class DynamoDBSessionStore:
    def __init__(self, client: Callable[[], Any], table_name: str, clock: Clock) -> None:
        # A client factory, asked at every call (see DynamoDBTaskStore).
        self._client = client
        self._table = table_name
        self._clock = clock

    @property
    def _ddb(self) -> Any:
        return self._client()

    def _live(self, item: dict[str, Any] | None) -> dict[str, Any] | None:
        # DynamoDB deletes expired items late; until then they are gone to us.
        if item is None or expires_at_ms(item) <= self._clock():
            return None
        return item

    @translating
    def create_session(self, session: Session) -> None:
        self._ddb.put_item(
            TableName=self._table,
            Item={
                "taskId": s(f"session#{session.session_id}"),
                "kind": s("session"),
                "sessionOwner": s(session.owner),
                "protocolVersion": s(session.protocol_version),
                "expiresAt": expires_at(session.expires_at_ms),
                "recentTasks": {"M": {k: n(v) for k, v in session.recent_tasks.items()}},
                **(
                    {"clientCapabilities": j(session.capabilities)}
                    if session.capabilities is not None
                    else {}
                ),
            },
            ConditionExpression="attribute_not_exists(taskId)",
        )

    @translating
    def get_session(self, session_id: str, *, consistent: bool = True) -> Session | None:
        item = self._live(
            self._ddb.get_item(
                TableName=self._table, Key={"taskId": s(f"session#{session_id}")}, ConsistentRead=consistent
            ).get("Item")
        )
        if item is None:
            return None
        return Session(
            session_id=session_id,
            owner=item["sessionOwner"]["S"],
            protocol_version=item["protocolVersion"]["S"],
            expires_at_ms=expires_at_ms(item),
            capabilities=json.loads(item["clientCapabilities"]["S"])
            if "clientCapabilities" in item
            else None,
            log_level=item["logLevel"]["S"] if "logLevel" in item else None,
            recent_tasks={k: int(v["N"]) for k, v in item.get("recentTasks", {}).get("M", {}).items()},
            hidden_tasks=frozenset(item.get("hiddenTasks", {}).get("SS", [])),
        )

    @translating
    def delete_session(self, session_id: str) -> None:
        self._ddb.delete_item(TableName=self._table, Key={"taskId": s(f"session#{session_id}")})
        self._ddb.delete_item(TableName=self._table, Key=self._subs_key(session_id))

    def add_hidden_task(self, session_id: str, task_id: str) -> None:
        # A session that has gone keeps nothing: nothing to write.
        conditional(
            self._ddb.update_item,
            TableName=self._table,
            Key={"taskId": s(f"session#{session_id}")},
            UpdateExpression="ADD hiddenTasks :task",
            ConditionExpression="attribute_exists(taskId)",
            ExpressionAttributeValues={":task": {"SS": [task_id]}},
        )

    def set_log_level(self, session_id: str, level: str) -> None:
        # A session that has gone keeps no level: nothing to write.
        conditional(
            self._ddb.update_item,
            TableName=self._table,
            Key={"taskId": s(f"session#{session_id}")},
            UpdateExpression="SET logLevel = :level",
            ConditionExpression="attribute_exists(taskId)",
            ExpressionAttributeValues={":level": s(level)},
        )

    def remember_task(
        self, session_id: str, task_id: str, created_at_ms: int, *, forget: Sequence[str] = ()
    ) -> None:
        names = {"#new": task_id, **{f"#f{i}": old for i, old in enumerate(forget) if old != task_id}}
        removes = [name for name in names if name != "#new"]
        key = {"taskId": s(f"session#{session_id}")}
        noted = conditional(
            self._ddb.update_item,
            TableName=self._table,
            Key=key,
            UpdateExpression="SET recentTasks.#new = :t"
            + (" REMOVE " + ", ".join(f"recentTasks.{name}" for name in removes) if removes else ""),
            ConditionExpression="attribute_exists(recentTasks)",
            ExpressionAttributeNames=names,
            ExpressionAttributeValues={":t": n(created_at_ms)},
        )
        if noted is not None:
            return
        # A session opened before sessions remembered their tasks: start its list. Refused,
        # the session has gone (or another request started the list): nothing to note.
        conditional(
            self._ddb.update_item,
            TableName=self._table,
            Key=key,
            UpdateExpression="SET recentTasks = :m",
            ConditionExpression="attribute_exists(taskId) AND attribute_not_exists(recentTasks)",
            ExpressionAttributeValues={":m": {"M": {task_id: n(created_at_ms)}}},
        )

    @translating
    def create_stream(self, stream: StreamState) -> None:
        self._ddb.put_item(
            TableName=self._table,
            Item=self._stream_item(stream),
            ConditionExpression="attribute_not_exists(taskId)",
        )

    @translating
    def get_stream(self, stream_id: str, *, consistent: bool = True) -> StreamState | None:
        item = self._live(
            self._ddb.get_item(
                TableName=self._table, Key={"taskId": s(f"stream#{stream_id}")}, ConsistentRead=consistent
            ).get("Item")
        )
        if item is None:
            return None
        return StreamState(
            stream_id=stream_id,
            owner=item["streamOwner"]["S"],
            task_id=item["streamTaskId"]["S"],
            request_id=json.loads(item["requestId"]["S"]),
            expires_at_ms=expires_at_ms(item),
            events=tuple(e["S"] for e in item.get("events", {}).get("L", [])),
            emitted_keys=frozenset(k["S"] for k in item.get("emittedKeys", {}).get("L", [])),
            done=item.get("done", {}).get("BOOL", False),
            hides_task=item.get("hidesTask", {}).get("BOOL", False),
            watch_ms=int(item["watchMs"]["N"]) if "watchMs" in item else None,
            hand_over_at_ms=int(item["handOverAt"]["N"]) if "handOverAt" in item else None,
        )

    def append_events(self, before: StreamState, after: StreamState) -> bool:
        written = conditional(
            self._ddb.put_item,
            TableName=self._table,
            Item=self._stream_item(after),
            # Optimistic concurrency on the event count: two instances serving
            # the same stream never both append event N.
            ConditionExpression="eventCount = :n",
            ExpressionAttributeValues={":n": n(len(before.events))},
        )
        return written is not None

    # -- plain calls that became hidden tasks (domain/calls.py) -----------------------

    def _call_key(self, key: str) -> dict[str, Any]:
        return {"taskId": s(f"call#{key}")}

    @staticmethod
    def _claim(item: dict[str, Any]) -> CallClaim:
        return CallClaim(
            task_id=item["callTaskId"]["S"] if "callTaskId" in item else None,
            cancelled=item.get("cancelled", {}).get("BOOL", False),
            digest=item.get("callDigest", {}).get("S", ""),
        )

    def claim_call(self, key: str, task_id: str, expires_at_ms: int, digest: str = "") -> CallClaim | None:
        written = conditional(
            self._ddb.put_item,
            TableName=self._table,
            Item={
                **self._call_key(key),
                "kind": s("call"),
                "callTaskId": s(task_id),
                "expiresAt": expires_at(expires_at_ms),
                **({"callDigest": s(digest)} if digest else {}),
            },
            # An expired item (DynamoDB deletes late) is no claim any more.
            ConditionExpression="attribute_not_exists(taskId) OR expiresAt <= :now",
            ExpressionAttributeValues={":now": expires_at(self._clock())},
        )
        if written is not None:
            return None
        found = self.find_call(key)
        # Claimed by another (found), or a tombstone that expired just now: either way not ours.
        return found if found is not None else CallClaim(None, cancelled=True)

    @translating
    def cancel_call(self, key: str, expires_at_ms: int) -> CallClaim:
        # An update creates the item when there is none: the tombstone a call that has not
        # claimed it yet will find.
        item = self._ddb.update_item(
            TableName=self._table,
            Key=self._call_key(key),
            UpdateExpression="SET cancelled = :yes, kind = :call, expiresAt = if_not_exists(expiresAt, :exp)",
            ExpressionAttributeValues={
                ":yes": {"BOOL": True},
                ":call": s("call"),
                ":exp": expires_at(expires_at_ms),
            },
            ReturnValues="ALL_NEW",
        )["Attributes"]
        return self._claim(item)

    @translating
    def find_call(self, key: str) -> CallClaim | None:
        item = self._live(
            self._ddb.get_item(TableName=self._table, Key=self._call_key(key), ConsistentRead=True).get(
                "Item"
            )
        )
        return self._claim(item) if item else None

    # -- the places owners' long-lived requests hold (domain/holds.py) ------------------------

    def _place_key(self, key: str) -> dict[str, Any]:
        return {"taskId": s(f"hold#{key}")}

    @translating
    def take_place(self, key: str, holder: str, *, until_ms: int, now_ms: int) -> bool:
        written = conditional(
            self._ddb.put_item,
            TableName=self._table,
            Item={
                **self._place_key(key),
                "kind": s("hold"),
                "holder": s(holder),
                "leaseUntil": n(until_ms),
                "expiresAt": expires_at(until_ms),
            },
            # Free, its lease run out (a holder that died), or this holder's own (a renewal).
            ConditionExpression="attribute_not_exists(taskId) OR leaseUntil <= :now OR holder = :me",
            ExpressionAttributeValues={":now": n(now_ms), ":me": s(holder)},
        )
        return written is not None

    @translating
    def leave_place(self, key: str, holder: str) -> None:
        conditional(
            self._ddb.delete_item,
            TableName=self._table,
            Key=self._place_key(key),
            ConditionExpression="holder = :me",
            ExpressionAttributeValues={":me": s(holder)},
        )

    # -- resource subscriptions: one item per session, a map keyed by a hash of the URI
    # (map keys are attribute names; a URI may be longer or stranger than one should be).

    def _subs_key(self, session_id: str) -> dict[str, Any]:
        return {"taskId": s(f"subs#{session_id}")}

    @translating
    def subscriptions(self, session_id: str, *, consistent: bool = True) -> dict[str, str]:
        item = self._live(
            self._ddb.get_item(
                TableName=self._table, Key=self._subs_key(session_id), ConsistentRead=consistent
            ).get("Item")
        )
        if item is None:
            return {}
        entries = item.get("subs", {}).get("M", {}).values()
        return {e["M"]["u"]["S"]: e["M"]["v"]["S"] for e in entries}

    def _subs_item(self, session_id: str) -> dict[str, Any] | None:
        item: dict[str, Any] | None = self._ddb.get_item(
            TableName=self._table, Key=self._subs_key(session_id), ConsistentRead=True
        ).get("Item")
        return item

    @translating
    def subscribe(
        self, session_id: str, uri: str, version: str, *, expires_at_ms: int, limit: int, max_uri_bytes: int
    ) -> Subscribed:
        entry = {"M": {"u": s(uri), "v": s(version)}}
        names = {"#k": _uri_key(uri)}
        cost = uri_bytes(uri)
        if cost > max_uri_bytes:
            return Subscribed.TOO_LARGE
        for _ in range(4):
            # The common case in one write: a new URI, within both bounds. ``subsBytes``
            # counts the URIs' bytes, so the condition can check the budget.
            if self._update_subs(
                session_id,
                UpdateExpression="SET subs.#k = :e, expiresAt = :x ADD subsBytes :b",
                ConditionExpression="attribute_exists(subs) AND attribute_not_exists(subs.#k)"
                " AND size(subs) < :limit AND subsBytes <= :room",
                ExpressionAttributeNames=names,
                ExpressionAttributeValues={
                    ":e": entry,
                    ":x": expires_at(expires_at_ms),
                    ":b": n(cost),
                    ":limit": n(limit),
                    ":room": n(max_uri_bytes - cost),
                },
            ):
                return Subscribed.YES
            # Refused: read what is there to see why, and act on it (conditionally again).
            item = self._subs_item(session_id)
            if item is None:
                created = conditional(
                    self._ddb.put_item,
                    TableName=self._table,
                    Item={
                        **self._subs_key(session_id),
                        "kind": s("subscriptions"),
                        "subs": {"M": {_uri_key(uri): entry}},
                        "subsBytes": n(cost),
                        "expiresAt": expires_at(expires_at_ms),
                    },
                    ConditionExpression="attribute_not_exists(taskId)",
                )
                if created is not None:
                    return Subscribed.YES
                continue  # another request created the item first: add to it
            subs = item.get("subs", {}).get("M", {})
            if names["#k"] in subs:
                # Held already: a refresh, which adds nothing to either bound.
                if self._update_subs(
                    session_id,
                    UpdateExpression="SET subs.#k = :e, expiresAt = :x",
                    ConditionExpression="attribute_exists(subs.#k)",
                    ExpressionAttributeNames=names,
                    ExpressionAttributeValues={":e": entry, ":x": expires_at(expires_at_ms)},
                ):
                    return Subscribed.YES
                continue
            if "subsBytes" not in item:
                # Written before subscriptions counted their bytes: count them once.
                total = sum(uri_bytes(e["M"]["u"]["S"]) for e in subs.values())
                self._update_subs(
                    session_id,
                    UpdateExpression="SET subsBytes = :t",
                    ConditionExpression="attribute_exists(subs) AND attribute_not_exists(subsBytes)",
                    ExpressionAttributeValues={":t": n(total)},
                )
                continue
            if len(subs) >= limit:
                return Subscribed.TOO_MANY
            if int(item["subsBytes"]["N"]) + cost > max_uri_bytes:
                return Subscribed.TOO_LARGE
            # Room now: another request unsubscribed between the write and the read.
        raise ServiceUnavailable("the session's subscriptions kept changing; please retry")

    def _update_subs(self, session_id: str, **update: Any) -> bool:
        """One conditional update of the session's subscriptions item; False when its
        condition refused it."""
        written = conditional(
            self._ddb.update_item, TableName=self._table, Key=self._subs_key(session_id), **update
        )
        return written is not None

    def unsubscribe(self, session_id: str, uri: str) -> None:
        names = {"#k": _uri_key(uri)}
        if self._update_subs(
            session_id,
            UpdateExpression="REMOVE subs.#k ADD subsBytes :minus",
            ConditionExpression="attribute_exists(subs.#k) AND attribute_exists(subsBytes)",
            ExpressionAttributeNames=names,
            ExpressionAttributeValues={":minus": n(-uri_bytes(uri))},
        ):
            return
        # Not held (nothing to remove), or an item that does not count its bytes (written
        # before it did).
        self._update_subs(
            session_id,
            UpdateExpression="REMOVE subs.#k",
            ConditionExpression="attribute_exists(subs) AND attribute_not_exists(subsBytes)",
            ExpressionAttributeNames=names,
        )

    def advance_subscription(self, session_id: str, uri: str, seen: str, now: str) -> bool:
        advanced = conditional(
            self._ddb.update_item,
            TableName=self._table,
            Key=self._subs_key(session_id),
            UpdateExpression="SET subs.#k.v = :now",
            ConditionExpression="subs.#k.v = :seen",
            ExpressionAttributeNames={"#k": _uri_key(uri)},
            ExpressionAttributeValues={":now": s(now), ":seen": s(seen)},
        )
        return advanced is not None

    def _stream_item(self, stream: StreamState) -> dict[str, Any]:
        item: dict[str, Any] = {
            "taskId": s(f"stream#{stream.stream_id}"),
            "kind": s("stream"),
            "streamOwner": s(stream.owner),
            "streamTaskId": s(stream.task_id),
            "requestId": j(stream.request_id),
            "expiresAt": expires_at(stream.expires_at_ms),
            "events": {"L": [s(e) for e in stream.events]},
            "eventCount": n(len(stream.events)),
            "emittedKeys": {"L": [s(k) for k in sorted(stream.emitted_keys)]},
            "done": {"BOOL": stream.done},
            "hidesTask": {"BOOL": stream.hides_task},
        }
        if stream.watch_ms is not None:
            item["watchMs"] = n(stream.watch_ms)
        if stream.hand_over_at_ms is not None:
            item["handOverAt"] = n(stream.hand_over_at_ms)
        return item


def _uri_key(uri: str) -> str:
    return "u" + hashlib.sha256(uri.encode()).hexdigest()[:40]
