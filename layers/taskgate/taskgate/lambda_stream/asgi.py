"""One API Gateway event through an ASGI app, its response handed over as it is sent.

Mangum builds the request (the same scope ApiFunction's app sees, ``aws.event``
included, so the caller's identity is read the same way) but buffers the response;
here the app runs on an event loop of its own thread and each message it sends is
passed on at once. Closing the iterator (the connection broke) tells the app its
client is gone, as a server would (``http.disconnect``).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import queue
import threading
from collections.abc import Iterator
from typing import Any

from mangum.handlers import APIGateway, HTTPGateway
from mangum.types import LambdaConfig

ASGIApp = Any

DELIMITER = b"\0" * 8
_CONFIG = LambdaConfig(api_gateway_base_path="/", text_mime_types=[], exclude_headers=[])
_DONE = object()


def prelude(status: int, raw_headers: list[tuple[bytes, bytes]]) -> bytes:
    """The metadata API Gateway (and a function URL) reads before the payload."""
    headers: dict[str, str] = {}
    cookies: list[str] = []
    for key, value in raw_headers:
        name, text = key.decode("latin-1").lower(), value.decode("latin-1")
        if name == "set-cookie":
            cookies.append(text)
        else:
            headers[name] = f"{headers[name]},{text}" if name in headers else text
    meta: dict[str, Any] = {"statusCode": status, "headers": headers}
    if cookies:
        meta["cookies"] = cookies
    return json.dumps(meta, separators=(",", ":")).encode() + DELIMITER


def request_of(event: dict[str, Any], context: Any) -> tuple[dict[str, Any], bytes]:
    """The ASGI scope and body of a REST API (v1) or function URL / HTTP API (v2) event."""
    for handler_cls in (HTTPGateway, APIGateway):
        if handler_cls.infer(event, context, _CONFIG):
            handler = handler_cls(event, context, _CONFIG)
            return dict(handler.scope), handler.body
    raise ValueError("not an API Gateway or function URL event")


def stream_app(app: ASGIApp, event: dict[str, Any], context: Any) -> Iterator[bytes]:
    """The app's response to ``event``: the prelude first, then the body chunks as the
    app sends them. An exception of the app surfaces here, where it happened."""
    scope, body = request_of(event, context)
    out: queue.Queue[Any] = queue.Queue()
    loop = asyncio.new_event_loop()
    gone = asyncio.Event()
    received = False

    async def receive() -> dict[str, Any]:
        nonlocal received
        if not received:
            received = True
            return {"type": "http.request", "body": body, "more_body": False}
        await gone.wait()
        return {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        out.put(message)

    def run() -> None:
        try:
            loop.run_until_complete(app(scope, receive, send))
            out.put(_DONE)
        except BaseException as exc:  # handed to the reading thread, which raises it
            out.put(exc)
        finally:
            loop.close()

    worker = threading.Thread(target=run, name="asgi-stream", daemon=True)
    worker.start()
    finished = False
    try:
        while True:
            message = out.get()
            if message is _DONE:
                finished = True
                return
            if isinstance(message, BaseException):
                finished = True
                raise message
            if message["type"] == "http.response.start":
                yield prelude(message["status"], [tuple(h) for h in message.get("headers", [])])
            elif message["type"] == "http.response.body":
                chunk = message.get("body", b"")
                if chunk:
                    yield chunk
                if not message.get("more_body", False):
                    finished = True
                    return
    finally:
        if not finished:
            # Closed before the response ended: the client is gone.
            with contextlib.suppress(RuntimeError):  # unless the app had just ended, closing its loop
                loop.call_soon_threadsafe(gone.set)
        worker.join(timeout=30)
