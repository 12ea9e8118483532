"""The Starlette app serving POST /mcp: size and JSON checks, then the MCP server."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from .protocol.identity import owner_from_event
from .protocol.jsonrpc import INVALID_REQUEST, PARSE_ERROR, RpcError, failure
from .protocol.server import McpServer


def _error(status: int, code: int, message: str) -> JSONResponse:
    return JSONResponse(failure(None, RpcError(code, message)), status)


def create_app(server: Callable[[], McpServer], *, anonymous_owner: str, max_body_bytes: int) -> Starlette:
    async def mcp(request: Request) -> Response:
        if request.method != "POST":
            # No server-initiated stream in this era: the client polls tasks/get.
            return Response(status_code=405, headers={"Allow": "POST"})
        body = await request.body()
        if len(body) > max_body_bytes:
            return _error(413, INVALID_REQUEST, f"Request body larger than {max_body_bytes} bytes")
        try:
            message: Any = json.loads(body)
        except (json.JSONDecodeError, UnicodeDecodeError):
            return _error(400, PARSE_ERROR, "Parse error: the body is not valid JSON")
        owner = owner_from_event(request.scope.get("aws.event"), anonymous_owner)
        status, payload = await run_in_threadpool(server().handle, message, request.headers, owner)
        if payload is None:
            return Response(status_code=status)
        return JSONResponse(payload, status)

    async def health(request: Request) -> Response:
        return JSONResponse({"status": "ok"})

    return Starlette(
        routes=[
            Route("/mcp", mcp, methods=["POST", "GET", "DELETE"]),
            Route("/health", health, methods=["GET"]),
        ]
    )
