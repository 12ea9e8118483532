"""The API Gateway front the host tests run through (tests/apigw_front.py): it buffers,
cuts at the integration timeout while the "Lambda" runs on, caps responses at Lambda's
6 MB, and passes headers as API Gateway does. Driven in-process over a fake upstream."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import pytest

from tests.apigw_front import (
    LAMBDA_RESPONSE_LIMIT,
    REST_API,
    Front,
    forwarded_headers,
    lambda_payload_size,
)


@dataclass
class FakeResponse:
    status: int
    headers: list[tuple[str, str]]
    parts: list[bytes]
    gate: asyncio.Event | None = None  # the last part waits for it
    closed: bool = False
    sent: list[bytes] = field(default_factory=list)

    async def chunks(self) -> AsyncIterator[bytes]:
        for i, part in enumerate(self.parts):
            if i == len(self.parts) - 1 and self.gate is not None:
                await self.gate.wait()
            self.sent.append(part)
            yield part

    async def close(self) -> None:
        self.closed = True


@dataclass
class FakeUpstream:
    response: FakeResponse
    seen: list[tuple[str, str, list[tuple[str, str]], bytes]] = field(default_factory=list)

    async def __call__(
        self, method: str, path: str, headers: list[tuple[str, str]], body: bytes
    ) -> FakeResponse:
        self.seen.append((method, path, headers, body))
        return self.response


def scope(method: str = "POST", headers: list[tuple[bytes, bytes]] | None = None) -> dict[str, Any]:
    return {
        "type": "http",
        "method": method,
        "path": "/mcp",
        "raw_path": b"/mcp",
        "query_string": b"",
        "scheme": "http",
        "client": ("127.0.0.9", 50000),
        "server": ("127.0.0.1", 3001),
        "headers": headers or [(b"content-type", b"application/json")],
    }


class Client:
    """What the client was sent, message by message."""

    def __init__(self, body: bytes) -> None:
        self.body = body
        self.messages: list[dict[str, Any]] = []

    async def receive(self) -> dict[str, Any]:
        return {"type": "http.request", "body": self.body, "more_body": False}

    async def send(self, message: dict[str, Any]) -> None:
        self.messages.append(message)

    @property
    def status(self) -> int:
        return int(self.messages[0]["status"])

    @property
    def headers(self) -> dict[str, str]:
        return {k.decode(): v.decode() for k, v in self.messages[0]["headers"]}

    @property
    def payload(self) -> bytes:
        return b"".join(m.get("body", b"") for m in self.messages[1:])


CALL = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "x"}}).encode()
SSE = [
    ("content-type", "text/event-stream"),
    ("transfer-encoding", "chunked"),
    ("mcp-session-id", "s1"),
    ("server", "uvicorn"),
    ("date", "Mon, 30 Nov 2026 10:00:00 GMT"),
]


async def _run(front: Front, client: Client, request: dict[str, Any] | None = None) -> None:
    await front(request or scope(), client.receive, client.send)


def test_an_sse_stream_reaches_the_client_whole_and_only_when_it_ends() -> None:
    async def go() -> None:
        gate = asyncio.Event()
        response = FakeResponse(
            200, SSE, [b"event: message\ndata: {progress 1}\n\n", b"data: {result}\n\n"], gate
        )
        front = Front(FakeUpstream(response))
        client = Client(CALL)
        call = asyncio.create_task(_run(front, client))
        while not response.sent:  # the first event has left the "Lambda"...
            await asyncio.sleep(0)
        for _ in range(20):
            await asyncio.sleep(0)
        assert client.messages == []  # ...and nothing has reached the client
        gate.set()
        await call
        assert client.status == 200
        assert client.payload == b"event: message\ndata: {progress 1}\n\ndata: {result}\n\n"
        assert len(client.messages) == 2  # one start, one body: no streaming
        assert client.headers["content-length"] == str(len(client.payload))
        assert "transfer-encoding" not in client.headers and "server" not in client.headers
        assert [k for k, _ in client.messages[0]["headers"]].count(b"date") == 1
        assert client.headers["mcp-session-id"] == "s1" and client.headers["apigw-requestid"]
        assert front.records[0].rpc == "tools/call" and front.records[0].status == 200

    asyncio.run(go())


def test_the_cut_answers_for_the_integration_and_the_lambda_runs_on() -> None:
    async def go() -> None:
        gate = asyncio.Event()
        response = FakeResponse(200, SSE, [b"data: early\n\n", b"data: late\n\n"], gate)
        front = Front(FakeUpstream(response), timeout_seconds=0.05)
        client = Client(CALL)
        await _run(front, client)
        assert client.status == 503
        assert json.loads(client.payload) == {"message": "Service Unavailable"}
        assert front.records[0].cut is True
        # The invocation was not stopped: it goes on to its end, and its answer is dropped.
        assert not response.closed
        gate.set()
        while not response.closed:
            await asyncio.sleep(0.01)
        assert response.sent == [b"data: early\n\n", b"data: late\n\n"]
        assert len(client.messages) == 2

    asyncio.run(go())


def test_a_rest_api_cuts_with_504() -> None:
    async def go() -> None:
        response = FakeResponse(200, SSE, [b"never"], asyncio.Event())
        front = Front(FakeUpstream(response), api=REST_API, timeout_seconds=0.05)
        client = Client(CALL)
        await _run(front, client)
        assert client.status == 504
        assert json.loads(client.payload) == {"message": "Endpoint request timed out"}

    asyncio.run(go())


def test_the_default_cut_is_the_apis_integration_timeout() -> None:
    assert Front(FakeUpstream(FakeResponse(200, [], []))).timeout == 30.0
    assert Front(FakeUpstream(FakeResponse(200, [], [])), api=REST_API).timeout == 29.0


@pytest.mark.parametrize(
    ("content_type", "fits"), [("application/json", 6_000_000), ("image/png", 4_500_000)]
)
def test_a_response_over_lambdas_6_mb_is_a_function_error(content_type: str, fits: int) -> None:
    """Text goes to Lambda as text, anything else base64-encoded (4/3 larger)."""

    async def go(size: int) -> Client:
        response = FakeResponse(200, [("content-type", content_type)], [b"a" * size])
        front = Front(FakeUpstream(response))
        client = Client(CALL)
        await _run(front, client)
        assert front.records[-1].too_large is (client.status != 200)
        return client

    assert asyncio.run(go(fits)).status == 200
    too_big = asyncio.run(go(LAMBDA_RESPONSE_LIMIT + 1))
    assert too_big.status == 500
    assert json.loads(too_big.payload) == {"message": "Internal Server Error"}


def test_the_payload_size_counts_the_envelope() -> None:
    body = b'{"x": "' + b"y" * 1000 + b'"}'
    size = lambda_payload_size(200, [("content-type", "application/json")], body)
    assert len(body) < size < len(body) + 200


def test_a_request_over_lambdas_limit_is_refused_unsent() -> None:
    async def go() -> None:
        upstream = FakeUpstream(FakeResponse(200, [], [b"{}"]))
        client = Client(b"x" * 6_291_457)
        await _run(Front(upstream), client)
        assert client.status == 413 and upstream.seen == []

    asyncio.run(go())


def test_headers_reach_the_function_as_api_gateway_passes_them() -> None:
    request = scope(
        headers=[
            (b"Content-Type", b"application/json"),
            (b"Accept", b"application/json"),
            (b"accept", b"text/event-stream"),
            (b"cookie", b"a=1"),
            (b"cookie", b"b=2"),
            (b"connection", b"keep-alive"),
            (b"x-forwarded-for", b"10.9.9.9"),
            (b"mcp-protocol-version", b"2025-11-25"),
        ]
    )
    headers = dict(forwarded_headers(request, "REQID"))
    assert headers["content-type"] == "application/json"
    assert headers["accept"] == "application/json,text/event-stream"
    assert headers["cookie"] == "a=1; b=2"
    assert headers["mcp-protocol-version"] == "2025-11-25"
    assert "connection" not in headers
    # What the client claims is replaced by what the gateway saw.
    assert headers["x-forwarded-for"] == "127.0.0.9"
    assert headers["x-forwarded-port"] == "3001" and headers["x-forwarded-proto"] == "http"
    assert headers["x-amzn-trace-id"].startswith("Root=1-")


def test_an_unreachable_function_is_a_function_error() -> None:
    import httpx

    async def failing(*args: Any) -> Any:
        raise httpx.ConnectError("refused")

    async def go() -> None:
        client = Client(CALL)
        await _run(Front(failing), client)
        assert client.status == 500

    asyncio.run(go())


@pytest.mark.parametrize(("api", "status"), [(None, 500), (REST_API, 502)])
def test_a_failed_invocation_is_the_apis_own_error(api: Any, status: int) -> None:
    """The local server's Lambda mode answers a failed invocation (its timeout) as Lambda's
    Invoke does; API Gateway gives the caller its own answer, never the function's payload."""

    async def go() -> Client:
        error = [("content-type", "application/json"), ("x-amz-function-error", "Unhandled")]
        payload = b'{"errorType": "Sandbox.Timedout", "errorMessage": "Task timed out after 29.00 seconds"}'
        front = Front(FakeUpstream(FakeResponse(502, error, [payload])), **({"api": api} if api else {}))
        client = Client(CALL)
        await _run(front, client)
        assert front.records[0].function_error == "Unhandled" and not front.records[0].cut
        return client

    client = asyncio.run(go())
    assert client.status == status and b"Task timed out" not in client.payload
