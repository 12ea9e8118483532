"""A local stand-in for API Gateway in front of Lambda, so nothing passes locally that
fails deployed (issue 18 item 4).

What a deployed taskgate's clients live with, and this front enforces on `make serve`:

- **Buffered.** Lambda (through Mangum) hands API Gateway the whole response at once:
  an SSE stream reaches the client in one piece when the invocation ends, never event by
  event. The request body is read whole before the "invocation" starts, too.
- **Cut at the integration timeout.** HTTP APIs wait at most 30 s (REST APIs 29 s by
  default), then answer for the integration: HTTP APIs ``503 {"message":"Service
  Unavailable"}``, REST APIs ``504 {"message": "Endpoint request timed out"}``. The Lambda
  does not learn of it: the invocation runs on and its answer is dropped, as here.
- **Lambda's 6 MB.** A synchronous invocation's response is at most 6,291,556 bytes
  (Lambda's ``Function.ResponseSizeTooLarge``, a function error): HTTP APIs answer
  ``500 {"message":"Internal Server Error"}``, REST APIs ``502 {"message": "Internal server
  error"}``. A request over Lambda's 6 MB invocation payload is refused with 413.
- **A failed invocation is the API's own error.** The local server's Lambda mode (``make serve
  LAMBDA=1``) answers an invocation that failed (its function's timeout, an unhandled error) as
  Lambda's Invoke does (``X-Amz-Function-Error``); the caller gets HTTP APIs' ``500`` (REST
  APIs' ``502``), never the function's payload. With a function timeout below the cut (29 s
  under 30 s, as deployed) that is what a request too long for the function gets.
- **A hang-up is invisible.** A client that closes its connection does not stop the
  invocation; the front keeps reading the upstream answer and drops it.
- **Headers as API Gateway passes them** (payload format 2.0 through Mangum): hop-by-hop
  headers dropped, repeated headers joined with commas (cookies with ``; ``),
  ``x-forwarded-for``/``-port``/``-proto`` and ``x-amzn-trace-id`` added; the response gets
  ``content-length``, ``date`` and ``apigw-requestid`` and loses ``transfer-encoding``.

Every request is recorded (times, method, the JSON-RPC method, status, sizes, whether the
front cut it), so a test can count the HTTP requests a call took.

    python -m tests.apigw_front --upstream http://127.0.0.1:3000 --port 3001 [--api rest] [--timeout 30]

(``make serve-front``). Tests use :func:`running_front`, which serves fronts from one
background thread.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import contextlib
import email.utils
import json
import secrets
import threading
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, Protocol

import httpx

# Lambda's synchronous invocation payload limits, in bytes: the response limit is the one in
# Lambda's own error ("Response payload size exceeded maximum allowed payload size
# (6291556 bytes)"); requests are held to 6 MiB.
LAMBDA_RESPONSE_LIMIT = 6_291_556
LAMBDA_REQUEST_LIMIT = 6_291_456
# The longest a Lambda invocation can run: how long the front goes on draining a cut request.
LAMBDA_MAX_SECONDS = 900.0
# How Lambda's Invoke marks a failed invocation (the local server's Lambda mode sends it too).
FUNCTION_ERROR = "x-amz-function-error"
HOP_BY_HOP = frozenset(
    {
        "connection",
        "keep-alive",
        "proxy-authenticate",
        "proxy-authorization",
        "proxy-connection",
        "te",
        "trailer",
        "transfer-encoding",
        "upgrade",
        "content-length",  # recomputed from the buffered body
    }
)
# What the local server's uvicorn adds and a Lambda response (Mangum) has not: API Gateway sets its own.
SERVER_ONLY = frozenset({"date", "server"})
TEXT_TYPES = ("text/", "application/json", "application/javascript", "application/xml")


@dataclass(frozen=True)
class Api:
    """How one kind of API Gateway API answers what goes wrong behind it."""

    name: str
    timeout_seconds: float
    timeout_status: int
    timeout_body: bytes
    lambda_error_status: int
    lambda_error_body: bytes


HTTP_API = Api(
    "http",
    30.0,
    503,
    b'{"message":"Service Unavailable"}',
    500,
    b'{"message":"Internal Server Error"}',
)
REST_API = Api(
    "rest",
    29.0,
    504,
    b'{"message": "Endpoint request timed out"}',
    502,
    b'{"message": "Internal server error"}',
)
APIS = {api.name: api for api in (HTTP_API, REST_API)}
REQUEST_TOO_LARGE = b'{"message":"Request Entity Too Large"}'


@dataclass
class Record:
    """One request the front answered."""

    started: float  # time.time()
    method: str
    path: str
    rpc: str | None  # the JSON-RPC method of a POST body, when there is one
    ended: float = 0.0
    status: int = 0
    request_bytes: int = 0
    response_bytes: int = 0
    cut: bool = False  # answered by the front at the integration timeout
    too_large: bool = False  # the response broke Lambda's payload limit
    # The function failed (Lambda's X-Amz-Function-Error: its timeout, an unhandled error).
    function_error: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


class UpstreamResponse(Protocol):
    status: int
    headers: list[tuple[str, str]]

    def chunks(self) -> AsyncIterator[bytes]: ...

    async def close(self) -> None: ...


# (method, path with query, headers, body) -> the upstream's answer, its body still to read.
Upstream = Callable[[str, str, list[tuple[str, str]], bytes], Awaitable[UpstreamResponse]]


class _HttpxResponse:
    def __init__(self, response: httpx.Response) -> None:
        self._response = response
        self.status = response.status_code
        self.headers = list(response.headers.multi_items())

    def chunks(self) -> AsyncIterator[bytes]:
        return self._response.aiter_raw()

    async def close(self) -> None:
        await self._response.aclose()


def httpx_upstream(base_url: str) -> Upstream:
    """The upstream at ``base_url`` (e.g. ``make serve``'s ``http://127.0.0.1:3000``)."""
    client = httpx.AsyncClient(base_url=base_url, timeout=httpx.Timeout(None))

    async def send(method: str, path: str, headers: list[tuple[str, str]], body: bytes) -> UpstreamResponse:
        request = client.build_request(method, path, headers=headers, content=body)
        return _HttpxResponse(await client.send(request, stream=True))

    return send


@dataclass
class Front:
    """The ASGI app: one API Gateway stage in front of one "Lambda" (the upstream)."""

    upstream: Upstream
    api: Api = HTTP_API
    timeout_seconds: float | None = None  # None: the API's own integration timeout
    records: list[Record] = field(default_factory=list)
    # Invocations still running after the front answered without them (cut, or the client left).
    _running: set[asyncio.Task[Any]] = field(default_factory=set)

    @property
    def timeout(self) -> float:
        return self.api.timeout_seconds if self.timeout_seconds is None else self.timeout_seconds

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            while (await receive())["type"] != "lifespan.shutdown":
                await send({"type": "lifespan.startup.complete"})
            await send({"type": "lifespan.shutdown.complete"})
            return
        if scope["type"] != "http":
            return
        body = bytearray()
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        record = Record(time.time(), scope["method"], scope["path"], _rpc_method(bytes(body)))
        record.request_bytes = len(body)
        self.records.append(record)
        status, headers, payload = await self._answer(scope, bytes(body), record)
        record.status, record.response_bytes, record.ended = status, len(payload), time.time()
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": payload})

    async def _answer(
        self, scope: dict[str, Any], body: bytes, record: Record
    ) -> tuple[int, list[tuple[bytes, bytes]], bytes]:
        request_id = _request_id()
        if len(body) > LAMBDA_REQUEST_LIMIT:
            return 413, _gateway_headers(request_id, len(REQUEST_TOO_LARGE)), REQUEST_TOO_LARGE
        path = scope.get("raw_path", scope["path"].encode()).decode()
        if scope.get("query_string"):
            path += "?" + scope["query_string"].decode()
        invocation = asyncio.ensure_future(
            self._invoke(scope["method"], path, forwarded_headers(scope, request_id), body)
        )
        self._running.add(invocation)
        invocation.add_done_callback(self._running.discard)
        try:
            # shield: neither the cut nor a client that left stops the "Lambda".
            status, headers, payload = await asyncio.wait_for(asyncio.shield(invocation), self.timeout)
        except TimeoutError:
            record.cut = True
            self._drain(invocation)
            return self._error(self.api.timeout_status, self.api.timeout_body, request_id)
        except httpx.HTTPError:
            return self._error(self.api.lambda_error_status, self.api.lambda_error_body, request_id)
        function_error = next((v for k, v in headers if k.lower() == FUNCTION_ERROR), None)
        if function_error is not None:
            # The local server's Lambda mode answers a failed invocation as Lambda's Invoke
            # does: API Gateway answers the caller with its own 500 (HTTP API) or 502 (REST).
            record.function_error = function_error
            return self._error(self.api.lambda_error_status, self.api.lambda_error_body, request_id)
        if lambda_payload_size(status, headers, payload) > LAMBDA_RESPONSE_LIMIT:
            record.too_large = True
            return self._error(self.api.lambda_error_status, self.api.lambda_error_body, request_id)
        out = [(k.encode(), v.encode()) for k, v in headers if k.lower() not in HOP_BY_HOP | SERVER_ONLY]
        return status, out + _gateway_headers(request_id, len(payload)), payload

    async def _invoke(
        self, method: str, path: str, headers: list[tuple[str, str]], body: bytes
    ) -> tuple[int, list[tuple[str, str]], bytes]:
        response = await self.upstream(method, path, headers, body)
        try:
            chunks = [chunk async for chunk in response.chunks()]
        finally:
            await response.close()
        return response.status, response.headers, b"".join(chunks)

    def _drain(self, invocation: asyncio.Task[Any]) -> None:
        """Let a cut invocation run on (as the Lambda would), up to Lambda's own limit."""

        async def bounded() -> None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(invocation, LAMBDA_MAX_SECONDS)

        task = asyncio.ensure_future(bounded())
        self._running.add(task)
        task.add_done_callback(self._running.discard)

    def _error(
        self, status: int, body: bytes, request_id: str
    ) -> tuple[int, list[tuple[bytes, bytes]], bytes]:
        return (
            status,
            [(b"content-type", b"application/json"), *_gateway_headers(request_id, len(body))],
            body,
        )

    def requests_between(self, start: float, end: float) -> list[Record]:
        """The requests that began in [start, end] (wall clock, time.time())."""
        return [r for r in self.records if start <= r.started <= end]


def forwarded_headers(scope: dict[str, Any], request_id: str) -> list[tuple[str, str]]:
    """The request headers as the function sees them behind API Gateway (payload 2.0 + Mangum)."""
    joined: dict[str, list[str]] = {}
    for raw_name, raw_value in scope.get("headers", []):
        name = raw_name.decode("latin-1").lower()
        if name in HOP_BY_HOP or name.startswith("x-forwarded-"):
            continue
        joined.setdefault(name, []).append(raw_value.decode("latin-1"))
    out = [(name, ("; " if name == "cookie" else ",").join(values)) for name, values in joined.items()]
    client = (scope.get("client") or ("127.0.0.1", 0))[0]
    server_port = (scope.get("server") or ("127.0.0.1", 80))[1]
    out += [
        ("x-forwarded-for", client),
        ("x-forwarded-port", str(server_port)),
        ("x-forwarded-proto", scope.get("scheme", "http")),
        ("x-amzn-trace-id", f"Root=1-{int(time.time()):08x}-{request_id[:24]}"),
    ]
    return out


def lambda_payload_size(status: int, headers: list[tuple[str, str]], body: bytes) -> int:
    """The size of the JSON Lambda returns to API Gateway for this response (what its 6 MB
    limit counts): Mangum sends text bodies as text and anything else base64-encoded."""
    content_type = next((v for k, v in headers if k.lower() == "content-type"), "")
    text: str | None = None
    if content_type.startswith(TEXT_TYPES):
        with contextlib.suppress(UnicodeDecodeError):
            text = body.decode()
    envelope = {
        "statusCode": status,
        "headers": {k: v for k, v in headers},
        "body": text if text is not None else base64.b64encode(body).decode(),
        "isBase64Encoded": text is None,
    }
    return len(json.dumps(envelope).encode())


def _gateway_headers(request_id: str, length: int) -> list[tuple[bytes, bytes]]:
    return [
        (b"content-length", str(length).encode()),
        (b"date", email.utils.formatdate(usegmt=True).encode()),
        (b"apigw-requestid", request_id.encode()),
    ]


def _request_id() -> str:
    return base64.b32encode(secrets.token_bytes(10)).decode().rstrip("=")


def _rpc_method(body: bytes) -> str | None:
    try:
        message = json.loads(body)
    except ValueError:
        return None
    if isinstance(message, dict) and isinstance(message.get("method"), str):
        return str(message["method"])
    return None


# --- serving ------------------------------------------------------------------------------
# The front's own server adds no headers: the ones API Gateway adds come from _gateway_headers.
UVICORN: dict[str, Any] = {
    "log_level": "warning",
    "lifespan": "off",
    "server_header": False,
    "date_header": False,
}


@dataclass
class RunningFront:
    front: Front
    url: str  # the base URL, without a path


@contextlib.contextmanager
def running_front(upstream_base: str, count: int = 1, **settings: Any) -> Iterator[list[RunningFront]]:
    """Serve ``count`` fronts on free loopback ports (one background thread and event loop),
    each in front of ``upstream_base``; ``settings`` go to :class:`Front`."""
    import uvicorn

    loop = asyncio.new_event_loop()
    ready = threading.Event()
    servers: list[uvicorn.Server] = []
    fronts = [Front(httpx_upstream(upstream_base), **settings) for _ in range(count)]

    async def main() -> None:
        for front in fronts:
            servers.append(uvicorn.Server(uvicorn.Config(front, host="127.0.0.1", port=0, **UVICORN)))
        serving = [asyncio.ensure_future(server.serve()) for server in servers]
        while not all(server.started for server in servers):
            if any(task.done() for task in serving):
                break
            await asyncio.sleep(0.05)
        ready.set()
        await asyncio.gather(*serving)

    thread = threading.Thread(target=loop.run_until_complete, args=(main(),), daemon=True)
    thread.start()
    if not ready.wait(30) or not all(server.started for server in servers):
        raise RuntimeError("the API Gateway front did not start")
    try:
        yield [
            RunningFront(front, f"http://127.0.0.1:{server.servers[0].sockets[0].getsockname()[1]}")
            for front, server in zip(fronts, servers, strict=True)
        ]
    finally:
        for server in servers:
            server.should_exit = True
        thread.join(30)


def main(argv: list[str] | None = None) -> None:
    import uvicorn

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--upstream", required=True, help="the server's base URL, e.g. http://127.0.0.1:3000")
    parser.add_argument("--port", type=int, default=3001)
    parser.add_argument("--api", choices=sorted(APIS), default="http", help="HTTP API (default) or REST API")
    parser.add_argument(
        "--timeout", type=float, default=None, help="integration timeout, s (default: the API's)"
    )
    parser.add_argument("--log", help="append one JSON line per request to this file")
    args = parser.parse_args(argv)
    front = Front(httpx_upstream(args.upstream), APIS[args.api], args.timeout)
    app: Any = front
    if args.log:
        log_path = args.log

        async def logged(scope: dict[str, Any], receive: Any, send: Any) -> None:
            before = len(front.records)
            await front(scope, receive, send)
            if len(front.records) > before:
                with open(log_path, "a") as out:
                    out.write(json.dumps(front.records[-1].as_dict()) + "\n")

        app = logged
    print(
        f"API Gateway front ({front.api.name} API, cut at {front.timeout:g} s, "
        f"{LAMBDA_RESPONSE_LIMIT:,} bytes) on http://127.0.0.1:{args.port} -> {args.upstream}",
        flush=True,
    )
    uvicorn.run(app, host="127.0.0.1", port=args.port, **UVICORN)


if __name__ == "__main__":
    main()
