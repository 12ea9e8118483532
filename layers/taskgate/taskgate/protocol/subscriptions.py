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

from collections.abc import Callable
from typing import Any

from ..codes import INVALID_PARAMS, INVALID_REQUEST
from ..domain.sessions import SessionStore
from .era import Call, Method
from .errors import RpcError
from .resources import ReadResource, ResourceMethods

# Subscriptions one session may hold.
MAX_SUBSCRIPTIONS = 100
# How often an open stream looks at the session's subscriptions.
CHECK_EVERY_SECONDS = 1.0

Notices = Callable[[float], list[dict[str, Any]]]


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
        version = found.current_version(params.uri, ctx) or ""
        if not self._sessions.subscribe(
            session_id, params.uri, version, expires_at_ms=session.expires_at_ms, limit=MAX_SUBSCRIPTIONS
        ):
            raise RpcError(
                INVALID_PARAMS,
                f"Too many subscriptions: a session may hold {MAX_SUBSCRIPTIONS}",
                {"limit": MAX_SUBSCRIPTIONS},
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
                current = found.current_version(uri, self._resources.context(call, uri)) or ""
                if current != seen and self._sessions.advance_subscription(session_id, uri, seen, current):
                    out.append(updated(uri))
            return out

        return check
