"""How many tool calls may run inside requests of this process at once (``InlineSlots``)."""

from __future__ import annotations

import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager


class InlineSlots:
    """How many requests may run a tool inside themselves (a plain call) or wait on a
    task (a stream holding on) in this process at once. Each holds a thread of the
    server's pool for as long as the tool runs; past the bound a request is refused
    at once rather than queued, so the rest of the requests (tasks/get, a cancel)
    always find a thread. A Lambda instance serves one request at a time, so only a
    process serving many (the local server) ever reaches it.

    No owner holds more than ``per_owner`` of them, so one caller cannot take them all
    and leave every other caller a 503. Owners in ``unshared`` (the anonymous owner:
    with sign-in off every caller is that one owner, and there is no one to share with)
    may use them all."""

    def __init__(self, size: int, per_owner: int | None = None, *, unshared: Iterable[str] = ()) -> None:
        self.size = size
        self.per_owner = min(per_owner or size, size)
        self._unshared = frozenset(unshared)
        self._lock = threading.Lock()
        self._used = 0
        self._by_owner: dict[str, int] = {}

    @property
    def in_use(self) -> int:
        return self._used

    def take(self, owner: str | None = None) -> str | None:
        """Take a slot for ``owner``: None when taken, else why not (a 503's message)."""
        capped = owner if owner is not None and owner not in self._unshared else None
        with self._lock:
            if self._used >= self.size:
                return f"Server busy: {self.size} tool calls are already running here"
            if capped is not None and self._by_owner.get(capped, 0) >= self.per_owner:
                return f"Server busy: you already have {self.per_owner} tool calls running here"
            self._used += 1
            if capped is not None:
                self._by_owner[capped] = self._by_owner.get(capped, 0) + 1
        return None

    def release(self, owner: str | None = None) -> None:
        with self._lock:
            self._used -= 1
            if owner is not None and owner in self._by_owner:
                left = self._by_owner[owner] - 1
                if left:
                    self._by_owner[owner] = left
                else:
                    del self._by_owner[owner]

    @contextmanager
    def held(self, owner: str | None = None) -> Iterator[bool]:
        """A slot for the duration of the block; False (and no slot) when none is free."""
        acquired = self.take(owner) is None
        try:
            yield acquired
        finally:
            if acquired:
                self.release(owner)
