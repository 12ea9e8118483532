"""A response as a short SSE stream: the notifications a request's handler emitted (progress,
log messages), then its response. Both eras use it for plain calls; the whole body is known
when it is sent (Lambda buffers responses anyway), one JSON message per ``data:`` line."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import Any

from .exchange import HttpReply

HEADERS = {"content-type": "text/event-stream", "cache-control": "no-cache", "x-accel-buffering": "no"}


def accepts(headers: Mapping[str, str]) -> bool:
    return "text/event-stream" in headers.get("accept", "")


def event(message: dict[str, Any]) -> str:
    return f"event: message\ndata: {json.dumps(message, separators=(',', ':'))}\n\n"


def reply(messages: list[dict[str, Any]], status: int = 200) -> HttpReply:
    body = "".join(event(m) for m in messages)

    def stream() -> Iterator[str]:
        yield body

    return HttpReply(status, headers=dict(HEADERS), stream=stream())
