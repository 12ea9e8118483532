"""``SessionStore`` (2025 sessions, stream logs, subscriptions, plain calls' call items) over dicts."""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING

from ...domain.calls import CallClaim
from ...domain.limits import json_size
from ...domain.sessions import Session, StreamState, Subscribed, uri_bytes
from .store import refuse_oversize

if TYPE_CHECKING:
    pass


def _stream_size(stream: StreamState) -> int:
    """The stream item's size as DynamoDB counts it (JSON strings stored as written)."""
    return (
        json_size(stream.request_id)
        + sum(len(e.encode()) for e in stream.events)
        + sum(len(k.encode()) for k in stream.emitted_keys)
        + len(stream.owner.encode())
        + len(stream.task_id)
    )


class MemorySessionStore:
    """``SessionStore`` over dicts (only the 2025-11-25 era touches it)."""

    def __init__(self) -> None:
        self.sessions: dict[str, Session] = {}
        self.streams: dict[str, StreamState] = {}
        self.calls: dict[str, CallClaim] = {}
        # The places owners' long-lived requests hold (domain/holds.py): key -> (holder, lease end).
        self.places: dict[str, tuple[str, int]] = {}
        self._calls_lock = threading.Lock()
        # What an eventually consistent read returns for a stream, when a test makes it lag.
        self.lagging: dict[str, StreamState] = {}
        self.subs: dict[str, dict[str, str]] = {}

    def create_session(self, session: Session) -> None:
        self.sessions[session.session_id] = session

    def get_session(self, session_id: str, *, consistent: bool = True) -> Session | None:
        return self.sessions.get(session_id)

    def delete_session(self, session_id: str) -> None:
        self.sessions.pop(session_id, None)
        self.subs.pop(session_id, None)

    def add_hidden_task(self, session_id: str, task_id: str) -> None:
        session = self.sessions.get(session_id)
        if session is not None:
            self.sessions[session_id] = dataclasses.replace(
                session, hidden_tasks=session.hidden_tasks | {task_id}
            )

    def set_log_level(self, session_id: str, level: str) -> None:
        session = self.sessions.get(session_id)
        if session is not None:
            self.sessions[session_id] = dataclasses.replace(session, log_level=level)

    def remember_task(
        self, session_id: str, task_id: str, created_at_ms: int, *, forget: Sequence[str] = ()
    ) -> None:
        session = self.sessions.get(session_id)
        if session is not None:
            recent = {k: v for k, v in session.recent_tasks.items() if k not in forget}
            self.sessions[session_id] = dataclasses.replace(
                session, recent_tasks={**recent, task_id: created_at_ms}
            )

    def create_stream(self, stream: StreamState) -> None:
        refuse_oversize(_stream_size(stream))
        self.streams[stream.stream_id] = stream

    def get_stream(self, stream_id: str, *, consistent: bool = True) -> StreamState | None:
        if not consistent and stream_id in self.lagging:
            return self.lagging[stream_id]
        return self.streams.get(stream_id)

    def append_events(self, before: StreamState, after: StreamState) -> bool:
        if self.streams.get(before.stream_id) != before:
            return False
        refuse_oversize(_stream_size(after))
        self.streams[after.stream_id] = after
        return True

    def claim_call(self, key: str, task_id: str, expires_at_ms: int, digest: str = "") -> CallClaim | None:
        with self._calls_lock:
            if key in self.calls:
                return self.calls[key]
            self.calls[key] = CallClaim(task_id, digest=digest)
            return None

    def cancel_call(self, key: str, expires_at_ms: int) -> CallClaim:
        with self._calls_lock:
            claim = dataclasses.replace(self.calls.get(key) or CallClaim(None), cancelled=True)
            self.calls[key] = claim
            return claim

    def find_call(self, key: str) -> CallClaim | None:
        return self.calls.get(key)

    def take_place(self, key: str, holder: str, *, until_ms: int, now_ms: int) -> bool:
        with self._calls_lock:
            found = self.places.get(key)
            if found is not None and found[1] > now_ms and found[0] != holder:
                return False
            self.places[key] = (holder, until_ms)
            return True

    def leave_place(self, key: str, holder: str) -> None:
        with self._calls_lock:
            if self.places.get(key, ("", 0))[0] == holder:
                del self.places[key]

    def subscriptions(self, session_id: str, *, consistent: bool = True) -> dict[str, str]:
        return dict(self.subs.get(session_id, {}))

    def subscribe(
        self, session_id: str, uri: str, version: str, *, expires_at_ms: int, limit: int, max_uri_bytes: int
    ) -> Subscribed:
        mine = self.subs.setdefault(session_id, {})
        if uri not in mine:
            if len(mine) >= limit:
                return Subscribed.TOO_MANY
            if sum(map(uri_bytes, mine)) + uri_bytes(uri) > max_uri_bytes:
                return Subscribed.TOO_LARGE
        after = {**mine, uri: version}
        # One DynamoDB item holds them all (a hashed key per URI): refused past 400 KB as there.
        refuse_oversize(sum(41 + uri_bytes(u) + len(v.encode()) for u, v in after.items()))
        mine[uri] = version
        return Subscribed.YES

    def unsubscribe(self, session_id: str, uri: str) -> None:
        self.subs.get(session_id, {}).pop(uri, None)

    def advance_subscription(self, session_id: str, uri: str, seen: str, now: str) -> bool:
        mine = self.subs.get(session_id, {})
        if mine.get(uri) != seen:
            return False
        mine[uri] = now
        return True
