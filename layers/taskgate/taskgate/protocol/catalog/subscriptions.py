"""2025-11-25 ``resources/subscribe`` / ``resources/unsubscribe``, and the
``notifications/resources/updated`` they lead to.

Subscriptions belong to the session (kept in the session store, so any instance
sees them). taskgate has no standalone server-to-client stream, so an update is
reported on the session's streams that are open: a ``tasks/result`` stream, or the
stream of a plain call that asked a question. Each such stream checks the
session's subscribed resources at most once a second; a resource changed when its
``version`` (a cheap fingerprint its author provides, see ``@resource``) differs
from the one last reported. Resources without a version never report an update.
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Callable
from typing import Any

from ...codes import INVALID_PARAMS, INVALID_REQUEST
from ...domain.sessions import SessionStore, Subscribed
from ..era import Method
from ..wire.errors import RpcError
from ..wire.exchange import Call
from .resources import ReadResource, ResourceMethods

# Subscriptions one session may hold, and the bytes of their URIs together. All of a
# session's subscriptions live in one DynamoDB item (at most 400 KB): 100 entries of a
# key, a bounded version and some overhead (~12 KB) plus 64 KiB of URIs stay far below
# it, and every update of the item is billed by its size. A single URI may be 8 KiB
# (resources.MAX_URI_LENGTH), so the byte bound is the one long URIs meet first.
MAX_SUBSCRIPTIONS = 100
MAX_SUBSCRIBED_URI_BYTES = 65_536
# A resource's version (its author's fingerprint) is kept as given up to this length, as
# a digest beyond it: only equality is ever asked of it.
MAX_VERSION_CHARS = 64
# How often an open stream looks at the session's subscriptions.
CHECK_EVERY_SECONDS = 1.0

Notices = Callable[[float], list[dict[str, Any]]]


def stored_version(version: str | None) -> str:
    """The version as the session keeps it: bounded, and equal exactly when the version is."""
    version = version or ""
    if len(version) <= MAX_VERSION_CHARS:
        return version
    digest = hashlib.sha256(version.encode("utf-8", "surrogatepass")).digest()
    return "sha256:" + base64.urlsafe_b64encode(digest).decode().rstrip("=")


def updated(uri: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "method": "notifications/resources/updated", "params": {"uri": uri}}


class Subscriptions:
    def __init__(self, resources: ResourceMethods, sessions: SessionStore) -> None:
        self._resources = resources
        self._sessions = sessions

    def methods(self) -> list[Method]:
        return [
            Method("resources/subscribe", self.subscribe, ReadResource),
            Method("resources/unsubscribe", self.unsubscribe, ReadResource),
        ]

    def _session_id(self, call: Call) -> str:
        session_id = call.headers.get("mcp-session-id")
        if not session_id:
            raise RpcError(
                INVALID_REQUEST, f"{call.method} needs a session: initialize first (Mcp-Session-Id)"
            )
        return session_id

    def subscribe(self, call: Call, params: ReadResource) -> dict[str, Any]:
        session_id = self._session_id(call)
        session = self._sessions.get_session(session_id)
        if session is None:
            raise RpcError(INVALID_REQUEST, "Session not found")
        found = self._resources.resolve(params.uri)
        if found is None:
            raise self._resources.not_found(params.uri)
        ctx = self._resources.context(call, params.uri)
        version = stored_version(found.current_version(params.uri, ctx))
        outcome = self._sessions.subscribe(
            session_id,
            params.uri,
            version,
            expires_at_ms=session.expires_at_ms,
            limit=MAX_SUBSCRIPTIONS,
            max_uri_bytes=MAX_SUBSCRIBED_URI_BYTES,
        )
        if outcome is Subscribed.TOO_MANY:
            raise RpcError(
                INVALID_PARAMS,
                f"Too many subscriptions: a session may hold {MAX_SUBSCRIPTIONS}",
                {"limit": MAX_SUBSCRIPTIONS},
            )
        if outcome is Subscribed.TOO_LARGE:
            raise RpcError(
                INVALID_PARAMS,
                "Too many subscriptions: a session's subscribed URIs may total "
                f"{MAX_SUBSCRIBED_URI_BYTES} bytes (unsubscribe from some first)",
                {"limit": MAX_SUBSCRIBED_URI_BYTES},
            )
        return {}

    def unsubscribe(self, call: Call, params: ReadResource) -> dict[str, Any]:
        self._sessions.unsubscribe(self._session_id(call), params.uri)
        return {}

    def notices(self, call: Call) -> Notices | None:
        """What an open stream of this request's session calls as it waits: the
        updates of subscribed resources since they were last reported."""
        session_id = call.headers.get("mcp-session-id")
        if not session_id:
            return None
        last = [float("-inf")]

        def check(now: float) -> list[dict[str, Any]]:
            if now - last[0] < CHECK_EVERY_SECONDS:
                return []
            last[0] = now
            out = []
            # Eventually consistent (half the price; streams check often): a stale
            # version only means the conditional advance below refuses, never a
            # notice sent twice.
            for uri, seen in self._sessions.subscriptions(session_id, consistent=False).items():
                found = self._resources.resolve(uri)
                if found is None:
                    continue
                current = stored_version(found.current_version(uri, self._resources.context(call, uri)))
                if current != seen and self._sessions.advance_subscription(session_id, uri, seen, current):
                    out.append(updated(uri))
            return out

        return check
