"""``DurationStore`` (domain/durations.py) over a dict."""

from __future__ import annotations

import threading


class MemoryDurationStore:
    """The longest step noted per key, and how often it was read and written."""

    def __init__(self) -> None:
        self.longest: dict[str, int] = {}
        self.reads = 0
        self.writes = 0
        self._lock = threading.Lock()

    def longest_step_ms(self, key: str) -> int | None:
        self.reads += 1
        return self.longest.get(key)

    def raise_longest_step(self, key: str, ms: int, now_ms: int, expires_at_ms: int) -> bool:
        with self._lock:
            self.writes += 1
            if self.longest.get(key, 0) >= ms:
                return False
            self.longest[key] = ms
            return True
