"""How many long-lived requests one owner may hold open at once, counted in the table.

A held call (a 2026-07-28 plain call on a front that streams) keeps its request open for
as long as the tool runs, up to 15 minutes. Deployed, each is a Lambda execution of its own,
so one owner opening many would take the account's concurrency from every other function
and caller; nothing in one process sees the others. Each owner therefore has a few places
(``places``), kept in the task table: one item per place, taken by a conditional write, held
as a lease its holder renews while the request lasts and deletes when it ends. A holder that
dies without a word (its instance recycled, its Lambda timed out) frees its place when the
lease runs out, so no count can leak. Waiting handle calls and listen streams, long-lived
the same way, are to take the same places.
"""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Callable
from typing import Protocol


class HoldStore(Protocol):
    def take_place(self, key: str, holder: str, *, until_ms: int, now_ms: int) -> bool:
        """Take the place ``key`` for ``holder`` until ``until_ms`` if no live lease holds it
        (or ``holder``'s own does: a renewal). One conditional write."""

    def leave_place(self, key: str, holder: str) -> None:
        """Give the place up, if ``holder`` still holds it."""


class Hold:
    """One place held; ``renew`` while the request lasts, ``release`` when it ends."""

    # A plain class: a first held call makes it at its cold start (a dataclass, 0.4 ms more).
    def __init__(self, holds: Holds, key: str, holder: str) -> None:
        self._holds = holds
        self.key = key
        self.holder = holder

    def renew(self) -> bool:
        return self._holds.store.take_place(
            self.key,
            self.holder,
            until_ms=self._holds.clock() + self._holds.lease_ms,
            now_ms=self._holds.clock(),
        )

    def release(self) -> None:
        self._holds.store.leave_place(self.key, self.holder)


class Holds:
    def __init__(
        self,
        store: HoldStore,
        *,
        places: int,
        lease_ms: int,
        clock: Callable[[], int],
        unlimited: frozenset[str] = frozenset(),
    ) -> None:
        self.store = store
        self.places = places
        self.lease_ms = lease_ms
        self.clock = clock
        # With sign-in off every caller is one owner, and there is no one to share with.
        self._unlimited = unlimited

    def take(self, owner: str) -> Hold | None:
        """One of ``owner``'s places, or None when every one is held."""
        holder = secrets.token_urlsafe(12)
        if owner in self._unlimited:
            return Hold(Holds(NO_STORE, places=0, lease_ms=self.lease_ms, clock=self.clock), "", holder)
        prefix = hashlib.sha256(owner.encode()).hexdigest()
        now = self.clock()
        for place in range(self.places):
            key = f"{prefix}#{place}"
            if self.store.take_place(key, holder, until_ms=now + self.lease_ms, now_ms=now):
                return Hold(self, key, holder)
        return None


class _NoStore:
    def take_place(self, key: str, holder: str, *, until_ms: int, now_ms: int) -> bool:
        return True

    def leave_place(self, key: str, holder: str) -> None:
        pass


NO_STORE: HoldStore = _NoStore()
