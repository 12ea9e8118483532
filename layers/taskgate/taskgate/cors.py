"""CORS for browser hosts on the allowed origins (ALLOWED_ORIGINS).

A web page's script may call the API only after a preflight (OPTIONS) says so, and may read
a response header only when the response names it. Deployed, API Gateway does both for
AllowedOrigins (template.yaml, McpApi's CorsConfiguration) and ignores what the function
says; this middleware does the same for the local server and any front without CORS of its
own. It is outermost, so a preflight (which carries no token) is answered before sign-in
asks for one, and a 401's WWW-Authenticate is readable by the page.
"""

from __future__ import annotations

from collections.abc import Callable

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from .protocol.wire.transport_security import TransportSecurity

ALLOWED_METHODS = b"GET, POST, DELETE, OPTIONS"
# What an MCP client's script needs to read: the session, the negotiated revision, and where
# to sign in.
EXPOSED_HEADERS = b"Mcp-Session-Id, MCP-Protocol-Version, WWW-Authenticate"
MAX_AGE = b"600"


def _header(scope: Scope, name: bytes) -> str | None:
    for key, value in scope.get("headers", []):
        if key.lower() == name:
            try:
                return bytes(value).decode("ascii")
            except UnicodeDecodeError:
                return None
    return None


class Cors:
    def __init__(
        self, app: ASGIApp, security: TransportSecurity, own_domain: Callable[[Scope], str | None]
    ) -> None:
        self.app = app
        self.security = security
        self.own_domain = own_domain

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        origin = _header(scope, b"origin") if scope["type"] == "http" else None
        if origin is None or not self.security.origin_allowed(origin, self.own_domain(scope)):
            # No browser, or one whose page may not call: the app's own checks answer it.
            await self.app(scope, receive, send)
            return
        allow = [(b"access-control-allow-origin", origin.encode()), (b"vary", b"Origin")]
        if scope["method"] == "OPTIONS" and _header(scope, b"access-control-request-method"):
            # The page's origin is allowed, so the headers it asks to send are too (MCP's
            # Mcp-Param-* names depend on the tool).
            requested = _header(scope, b"access-control-request-headers") or ""
            await send(
                {
                    "type": "http.response.start",
                    "status": 204,
                    "headers": [
                        *allow,
                        (b"access-control-allow-methods", ALLOWED_METHODS),
                        (b"access-control-allow-headers", requested.encode()),
                        (b"access-control-max-age", MAX_AGE),
                    ],
                }
            )
            await send({"type": "http.response.body", "body": b""})
            return

        async def with_cors(message: Message) -> None:
            if message["type"] == "http.response.start":
                message = {
                    **message,
                    "headers": [
                        *message.get("headers", []),
                        *allow,
                        (b"access-control-expose-headers", EXPOSED_HEADERS),
                    ],
                }
            await send(message)

        await self.app(scope, receive, with_cors)
