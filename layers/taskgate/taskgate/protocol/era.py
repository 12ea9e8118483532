"""The seam between the transport and a protocol era.

An ``Era`` answers three things: does this request belong to me (``claims``, a
pure function of the headers and ``_meta``), which methods do I serve (a
``MethodRegistry``: name → handler and its params model), and how do I
dispatch one. ``McpServer`` holds a list of eras and asks them in order.
Adding a method is one registry entry; adding an era is one package and one
entry in the server's list.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from pydantic import BaseModel, ValidationError

from ..codes import INVALID_PARAMS, METHOD_NOT_FOUND
from ..lazy import Lazy
from .wire.errors import RpcError
from .wire.exchange import Call, HttpReply, Result, validation_data
from .wire.jsonrpc import ClientResponse

Handler = Callable[[Call, Any], Result]


@dataclass(frozen=True)
class Method:
    """One JSON-RPC method of an era: its handler and what it must carry."""

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
    """Method name -> its handler, in registration order. A group of methods may be made on
    first use (``add_group``): a cold start whose request is another method never
    imports them."""

    def __init__(self, methods: list[Method] | None = None) -> None:
        self._methods: dict[str, Callable[[], Method]] = {}
        self._groups: list[Lazy[dict[str, Method]]] = []
        for method in methods or []:
            self.add(method)

    def _put(self, name: str, method: Callable[[], Method]) -> None:
        if name in self._methods:
            raise ValueError(f"method {name!r} is registered twice")
        self._methods[name] = method

    def add(self, method: Method) -> None:
        self._put(method.name, lambda: method)

    def add_group(self, names: Sequence[str], build: Callable[[], list[Method]]) -> None:
        """``build`` makes the methods ``names``, when one of them is first looked up."""
        expected = tuple(names)

        def made() -> dict[str, Method]:
            methods = {m.name: m for m in build()}
            if sorted(methods) != sorted(expected):
                raise RuntimeError(f"deferred methods {expected} built as {list(methods)}")
            return methods

        group = Lazy(made)
        self._groups.append(group)
        for name in expected:
            self._put(name, lambda name=name: group()[name])  # type: ignore[misc]

    def get(self, name: str) -> Method | None:
        found = self._methods.get(name)
        return found() if found is not None else None

    def names(self) -> list[str]:
        return list(self._methods)

    def __iter__(self) -> Iterator[Method]:
        return iter([method() for method in self._methods.values()])

    def __contains__(self, name: object) -> bool:
        return name in self._methods


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

    def before(self, call: Call, method: Method | None) -> Call:
        """Checks every request of this era passes before its method runs (headers, sessions);
        the call its method is given (with what the checks found). ``method``: the one the
        request names, looked up once for the request (None: this era has no such method)."""
        return call

    def dispatch(self, call: Call) -> Result:
        request = call.request
        assert request is not None
        method = self.methods.get(request.method)
        call = self.before(call, method)
        if method is None:
            raise RpcError(METHOD_NOT_FOUND, f"Method not found: {request.method}")
        return self.shape(method, method.handler(call, method.parse(request.params)))

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
