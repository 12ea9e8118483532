"""How many long-held requests one owner has open at once, counted in the table.

A request the streaming endpoint holds open (a ``subscriptions/listen`` stream, a plain call
held until its answer) is a Lambda execution for as long as it lasts, and nothing tells a
streaming function that its client went away: an abandoned stream runs to its end. So each
one takes a *lease* for as long as it can last, and an owner may hold at most ``cap`` of them,
of every kind together. The count lives in the table, not in a process: every instance of
every function sees the same leases, and a lease whose instance died runs out by itself.
"""

from __future__ import annotations

import logging
import threading
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Protocol

from .errors import TaskgateError
from .ports import Clock

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Lease:
    """One long-held request: what kind it is, and when it ends at the latest (epoch ms)."""

    lease_id: str
    kind: str
    until_ms: int


class TooManyHeld(TaskgateError):
    def __init__(self, limit: int) -> None:
        super().__init__(
            f"Too many open streams: at most {limit} listen streams and held calls may be open at once; "
            "close one (or let it end) and try again"
        )
        self.limit = limit
        self.data = {"limit": limit}


class HeldStore(Protocol):
    def take(self, owner: str, lease: Lease, *, cap: int, now_ms: int) -> bool:
        """Add ``lease`` to the owner's open leases, unless ``cap`` of them are open at
        ``now_ms`` (a lease past its ``until_ms`` is not open, and is dropped); True when
        taken. One conditional write decides it, so concurrent takes never pass ``cap``."""

    def release(self, owner: str, lease_id: str) -> None:
        """Drop the lease (a lease already gone is not an error)."""

    def open_leases(self, owner: str, now_ms: int) -> list[Lease]:
        """The owner's leases open at ``now_ms`` (strongly consistent)."""


class ProcessHeldStore:
    """``HeldStore`` in this process's memory: right where one process serves every request
    (a local server, the unit tier), wrong for a deployment (each instance would count alone)."""

    def __init__(self) -> None:
        self.leases: dict[str, dict[str, Lease]] = {}
        self._lock = threading.Lock()

    def take(self, owner: str, lease: Lease, *, cap: int, now_ms: int) -> bool:
        with self._lock:
            held = self.leases.setdefault(owner, {})
            for lease_id in [i for i, open_ in held.items() if open_.until_ms <= now_ms]:
                del held[lease_id]
            if len(held) >= cap:
                return False
            held[lease.lease_id] = lease
            return True

    def release(self, owner: str, lease_id: str) -> None:
        with self._lock:
            self.leases.get(owner, {}).pop(lease_id, None)

    def open_leases(self, owner: str, now_ms: int) -> list[Lease]:
        with self._lock:
            return [lease for lease in self.leases.get(owner, {}).values() if lease.until_ms > now_ms]


class HeldRequests:
    """The per-owner cap on long-held requests (``cap``; 0: no cap)."""

    def __init__(self, store: HeldStore, clock: Clock, cap: int) -> None:
        self._store = store
        self._clock = clock
        self.cap = cap

    def open(self, owner: str) -> list[Lease]:
        """The owner's open leases (strongly consistent)."""
        return self._store.open_leases(owner, self._clock())

    @contextmanager
    def hold(self, owner: str, kind: str, seconds: float) -> Iterator[Lease]:
        """A lease for the block, which lasts at most ``seconds`` (it runs out by itself after
        that, should this process die); TooManyHeld when the owner already holds ``cap``."""
        now = self._clock()
        lease = Lease(uuid.uuid4().hex, kind, now + int(seconds * 1000))
        if self.cap and not self._store.take(owner, lease, cap=self.cap, now_ms=now):
            raise TooManyHeld(self.cap)
        try:
            yield lease
        finally:
            if self.cap:
                try:
                    self._store.release(owner, lease.lease_id)
                except TaskgateError:
                    # It runs out at until_ms by itself: the owner is held back no longer than that.
                    logger.warning("could not release lease %s of %s", lease.lease_id, owner, exc_info=True)
