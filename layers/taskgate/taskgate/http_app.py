"""The Starlette app serving /mcp: transport security, size and JSON checks, then the MCP server."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import AsyncIterator, Callable, Iterator, Mapping
from typing import TYPE_CHECKING, Any

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route
from starlette.types import ASGIApp

from .codes import INVALID_REQUEST, PARSE_ERROR
from .config import LOCAL_HOSTS, LOCAL_ORIGINS
from .cors import Cors
from .protocol.server import McpServer
from .protocol.wire.errors import RpcError
from .protocol.wire.exchange import HttpReply
from .protocol.wire.headers import header_problem
from .protocol.wire.identity import owner_from_event
from .protocol.wire.jsonrpc import failure
from .protocol.wire.transport_security import TransportSecurity, is_json
from .request_body import bounded_body, too_large

if TYPE_CHECKING:
    from .auth.resource import SignIn
    from .domain.callbacks import CallbackService


def _error(status: int, code: int, message: str) -> JSONResponse:
    return JSONResponse(failure(None, RpcError(code, message)), status)


def _has_lone_surrogate(message: Any) -> bool:
    try:
        json.dumps(message, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        return True
    except (ValueError, RecursionError):
        return True
    return False


def _no_constant(name: str) -> Any:
    # NaN and Infinity are not JSON: stored in a task's output they would make every later
    # answer carrying it invalid JSON for the client.
    raise ValueError(f"{name} is not JSON")


def _bearer(authorization: str) -> str:
    scheme, _, value = authorization.partition(" ")
    return value.strip() if scheme.lower() == "bearer" else ""


_END = object()


async def _in_threads(stream: Iterator[str]) -> AsyncIterator[str]:
    """A sync stream read in worker threads (its store polls never block the loop),
    and closed as soon as the response ends, however it ends: when the client goes
    away, the stream learns it at once (GeneratorExit) instead of whenever the garbage
    collector gets to it."""
    try:
        while (chunk := await run_in_threadpool(next, stream, _END)) is not _END:
            yield chunk  # type: ignore[misc]
    finally:
        close = getattr(stream, "close", None)
        if close is not None:
            close()


def _response(reply: HttpReply) -> Response:
    if reply.stream is not None:
        return StreamingResponse(_in_threads(reply.stream), status_code=reply.status, headers=reply.headers)
    if reply.body is None:
        return Response(status_code=reply.status, headers=reply.headers)
    return JSONResponse(reply.body, reply.status, headers=reply.headers)


def oversized_event(event: Mapping[str, Any], max_body_bytes: int) -> dict[str, Any] | None:
    """ApiFunction's check before Mangum: the 413 API Gateway gets for an event whose body
    passes ``max_body_bytes``, or None. In Lambda the body arrives whole inside the event
    (the runtime has read and parsed it already: up to Lambda's 6 MB invocation payload;
    API Gateway refuses anything past its own 10 MB before invoking), so nothing can be
    refused while reading. This spares what would follow: Mangum's decoded copy of the body
    and the app's work on it."""
    body = event.get("body")
    if not isinstance(body, str):
        return None
    size = len(body)
    if event.get("isBase64Encoded"):
        size = size * 3 // 4 - body[-2:].count("=")
    headers = event.get("headers")
    declared = headers.get("content-length") if isinstance(headers, Mapping) else None
    if isinstance(declared, str) and declared.isdigit():
        size = max(size, int(declared))
    if size <= max_body_bytes:
        return None
    return {
        "statusCode": 413,
        "headers": {"content-type": "application/json"},
        "body": json.dumps(failure(None, RpcError(INVALID_REQUEST, too_large(max_body_bytes)))),
        "isBase64Encoded": False,
    }


def _own_domain(request: Request) -> str | None:
    """The domain API Gateway served this request on (its Host is then ours by definition)."""
    event = request.scope.get("aws.event")
    context = event.get("requestContext") if isinstance(event, dict) else None
    domain = context.get("domainName") if isinstance(context, dict) else None
    return domain if isinstance(domain, str) and domain else None


class McpEndpoint:
    """/mcp: transport security, then the MCP server (GET resumes a stream, DELETE ends a
    session, POST carries a JSON-RPC message: its media type, size and JSON checked first)."""

    def __init__(
        self,
        server: Callable[[], McpServer],
        *,
        anonymous_owner: str,
        max_body_bytes: int,
        inline: bool,
        guard: TransportSecurity,
    ) -> None:
        self._server = server
        self._anonymous_owner = anonymous_owner
        self._max_body_bytes = max_body_bytes
        self._inline = inline
        self._guard = guard

    def _owner(self, request: Request) -> str:
        return owner_from_event(request.scope.get("aws.event"), self._anonymous_owner)

    async def _run(self, fn: Callable[..., HttpReply], *args: Any) -> HttpReply:
        return fn(*args) if self._inline else await run_in_threadpool(fn, *args)

    async def _run_watched(self, request: Request, fn: Callable[..., HttpReply], *args: Any) -> HttpReply:
        """``fn(*args, gone)``, where ``gone()`` turns True when the client disconnects: a
        plain call's tool then stops at its next progress report, freeing its slot. Only
        the local server can see that (its request body read, the next ASGI message is the
        disconnect); in Lambda (``inline``) API Gateway holds the connection, and one
        instance serves one request, so no other caller waits on it."""
        if self._inline:
            return fn(*args, None)
        left = threading.Event()

        async def watch() -> None:
            while (await request.receive())["type"] != "http.disconnect":
                pass
            left.set()

        watcher = asyncio.ensure_future(watch())
        try:
            return await run_in_threadpool(fn, *args, left.is_set)
        finally:
            watcher.cancel()

    async def serve(self, request: Request) -> Response:
        problem = header_problem(request.scope["headers"])
        if problem is not None:
            # Before anything reads a header: bytes that are not UTF-8, MCP headers
            # that are not plain ASCII, or one sent twice (a proxy could read the other).
            return JSONResponse(failure(None, problem), 400)
        refusal = self._guard.refusal(request.headers, _own_domain(request))
        if refusal is not None:
            return _error(403, INVALID_REQUEST, refusal)
        if request.method == "GET":
            return _response(
                await self._run(self._server().handle_get, request.headers, self._owner(request))
            )
        if request.method == "DELETE":
            return _response(
                await self._run(self._server().handle_delete, request.headers, self._owner(request))
            )
        if not is_json(request.headers.get("content-type")):
            return _error(
                415, INVALID_REQUEST, "Unsupported Media Type: Content-Type must be application/json"
            )
        body = await bounded_body(request, self._max_body_bytes)
        if body is None:
            # The rest of the body is never read, so the connection cannot carry another request.
            response = _error(413, INVALID_REQUEST, too_large(self._max_body_bytes))
            response.headers["connection"] = "close"
            return response
        try:
            message: Any = json.loads(body)
        except (ValueError, RecursionError):
            # ValueError covers bad JSON, bad UTF-8 and integers past Python's digit
            # limit; RecursionError, nesting deeper than the parser goes.
            return _error(400, PARSE_ERROR, "Parse error: the body is not valid JSON")
        if _has_lone_surrogate(message):
            # Valid JSON, but not Unicode: nothing downstream (DynamoDB, our own JSON
            # replies) can store or echo an unpaired surrogate, so refuse it up front.
            return _error(
                400, INVALID_REQUEST, "Invalid Request: the body contains an unpaired UTF-16 surrogate"
            )
        server = self._server()
        return _response(
            await self._run_watched(request, server.handle, message, request.headers, self._owner(request))
        )


class CallbackEndpoint:
    """POST /callbacks/{taskId}: where an outside system ends the job a tool handed off to it
    (domain/callbacks.py); open in every AuthMode, the URL's secret being the capability."""

    def __init__(
        self,
        callbacks: Callable[[], CallbackService],
        *,
        max_body_bytes: int,
        inline: bool,
        guard: TransportSecurity,
    ) -> None:
        self._callbacks = callbacks
        self._max_body_bytes = max_body_bytes
        self._inline = inline
        self._guard = guard

    async def serve(self, request: Request) -> Response:
        refusal = self._guard.refusal(request.headers, _own_domain(request))
        if refusal is not None:
            return JSONResponse({"error": refusal}, 403)
        secret = request.query_params.get("secret", "") or _bearer(request.headers.get("authorization", ""))
        body = await bounded_body(request, self._max_body_bytes)
        if body is None:
            response = JSONResponse({"error": too_large(self._max_body_bytes)}, 413)
            response.headers["connection"] = "close"
            return response
        try:
            message: Any = json.loads(body, parse_constant=_no_constant) if body else None
        except (ValueError, RecursionError):
            return JSONResponse({"error": "The body is not valid JSON."}, 400)
        if _has_lone_surrogate(message):
            return JSONResponse({"error": "The body contains an unpaired UTF-16 surrogate."}, 400)
        service = self._callbacks()

        def deliver() -> Any:
            return service.deliver(request.path_params["task_id"], secret, message)

        reply = deliver() if self._inline else await run_in_threadpool(deliver)
        return JSONResponse(reply.body, reply.status)


async def health(request: Request) -> Response:
    return JSONResponse({"status": "ok"})


def create_app(
    server: Callable[[], McpServer],
    *,
    anonymous_owner: str,
    max_body_bytes: int,
    inline: bool = False,
    security: TransportSecurity | None = None,
    sign_in: SignIn | None = None,
    callbacks: Callable[[], CallbackService] | None = None,
) -> ASGIApp:
    """``inline=True`` handles requests on the event loop's thread. In Lambda one
    instance serves one request at a time, and Mangum's loop would otherwise start
    a fresh worker thread for every request; a local server keeps the thread pool.
    ``security``: the Host/Origin allow-lists (localhost only when not given).
    ``sign_in`` (AuthMode) serves the protected resource metadata and the authorization
    server, requires a bearer token on /mcp, and takes IAM callers on /iam/mcp (taskgate/auth).
    ``callbacks`` serves POST /callbacks/{taskId} (``CallbackEndpoint``)."""
    guard = security or TransportSecurity(LOCAL_HOSTS, LOCAL_ORIGINS)
    mcp = McpEndpoint(
        server, anonymous_owner=anonymous_owner, max_body_bytes=max_body_bytes, inline=inline, guard=guard
    ).serve
    routes = [
        Route("/mcp", mcp, methods=["POST", "GET", "DELETE"]),
        Route("/health", health, methods=["GET"]),
    ]
    if callbacks is not None:
        endpoint = CallbackEndpoint(callbacks, max_body_bytes=max_body_bytes, inline=inline, guard=guard)
        routes.append(Route("/callbacks/{task_id}", endpoint.serve, methods=["POST"]))
    if sign_in is None:
        app: ASGIApp = Starlette(routes=routes)
    else:
        routes += [Route(path, mcp, methods=["POST", "GET", "DELETE"]) for path in sign_in.paths]
        app = sign_in.protect(routes, inline=inline)
    # Outermost: a preflight carries no token, and a 401's WWW-Authenticate must be readable.
    return Cors(app, guard, lambda scope: _own_domain(Request(scope)))
