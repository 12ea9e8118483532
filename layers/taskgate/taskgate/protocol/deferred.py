"""An era, or a group of an era's methods, built by the first request that reaches it.

The API function's init builds what every request needs; an era that most
requests never reach (2025-11-25, for a 2026-07-28 client) is imported and
built on its first use instead, so its modules stay out of the cold start.
``McpServer`` sees an ``Era`` like any other.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from typing import Any

from .era import Call, Era, HttpReply, Method, MethodRegistry, Result
from .jsonrpc import ClientResponse

# What resources.py, prompts.py and completion.py serve: a registry can defer them by name
# (MethodRegistry.defer) and import those modules with the first request for one.
CATALOG_METHODS = (
    "resources/list",
    "resources/templates/list",
    "resources/read",
    "prompts/list",
    "prompts/get",
    "completion/complete",
)


class DeferredEra(Era):
    def __init__(self, build: Callable[[], Era]) -> None:
        # No Era.__init__: the registry is the built era's.
        self._build: Callable[[], Era] | None = build
        self._built: Era | None = None
        self._lock = threading.Lock()  # the local server's request threads

    @property
    def era(self) -> Era:
        built = self._built
        if built is None:
            with self._lock:
                if self._built is None:
                    assert self._build is not None
                    self._built = self._build()
                    self._build = None
                built = self._built
        return built

    @property
    def built(self) -> bool:
        return self._built is not None

    @property
    def version(self) -> str:  # type: ignore[override]
        return self.era.version

    def __getattr__(self, name: str) -> Any:
        # Anything else the built era has (tests and scripts reach into it).
        if name in {"_build", "_built", "_lock"}:
            raise AttributeError(name)
        return getattr(self.era, name)

    @property
    def methods(self) -> MethodRegistry:
        return self.era.methods

    @methods.setter
    def methods(self, value: MethodRegistry) -> None:
        self.era.methods = value

    # The server asks the last era only for what no other era claimed, so building
    # it to answer ``claims`` costs a request that speaks another era nothing.
    def claims(self, headers: Mapping[str, str], meta: Mapping[str, Any]) -> bool:
        return self.era.claims(headers, meta)

    def status_for(self, code: int) -> int:
        return self.era.status_for(code)

    def before(self, call: Call) -> None:
        self.era.before(call)

    def dispatch(self, call: Call) -> Result:
        return self.era.dispatch(call)

    def shape(self, method: Method, result: Result) -> Result:
        return self.era.shape(method, result)

    def notify(self, call: Call) -> None:
        self.era.notify(call)

    def client_response(self, message: ClientResponse, call: Call) -> None:
        self.era.client_response(message, call)

    def handle_get(self, call: Call) -> HttpReply:
        return self.era.handle_get(call)

    def handle_delete(self, call: Call) -> HttpReply:
        return self.era.handle_delete(call)
