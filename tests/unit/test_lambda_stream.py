"""The streaming runtime's ASGI side (taskgate.lambda_stream.asgi): an API Gateway event
through a real Starlette app, its response handed over message by message."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import AsyncIterator

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route

from taskgate.lambda_stream.asgi import DELIMITER, prelude, stream_app
from tests.runtime_api_emulator import rest_api_event


def _app(release: threading.Event, closed: threading.Event) -> Starlette:
    async def ticks() -> AsyncIterator[str]:
        try:
            yield "data: one\n\n"
            while not release.is_set():
                await asyncio.sleep(0.01)
            yield "data: two\n\n"
        finally:
            closed.set()

    async def mcp(request: Request) -> Response:
        body = await request.json()
        headers = {
            "x-echo": body["echo"],
            "x-owner": str(request.scope["aws.event"]["requestContext"]["stage"]),
        }
        return StreamingResponse(ticks(), media_type="text/event-stream", headers=headers)

    return Starlette(routes=[Route("/mcp", mcp, methods=["POST"])])


def test_each_chunk_is_handed_over_before_the_app_writes_the_next() -> None:
    release, closed = threading.Event(), threading.Event()
    chunks = stream_app(_app(release, closed), rest_api_event({"echo": "hi"}, {}), context=None)
    head = next(chunks)
    meta, sep, rest = head.partition(DELIMITER)
    assert sep and rest == b""
    meta_json = json.loads(meta)
    assert meta_json["statusCode"] == 200
    assert meta_json["headers"]["x-echo"] == "hi"
    assert meta_json["headers"]["x-owner"] == "prod"  # the event reached the app as aws.event
    assert meta_json["headers"]["content-type"].startswith("text/event-stream")
    # The first event arrives while the app is still blocked before its second.
    assert next(chunks) == b"data: one\n\n"
    assert not release.is_set()
    release.set()
    assert list(chunks) == [b"data: two\n\n"]
    assert closed.wait(5)


def test_closing_the_stream_tells_the_app_its_client_is_gone() -> None:
    release, closed = threading.Event(), threading.Event()
    chunks = stream_app(_app(release, closed), rest_api_event({"echo": "x"}, {}), context=None)
    next(chunks)
    assert next(chunks) == b"data: one\n\n"
    chunks.close()  # what the runtime does when its connection breaks
    # The app's body is cancelled (its finally runs) before it was read to the end.
    assert closed.wait(5)
    assert not release.is_set()


def test_the_prelude_carries_cookies_apart_and_joins_repeated_headers() -> None:
    raw = prelude(201, [(b"Set-Cookie", b"a=1"), (b"X-A", b"1"), (b"x-a", b"2"), (b"set-cookie", b"b=2")])
    meta = json.loads(raw[: -len(DELIMITER)])
    assert raw.endswith(DELIMITER)
    assert meta == {"statusCode": 201, "headers": {"x-a": "1,2"}, "cookies": ["a=1", "b=2"]}


def test_an_app_that_fails_before_answering_raises_where_the_runtime_reads() -> None:
    async def broken(scope: object, receive: object, send: object) -> None:
        raise RuntimeError("boom")

    chunks = stream_app(broken, rest_api_event({}, {}), context=None)
    try:
        next(chunks)
    except RuntimeError as exc:
        assert str(exc) == "boom"
    else:
        raise AssertionError("the app's failure was swallowed")
