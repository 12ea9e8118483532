"""The request body limit is enforced while the body is read, and from its declared
``Content-Length`` before anything is read (issue 21, N6). The whole body used to be
buffered first: a request declaring 64 MiB was read to its end before the 413, and
300 MB raised the process's memory by 300 MB.

The app is driven through ASGI directly, with a ``receive`` that counts what it hands
over: uvicorn reads from the socket only as the app asks (its flow control pauses the
socket), so what the app never asks for never reaches the process. The real server's
version, with a socket: tests/e2e/test_local_server.py."""

from __future__ import annotations

import asyncio
import base64
import json
from typing import Any

from taskgate.http_app import create_app
from tests.asgi import exchange
from tests.fakes import World
from tests.mcp_client import headers_for

LIMIT = 1_048_576
CHUNK = 65_536


def _send(world: World, chunks: int, declared: int | None) -> tuple[int, dict[str, Any], int]:
    """POST ``chunks`` chunks of CHUNK bytes; (status, body, chunks the app read)."""
    app = create_app(lambda: world.server, anonymous_owner="anonymous", max_body_bytes=LIMIT)
    read = 0

    async def receive() -> dict[str, Any]:
        nonlocal read
        if read >= chunks:
            await asyncio.sleep(3600)
            return {"type": "http.disconnect"}
        read += 1
        return {"type": "http.request", "body": b" " * CHUNK, "more_body": read < chunks}

    headers = [(k.encode(), v.encode()) for k, v in headers_for("ping", {}).items()]
    if declared is not None:
        headers += [(b"content-length", str(declared).encode())]
    resp = exchange(app, "POST", headers, receive)
    return resp.status_code, json.loads(resp.content), read


def test_a_declared_length_past_the_limit_is_refused_before_a_byte_is_read(world: World) -> None:
    status, body, read = _send(world, chunks=1024, declared=64 * 1024 * 1024)
    assert status == 413 and body["error"]["code"] == -32600
    assert body["error"]["message"] == f"Request body larger than {LIMIT} bytes"
    assert read == 0


def test_a_streamed_body_is_refused_once_it_passes_the_limit(world: World) -> None:
    # 64 MiB sent chunked (no Content-Length): reading stops one chunk past the limit.
    status, body, read = _send(world, chunks=1024, declared=None)
    assert status == 413 and body["error"]["code"] == -32600
    assert read == LIMIT // CHUNK + 1


def test_a_body_that_understates_its_length_is_still_bounded(world: World) -> None:
    status, _, read = _send(world, chunks=1024, declared=100)
    assert status == 413 and read == LIMIT // CHUNK + 1


def test_a_body_at_the_limit_is_read_whole(world: World) -> None:
    # Exactly LIMIT bytes of spaces: read to the end, then refused as JSON (not as too large).
    status, body, read = _send(world, chunks=LIMIT // CHUNK, declared=LIMIT)
    assert (status, body["error"]["code"], read) == (400, -32700, LIMIT // CHUNK)


def _event(body: str, *, b64: bool = False, length: str | None = None) -> dict[str, Any]:
    headers = {"content-type": "application/json"} | ({"content-length": length} if length else {})
    return {"version": "2.0", "headers": headers, "body": body, "isBase64Encoded": b64}


def test_the_lambda_path_refuses_an_oversized_event_before_mangum() -> None:
    from taskgate.http_app import oversized_event

    small, big = "x" * 1000, "x" * 1001
    assert oversized_event(_event(small), 1000) is None
    refused = oversized_event(_event(big), 1000)
    assert refused is not None and refused["statusCode"] == 413
    assert json.loads(refused["body"])["error"] == {
        "code": -32600,
        "message": "Request body larger than 1000 bytes",
    }
    # Base64 bodies are measured as what they decode to.
    assert oversized_event(_event(base64.b64encode(b"y" * 1000).decode(), b64=True), 1000) is None
    assert oversized_event(_event(base64.b64encode(b"y" * 1001).decode(), b64=True), 1000) is not None
    # A declared length past the bound is refused too; no body at all is the app's business.
    assert oversized_event(_event(small, length="5000000"), 1000) is not None
    assert oversized_event({"version": "2.0", "headers": {}}, 1000) is None
