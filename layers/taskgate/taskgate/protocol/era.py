"""The seam between the transport and a protocol era.

An ``Era`` answers three things: does this request belong to me (``claims``, a
pure function of the headers and ``_meta``), which methods do I serve (a
``MethodRegistry``: name → handler and its params model), and how do I
dispatch one. ``McpServer`` holds a list of eras and asks them in order.
Adding a method is one registry entry; adding an era is one package and one
entry in the server's list.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from pydantic import BaseModel, ValidationError

from ..codes import INVALID_PARAMS, METHOD_NOT_FOUND
from .errors import RpcError
from .jsonrpc import ClientResponse, Request


@dataclass
class HttpReply:
    status: int
    body: dict[str, Any] | None = None
    headers: dict[str, str] = field(default_factory=dict)
    # Server-sent events, for a response that is a stream.
    stream: Iterator[str] | None = None


@dataclass(frozen=True)
class Call:
    """One HTTP request as a handler sees it: who asks, with which headers and message."""

    owner: str
    headers: Mapping[str, str]
    request: Request | None = None
    # Notifications the handler emitted for this request (progress, log messages): they go
    # before the response on an SSE reply, when the client accepts one.
    emitted: list[dict[str, Any]] = field(default_factory=list)
    # True once the client has gone away (the local server watches its connection; in
    # Lambda nothing can tell, and one instance serves one request anyway).
    gone: Callable[[], bool] = field(default=lambda: False)

    def emit(self, notification: dict[str, Any]) -> None:
        self.emitted.append(notification)

    @property
    def meta(self) -> dict[str, Any]:
        return self.request.meta if self.request is not None else {}

    @property
    def method(self) -> str:
        return self.request.method if self.request is not None else ""


Result = dict[str, Any] | HttpReply
Handler = Callable[[Call, Any], Result]


def validation_data(exc: ValidationError) -> list[dict[str, Any]]:
    # Locations and messages only: echoing input values back could leak secrets into logs.
    return [{"path": list(e["loc"]), "message": e["msg"]} for e in exc.errors()]


@dataclass(frozen=True)
class Method:
    name: str
    handler: Handler
    # Validates ``params`` before the handler sees them (None: the raw dict).
    params: type[BaseModel] | None = None
    # The params field the ``Mcp-Name`` routing header mirrors (SEP-2243), if any.
    name_field: str | None = None

    def parse(self, params: dict[str, Any]) -> Any:
        if self.params is None:
            return params
        try:
            return self.params.model_validate(params)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"]) or "params"
            raise RpcError(
                INVALID_PARAMS, f"Invalid params: {where}: {first['msg']}", {"errors": validation_data(exc)}
            ) from exc


class MethodRegistry:
    def __init__(self, methods: list[Method] | None = None) -> None:
        self._methods: dict[str, Method] = {}
        # Registration order, deferred names included (names() and iteration keep it).
        self._order: list[str] = []
        # A deferred name -> the group that serves it, built by the first look at any of its names.
        self._deferred: dict[str, _DeferredGroup] = {}
        self._lock = threading.Lock()  # the local server's request threads
        for method in methods or []:
            self.add(method)

    def add(self, method: Method) -> None:
        if method.name in self._methods or method.name in self._deferred:
            raise ValueError(f"method {method.name!r} is registered twice")
        self._methods[method.name] = method
        self._order.append(method.name)

    def defer(self, names: Sequence[str], build: Callable[[], list[Method]]) -> None:
        """Methods made on first use: ``build`` imports and makes the methods ``names``
        when one of them is first looked up, so a cold start whose request is another
        method never imports them."""
        group = _DeferredGroup(tuple(names), build)
        for name in names:
            if name in self._methods or name in self._deferred:
                raise ValueError(f"method {name!r} is registered twice")
            self._deferred[name] = group
            self._order.append(name)

    def _build(self, name: str) -> None:
        with self._lock:
            group = self._deferred.get(name)
            if group is None:
                return
            methods = group.build()
            if sorted(m.name for m in methods) != sorted(group.names):
                raise RuntimeError(f"deferred methods {group.names} built as {[m.name for m in methods]}")
            for method in methods:
                self._methods[method.name] = method
                del self._deferred[method.name]

    def get(self, name: str) -> Method | None:
        if name in self._deferred:
            self._build(name)
        return self._methods.get(name)

    def names(self) -> list[str]:
        return list(self._order)

    def __iter__(self) -> Iterator[Method]:
        for name in list(self._deferred):
            self._build(name)
        return iter([self._methods[name] for name in self._order])

    def __contains__(self, name: object) -> bool:
        return name in self._methods or name in self._deferred


@dataclass(frozen=True)
class _DeferredGroup:
    names: tuple[str, ...]
    build: Callable[[], list[Method]]


class Era:
    """Base of every protocol era. Subclasses set ``version``, ``http_status`` and
    ``claims``, and fill ``methods``."""

    #: The protocol version this era is known by (for logs and tests).
    version: ClassVar[str] = ""
    #: JSON-RPC error code → HTTP status; a code not listed travels with 200.
    http_status: ClassVar[Mapping[int, int]] = {}

    def __init__(self, methods: MethodRegistry | None = None) -> None:
        self.methods = methods or MethodRegistry()

    def claims(self, headers: Mapping[str, str], meta: Mapping[str, Any]) -> bool:
        raise NotImplementedError

    def status_for(self, code: int) -> int:
        return self.http_status.get(code, 200)

    def before(self, call: Call) -> None:
        """Checks every request of this era passes before its method runs (headers, sessions)."""

    def dispatch(self, call: Call) -> Result:
        assert call.request is not None
        self.before(call)
        method = self.methods.get(call.request.method)
        if method is None:
            raise RpcError(METHOD_NOT_FOUND, f"Method not found: {call.request.method}")
        return self.shape(method, method.handler(call, method.parse(call.request.params)))

    def shape(self, method: Method, result: Result) -> Result:
        """What this era adds to every result (2026: ``resultType``)."""
        return result

    def notify(self, call: Call) -> None:
        """A notification from the client; none needs an answer."""

    def client_response(self, message: ClientResponse, call: Call) -> None:
        """The client's answer to a request this server sent; ignored unless the era sends any."""

    def handle_get(self, call: Call) -> HttpReply:
        return HttpReply(405, headers={"allow": "POST"})

    def handle_delete(self, call: Call) -> HttpReply:
        return HttpReply(405, headers={"allow": "POST"})
