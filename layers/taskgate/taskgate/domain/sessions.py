"""Transport state that must outlive a Lambda instance: 2025-11-25 sessions, the
event logs of resumable SSE streams, and which task a plain call became. Any
instance can serve any request."""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from .calls import CallStore
from .holds import HoldStore


@dataclass(frozen=True)
class Session:
    """A 2025-11-25 session, as its row keeps it."""

    session_id: str
    owner: str
    protocol_version: str
    expires_at_ms: int
    # What the client declared in initialize: the server never asks it for anything else.
    # None: not recorded (a session opened before they were), and nothing is refused.
    capabilities: dict[str, Any] | None = None
    # logging/setLevel: the least severe level of notifications/message it wants (None: all).
    log_level: str | None = None
    # The tasks this session created last (task id -> createdAt ms), at most RECENT_TASKS:
    # its tasks/list shows them at once, whatever the owner index has caught up with.
    recent_tasks: dict[str, int] = field(default_factory=dict)
    # The hidden tasks of this session's plain calls: a client that ends its session can
    # never resume their streams, so they end with it.
    hidden_tasks: frozenset[str] = frozenset()


# How many of its own newest tasks a session remembers for tasks/list.
RECENT_TASKS = 16


class Subscribed(enum.Enum):
    """What ``SessionStore.subscribe`` did: added (or refreshed) the subscription, or
    refused it for one of the session's two bounds."""

    YES = "yes"
    TOO_MANY = "too_many"  # the session holds ``limit`` subscriptions already
    TOO_LARGE = "too_large"  # the session's subscribed URIs would pass ``max_uri_bytes``


def uri_bytes(uri: str) -> int:
    """What one subscription costs a session's URI budget."""
    return len(uri.encode("utf-8", "surrogatepass"))


@dataclass(frozen=True)
class StreamState:
    """A ``tasks/result`` stream: what it answers, and every event it has sent.

    ``events[i]`` carries SSE id ``"{stream_id}:{i + 1}"``; a reconnect with
    ``Last-Event-ID`` replays the ones after it, then carries on live.
    """

    stream_id: str
    owner: str
    task_id: str
    request_id: Any
    expires_at_ms: int
    events: tuple[str, ...] = ()
    # Ids of the server-to-client requests already sent, so none is asked twice.
    emitted_keys: frozenset[str] = field(default_factory=frozenset)
    done: bool = False
    # A plain tools/call's stream (2025): the client never asked for a task, so no
    # message on it names one; it reads as the call's own elicitation and response.
    hides_task: bool = False
    # A plain call's stream: each piece of it tells the task its caller is still there,
    # for this long (ms); None: nobody is watched for (a tasks/result stream).
    watch_ms: int | None = None
    # A plain call's stream: still running at this time (epoch ms), the call is answered
    # with a handle the model drives (protocol/calls/handle_tools.py). None: never.
    hand_over_at_ms: int | None = None


class SessionStore(CallStore, HoldStore, Protocol):
    """Sessions, stream logs, resource subscriptions, (``CallStore``) the plain calls that
    became hidden tasks, and (``HoldStore``) the places each owner's long-lived requests hold."""

    def create_session(self, session: Session) -> None: ...

    def get_session(self, session_id: str, *, consistent: bool = True) -> Session | None:
        """The session; with ``consistent=False`` (half the price) a read may miss one
        created in the last second or so, or still see one just deleted."""

    def delete_session(self, session_id: str) -> None: ...

    def add_hidden_task(self, session_id: str, task_id: str) -> None:
        """Remember that a plain call of the session became ``task_id``."""

    def set_log_level(self, session_id: str, level: str) -> None:
        """Record the session's ``logging/setLevel``; a session that is gone stays gone."""

    def remember_task(
        self, session_id: str, task_id: str, created_at_ms: int, *, forget: Sequence[str] = ()
    ) -> None:
        """Add ``task_id`` to the session's recent tasks and drop ``forget`` from them (the
        caller keeps the list at RECENT_TASKS); a session that is gone stays gone."""

    def create_stream(self, stream: StreamState) -> None: ...

    def get_stream(self, stream_id: str, *, consistent: bool = True) -> StreamState | None:
        """The stream's log; with ``consistent=False`` it may lag a recent append."""

    def append_events(self, before: StreamState, after: StreamState) -> bool:
        """Persist ``after`` (``before`` plus new events) if nobody else appended
        since ``before`` was read; False when someone did."""

    # -- resource subscriptions of a session (2025-11-25 resources/subscribe) --------

    def subscriptions(self, session_id: str, *, consistent: bool = True) -> dict[str, str]:
        """URI → the version last reported to the session ("" when it did not exist);
        ``consistent=False`` may lag a recent change."""
        ...

    def subscribe(
        self, session_id: str, uri: str, version: str, *, expires_at_ms: int, limit: int, max_uri_bytes: int
    ) -> Subscribed:
        """Add (or refresh) a subscription, unless a new one would make the session hold more
        than ``limit`` subscriptions or more than ``max_uri_bytes`` of URIs (``uri_bytes``):
        together with a bounded ``version`` that keeps the session's subscriptions far from
        DynamoDB's 400 KB item."""
        ...

    def unsubscribe(self, session_id: str, uri: str) -> None: ...

    def advance_subscription(self, session_id: str, uri: str, seen: str, now: str) -> bool:
        """Record that ``now`` was reported, if the stored version is still ``seen``;
        False when another stream got there first (or the subscription is gone)."""
        ...
