"""A development authorizer: bearer tokens from configuration, fed through the same
code path as API Gateway's Lambda authorizer, so owner isolation can be tried and
tested locally.

``TASKGATE_DEV_TOKENS="tokenA=alice,tokenB=bob"`` (or ``@path/to/file`` with one
``token=owner`` per line). A request with an unknown bearer token gets 401;
one with none stays anonymous, as with auth switched off.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from starlette.types import ASGIApp, Receive, Scope, Send

from ..protocol.wire.headers import header_problem
from ..protocol.wire.jsonrpc import failure


def parse_tokens(spec: str) -> dict[str, str]:
    if spec.startswith("@"):
        spec = ",".join(line.strip() for line in Path(spec[1:]).read_text().splitlines() if line.strip())
    tokens: dict[str, str] = {}
    for pair in spec.split(","):
        token, sep, owner = pair.strip().partition("=")
        if sep and token and owner:
            tokens[token] = owner
    return tokens


class DevAuthMiddleware:
    def __init__(self, app: ASGIApp, tokens: dict[str, str]) -> None:
        self._app = app
        self._tokens = tokens

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            problem = header_problem(scope.get("headers", []))
            if problem is not None:
                # The app refuses these too; refusing here first means no header is
                # decoded (or trusted) before it has been checked.
                await _send_json(send, 400, failure(None, problem))
                return
            headers = {k.decode().lower(): v.decode() for k, v in scope.get("headers", [])}
            auth = headers.get("authorization", "")
            if auth.lower().startswith("bearer "):
                owner = self._tokens.get(auth[7:].strip())
                if owner is None:
                    await self._unauthorized(send)
                    return
                event: dict[str, Any] = {"requestContext": {"authorizer": {"lambda": {"owner": owner}}}}
                scope = {**scope, "aws.event": event}
        await self._app(scope, receive, send)

    @staticmethod
    async def _unauthorized(send: Send) -> None:
        body = {"jsonrpc": "2.0", "error": {"code": -32600, "message": "Unauthorized"}}
        await _send_json(send, 401, body, [(b"www-authenticate", b"Bearer")])


async def _send_json(
    send: Send, status: int, body: dict[str, Any], headers: list[tuple[bytes, bytes]] | None = None
) -> None:
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [(b"content-type", b"application/json"), *(headers or [])],
        }
    )
    await send({"type": "http.response.body", "body": json.dumps(body).encode()})
