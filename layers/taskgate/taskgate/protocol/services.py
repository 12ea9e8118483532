"""What the eras' handlers are given: the services they drive, and who they are.

``Services`` is an interface: the composition root (``taskgate.root.Taskgate``) is one,
and builds each service the first time a handler asks for it, so a request that reads a
task never loads a tool module, a resource or a prompt.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Protocol

from .. import __version__

if TYPE_CHECKING:
    from ..domain.service import TaskService
    from ..tools.prompts import PromptRegistry
    from ..tools.registry import ToolRegistry
    from ..tools.resources import ResourceRegistry
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
    process serving many (the local server) ever reaches it."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._free = threading.BoundedSemaphore(size)

    @contextmanager
    def held(self) -> Iterator[bool]:
        """A slot for the duration of the block; False (and no slot) when all are taken."""
        acquired = self._free.acquire(blocking=False)
        try:
            yield acquired
        finally:
            if acquired:
                self._free.release()


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

    def audit(self, event: str, fields: dict[str, Any]) -> None: ...
