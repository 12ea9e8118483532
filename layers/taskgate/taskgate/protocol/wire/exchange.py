"""One HTTP exchange as a handler sees it: the request (``Call``: who asks, with which
headers and message) and the reply (``HttpReply``, or a JSON-RPC result)."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from .jsonrpc import Request

if TYPE_CHECKING:
    from ...domain.sessions import Session


@dataclass
class HttpReply:
    """An HTTP answer: a JSON body or an event stream."""

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
    # 2025-11-25: the session the era's ``before`` found for this request (None: none).
    session: Session | None = None
    # True once the client has gone away (the local server watches its connection; in
    # Lambda nothing can tell, and one instance serves one request anyway).
    gone: Callable[[], bool] = field(default=lambda: False)
    # When it arrived (time.monotonic()): a request that waits counts its budget from here.
    received: float = field(default_factory=time.monotonic)

    def emit(self, notification: dict[str, Any]) -> None:
        self.emitted.append(notification)

    @property
    def meta(self) -> dict[str, Any]:
        return self.request.meta if self.request is not None else {}

    @property
    def method(self) -> str:
        return self.request.method if self.request is not None else ""


Result = dict[str, Any] | HttpReply


def validation_data(exc: ValidationError) -> list[dict[str, Any]]:
    # Locations and messages only: echoing input values back could leak secrets into logs.
    return [{"path": list(e["loc"]), "message": e["msg"]} for e in exc.errors()]
