"""How long each tool's body runs, learned from its runs, so that no author has to say.

A plain call of a tool not known to be quick runs outside the API invocation, as a hidden
task (protocol/calls/plan.py); once the tool is known to be quick its plain calls run inline,
as a declared quick tool's do. What is known is kept per tool and deployed code version (a
new deployment of the tool's code starts over): the longest step its body has run. A step is
what one request would run inline: a question ends one (its answers come in a round of their
own), and the time parked on a question or a job belongs to no step.

The worker notes each step it ran (domain/worker.py); an inline run that overran notes how
long it ran before it was stopped (protocol/calls/flow.py). Noting raises the stored figure
with a conditional write, never lowers it, and a process skips writes that could not raise
it. The API reads the figure through a cache (``fresh_seconds``), so a known-quick tool's
plain call makes no AWS call of its own.
"""

from __future__ import annotations

import functools
import hashlib
import inspect
import logging
import math
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from ..tools.registry import Tool
from .errors import TaskgateError
from .ports import Clock

logger = logging.getLogger(__name__)

# An item per tool and code version; a deployment that no longer runs that version stops
# refreshing it, and DynamoDB's TTL takes it away.
KEEP_MS = 30 * 86_400_000
# How long the API trusts what it read of a tool before it reads again.
FRESH_SECONDS = 300.0


class DurationStore(Protocol):
    def longest_step_ms(self, key: str) -> int | None:
        """The longest step noted under ``key``, or None when none was (or it expired)."""

    def raise_longest_step(self, key: str, ms: int, now_ms: int, expires_at_ms: int) -> bool:
        """Store ``ms`` under ``key`` if nothing longer is stored (a conditional write):
        True when this write raised it."""


@functools.cache
def code_version(fn: Callable[..., Any]) -> str:
    """The deployed code a tool's function comes from: a digest of its module's source, so
    the API and the worker (one layer, one file) name the same version, and a deployment
    that changes the module names a new one. Without a source file, the function's code."""
    digest = hashlib.sha256()
    try:
        path = inspect.getsourcefile(fn)
        with open(path or "", "rb") as source:
            digest.update(source.read())
    except (OSError, TypeError):
        code = getattr(fn, "__code__", None)
        digest.update(repr((getattr(fn, "__qualname__", ""), code and code.co_code)).encode())
    return digest.hexdigest()[:16]


def duration_key(tool: Tool) -> str:
    return f"tool#{tool.name}#{code_version(tool.fn)}"


@dataclass(frozen=True)
class _Read:
    seconds: float
    at: float  # monotonic


class ToolDurations:
    """What is known of each tool's duration, for the API (``known_seconds``) and for what
    learns it (``note``)."""

    def __init__(
        self,
        store: DurationStore,
        clock: Clock,
        monotonic: Callable[[], float],
        *,
        fresh_seconds: float = FRESH_SECONDS,
        keep_ms: int = KEEP_MS,
    ) -> None:
        self._store = store
        self._clock = clock
        self._monotonic = monotonic
        self._fresh = fresh_seconds
        self._keep_ms = keep_ms
        self._lock = threading.Lock()
        self._read: dict[str, _Read] = {}
        # The most this process knows is stored per key: a note no longer than it is no news.
        self._stored: dict[str, int] = {}

    def known_seconds(self, tool: Tool) -> float | None:
        """The longest step ``tool``'s body is known to have run, in seconds; None while
        nothing is known (a tool never run by this code version, or the table unreachable:
        then it is treated as possibly long, which is always safe)."""
        key = duration_key(tool)
        now = self._monotonic()
        with self._lock:
            read = self._read.get(key)
        if read is not None and now - read.at < self._fresh:
            return read.seconds
        try:
            ms = self._store.longest_step_ms(key)
        except TaskgateError:
            logger.warning("could not read how long tool %s runs", tool.name, exc_info=True)
            return read.seconds if read is not None else None
        if ms is None:
            # Not kept: the first run (anywhere) makes it known, and the next call reads it.
            return None
        seconds = ms / 1000
        with self._lock:
            self._read[key] = _Read(seconds, now)
            self._stored[key] = max(self._stored.get(key, 0), ms)
        return seconds

    def note(self, tool: Tool, seconds: float) -> None:
        """One step of ``tool``'s body ran for ``seconds``. Never raises: learning is worth
        a write, not a failed step or call."""
        key = duration_key(tool)
        ms = max(1, math.ceil(seconds * 1000))
        with self._lock:
            if self._stored.get(key, 0) >= ms:
                return
        now = self._clock()
        try:
            raised = self._store.raise_longest_step(key, ms, now, now + self._keep_ms)
        except TaskgateError:
            logger.warning("could not note how long tool %s ran", tool.name, exc_info=True)
            return
        with self._lock:
            self._stored[key] = max(self._stored.get(key, 0), ms)
            read = self._read.get(key)
            if raised or (read is not None and read.seconds * 1000 < ms):
                # What this process reads next is at least this.
                self._read[key] = _Read(ms / 1000, self._monotonic())
