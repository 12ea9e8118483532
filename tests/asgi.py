"""Call an ASGI app with exactly the bytes a socket would deliver.

Starlette's TestClient re-encodes header values (it decodes them, then writes
them back as UTF-8), so it cannot send what a hostile client can: a header that
is not valid UTF-8. uvicorn passes such bytes through to the app untouched (and answers 500 when
the app raises); this does the same, in process and without a socket.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from starlette.types import ASGIApp


@dataclass
class RawResponse:
    status_code: int
    headers: dict[str, str]
    content: bytes

    @property
    def text(self) -> str:
        return self.content.decode("utf-8", "replace")


Receive = Callable[[], Awaitable[dict[str, Any]]]


def raw_request(
    app: ASGIApp, method: str, headers: list[tuple[bytes, bytes]], body: bytes = b"", path: str = "/mcp"
) -> RawResponse:
    pending = [{"type": "http.request", "body": body, "more_body": False}]

    async def receive() -> dict[str, Any]:
        if pending:
            return pending.pop(0)
        await asyncio.sleep(3600)  # the client stays connected until the app is done
        return {"type": "http.disconnect"}

    return exchange(app, method, headers, receive, path)


def exchange(
    app: ASGIApp, method: str, headers: list[tuple[bytes, bytes]], receive: Receive, path: str = "/mcp"
) -> RawResponse:
    """One request whose body and disconnect come from ``receive``, as a server's would."""

    async def run() -> list[dict[str, Any]]:
        sent: list[dict[str, Any]] = []

        async def send(message: dict[str, Any]) -> None:
            sent.append(message)

        scope = {
            "type": "http",
            "asgi": {"version": "3.0"},
            "http_version": "1.1",
            "method": method,
            "scheme": "http",
            "path": path,
            "raw_path": path.encode(),
            "query_string": b"",
            "root_path": "",
            # A Host the server accepts (transport security refuses others), unless given.
            "headers": [(name.lower(), value) for name, value in headers]
            + ([] if any(name.lower() == b"host" for name, _ in headers) else [(b"host", b"localhost")]),
            "client": ("127.0.0.1", 50000),
            "server": ("127.0.0.1", 80),
        }
        try:
            await app(scope, receive, send)  # type: ignore[arg-type]
        except Exception:
            # What uvicorn answers when the app raises before responding.
            if not any(m["type"] == "http.response.start" for m in sent):
                sent.append({"type": "http.response.start", "status": 500, "headers": []})
                sent.append({"type": "http.response.body", "body": b"Internal Server Error"})
        return sent

    sent = asyncio.run(run())
    start = next(m for m in sent if m["type"] == "http.response.start")
    content = b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")
    return RawResponse(
        start["status"], {k.decode("latin-1"): v.decode("latin-1") for k, v in start["headers"]}, content
    )
