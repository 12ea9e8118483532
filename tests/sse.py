"""A 2025-11-25 client's side of a response that may come over SSE: POST, answer
any elicitation it carries, resume with Last-Event-ID until the response arrives."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tests.mcp_client import Legacy, parse_sse

# The client's answer to a server request: the same for every one, or chosen per request.
Answerer = dict[str, Any] | Callable[[dict[str, Any]], dict[str, Any]]


def result_over_streams(
    client: Legacy, task_id: str, answer: Answerer | None = None, limit: int = 40
) -> tuple[dict[str, Any], list[list[dict[str, Any]]]]:
    """tasks/result as a client does it: POST, then GET with Last-Event-ID until the response."""
    return over_streams(client, "tasks/result", {"taskId": task_id}, answer, limit)


def over_streams(
    client: Legacy,
    method: str,
    params: dict[str, Any],
    answer: Answerer | None = None,
    limit: int = 40,
) -> tuple[dict[str, Any], list[list[dict[str, Any]]]]:
    """A request whose response may come over SSE: POST, answer any server request
    (elicitation, sampling, roots), then GET with Last-Event-ID until the response arrives."""
    resp = client.post(method, params)
    streams: list[list[dict[str, Any]]] = []
    last: str | None = None
    for _ in range(limit):
        if resp.headers["content-type"].startswith("application/json"):
            return resp.json(), streams
        assert resp.headers["content-type"].startswith("text/event-stream")
        events = parse_sse(resp.text)
        streams.append(events)
        for event in events:
            message = event["data"]
            if message and "method" in message and "id" in message and answer is not None:
                result = answer(message) if callable(answer) else answer
                assert client.answer(message["id"], result) == 202
            if message and ("result" in message or "error" in message):
                return message, streams
        # A stream may carry only unlogged notifications: resume from the last id seen anywhere.
        last = ([e["id"] for e in events if e["id"]] or [last])[-1]
        assert last is not None
        resp = client.resume(last)
    raise AssertionError("no response after many streams")
