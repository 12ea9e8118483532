"""What the eras' handlers are given: the services they drive, and who they are.

``Services`` is an interface: the composition root (``taskgate.root.Taskgate``) is one,
and builds each service the first time a handler asks for it, so a request that reads a
task never loads a tool module, a resource or a prompt.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Protocol

from .. import __version__

if TYPE_CHECKING:
    from ..domain.calls import PlainCalls
    from ..domain.service import TaskService
    from ..tools.prompts import PromptRegistry
    from ..tools.registry import ToolRegistry
    from ..tools.resources import ResourceRegistry
    from .plain_calls import CallPolicy
    from .request_state import RequestStates

SERVER_NAME = "taskgate"

# Told of every task event a client causes: (event, fields). The Lambda handler
# turns these into audit log lines and metrics; tests can collect them.
AuditHook = Callable[[str, dict[str, Any]], None]


def server_info() -> dict[str, str]:
    return {"name": SERVER_NAME, "version": __version__}


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


class Services(Protocol):
    @property
    def tasks(self) -> TaskService: ...

    @property
    def tools(self) -> ToolRegistry: ...

    # What the modules in ToolModules registered beside their tools.
    @property
    def resources(self) -> ResourceRegistry: ...

    @property
    def prompts(self) -> PromptRegistry: ...

    # Seals a plain call's requestState (2026-07-28).
    @property
    def request_states(self) -> RequestStates: ...

    @property
    def inline(self) -> InlineSlots: ...

    # Who a request without an identity is (AuthMode NONE).
    @property
    def anonymous_owner(self) -> str: ...

    # What a plain call of a long tool becomes (protocol/plain_calls.py).
    @property
    def policy(self) -> CallPolicy: ...

    # Plain calls' hidden tasks, keyed to their calls (domain/calls.py).
    @property
    def plain_calls(self) -> PlainCalls: ...

    def audit(self, event: str, fields: dict[str, Any]) -> None: ...
