"""The tests' MCP clients: the CLI's ``Client2026``/``Client2025`` (taskgate_cli.protocol)
over test transports, plus the conveniences tests want (raw replies, polling).

Envelopes, headers and SSE parsing all come from the CLI package; nothing here
builds a request by hand.
"""

from __future__ import annotations

import itertools
import json
import time
from collections.abc import Callable, Iterable
from typing import Any

from taskgate_cli import protocol
from taskgate_cli.protocol import PROTOCOL_2026, TASKS_EXT, Client2025, Client2026
from taskgate_cli.transport import Reply, reply_of
from taskgate_cli.transport import parse_sse as _parse_sse

PROTOCOL = PROTOCOL_2026
TERMINAL = set(protocol.TERMINAL)
CLIENT_INFO = {"name": "taskgate-tests", "version": "0"}

__all__ = [
    "PROTOCOL",
    "TASKS_EXT",
    "TERMINAL",
    "Legacy",
    "Mcp",
    "PostTransport",
    "TestClientTransport",
    "envelope",
    "headers_for",
    "meta",
    "parse_sse",
]

Post = Callable[[Any, dict[str, str]], tuple[int, Any]]


# --- transports ---------------------------------------------------------------------------
class PostTransport:
    """``post(body, headers) -> (status, json)`` (a TestClient POST, or the server's
    ``handle`` called in process) as a CLI transport."""

    def __init__(self, post: Post) -> None:
        self.post = post

    def send(
        self, method: str, headers: dict[str, str], body: Any = None, *, timeout: float | None = None
    ) -> Reply:
        status, parsed = self.post(body, headers)
        return Reply(status, {}, parsed)


class TestClientTransport:
    """A Starlette ``TestClient`` as a CLI transport (``headers``: sent with every request)."""

    __test__ = False  # not a test class, whatever its name says

    def __init__(self, http: Any, headers: dict[str, str] | None = None, path: str = "/mcp") -> None:
        self.http = http
        self.headers = headers or {}
        self.path = path

    def send(
        self, method: str, headers: dict[str, str], body: Any = None, *, timeout: float | None = None
    ) -> Reply:
        content = None if body is None else json.dumps(body)
        resp = self.http.request(method, self.path, content=content, headers={**self.headers, **headers})
        return reply_of(resp.status_code, dict(resp.headers), resp.content, self.path)


# --- 2026-07-28 ---------------------------------------------------------------------------
def meta(tasks: bool = True) -> dict[str, Any]:
    """The tests' ``_meta``: the tasks extension (unless ``tasks=False``) and elicitation
    (tools that ask are answered through it; the server asks nothing undeclared)."""
    return protocol.meta_2026(tasks=tasks, elicitation=True, client_info=CLIENT_INFO)


def envelope(method: str, params: dict[str, Any], msg_id: int, tasks: bool = True) -> dict[str, Any]:
    return protocol.envelope(method, params, msg_id, meta(tasks))


def headers_for(method: str, params: dict[str, Any]) -> dict[str, str]:
    return protocol.headers_2026(method, params)


class Mcp:
    """``post(body, headers) -> (status, json)`` is all it needs from the transport."""

    def __init__(self, post: Post) -> None:
        self._post = post
        self.client = Client2026(PostTransport(post), meta=meta())

    def raw(self, body: Any, headers: dict[str, str]) -> tuple[int, Any]:
        return self._post(body, headers)

    def request(
        self, method: str, params: dict[str, Any] | None = None, *, tasks: bool = True
    ) -> dict[str, Any]:
        """The whole JSON-RPC response (errors too), with the HTTP status as ``_http_status``."""
        status, body = self.client.send(method, params or {}, meta=meta(tasks))
        body["_http_status"] = status
        return body  # type: ignore[no-any-return]

    def result(
        self, method: str, params: dict[str, Any] | None = None, *, tasks: bool = True
    ) -> dict[str, Any]:
        body = self.request(method, params, tasks=tasks)
        assert "result" in body, f"{method} failed: {body}"
        return body["result"]  # type: ignore[no-any-return]

    def call(
        self, tool: str, arguments: dict[str, Any] | None = None, *, tasks: bool = True
    ) -> dict[str, Any]:
        return self.result("tools/call", {"name": tool, "arguments": arguments or {}}, tasks=tasks)

    def get(self, task_id: str) -> dict[str, Any]:
        return self.result("tasks/get", {"taskId": task_id})

    def wait(self, task_id: str, statuses: Iterable[str] = TERMINAL, timeout: float = 10.0) -> dict[str, Any]:
        wanted = set(statuses)
        deadline = time.monotonic() + timeout
        while True:
            task = self.get(task_id)
            if task["status"] in wanted:
                return task
            if time.monotonic() > deadline:
                raise AssertionError(f"task {task_id} still {task['status']} after {timeout}s: {task}")
            time.sleep(0.05)


# --- 2025-11-25 ---------------------------------------------------------------------------
def parse_sse(text: str) -> list[dict[str, Any]]:
    """Events of an SSE body: each {"id": ..., "retry": ..., "data": the JSON-RPC message or None}."""
    return [{"id": e.id, "retry": e.retry_ms, "data": e.message()} for e in _parse_sse(text)]


class Legacy:
    """A 2025-11-25 session over a Starlette TestClient: ``initialize`` through the CLI's
    ``Client2025``; ``post``/``resume`` return the raw responses for tests to inspect."""

    def __init__(self, http: Any, token: str | None = None) -> None:
        self.http = http
        self.token = token
        auth = {"authorization": f"Bearer {token}"} if token else {}
        self.client = Client2025(
            TestClientTransport(http, auth),
            capabilities={"tasks": {}, "elicitation": {}},
            client_info=CLIENT_INFO,
        )
        self._ids = itertools.count(1)  # the raw posts' own ids: tests expect 1, 2, … after initialize

    @property
    def session_id(self) -> str | None:
        return self.client.session_id

    @session_id.setter
    def session_id(self, value: str | None) -> None:
        self.client.session_id = value

    def headers(self, **extra: str) -> dict[str, str]:
        auth = {"authorization": f"Bearer {self.token}"} if self.token else {}
        return self.client.headers(**auth, **extra)

    def initialize(self) -> dict[str, Any]:
        self.client.open()
        assert self.client.initialized is not None
        return self.client.initialized

    def post(self, method: str, params: dict[str, Any] | None = None, **headers: str) -> Any:
        return self.http.post(
            "/mcp",
            json=protocol.rpc_request(method, params or {}, next(self._ids)),
            headers=self.headers(**headers),
        )

    def request(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        resp = self.post(method, params)
        assert resp.headers["content-type"].startswith("application/json"), resp.text
        return resp.json()  # type: ignore[no-any-return]

    def result(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        body = self.request(method, params)
        assert "result" in body, body
        return body["result"]  # type: ignore[no-any-return]

    def resume(self, last_event_id: str) -> Any:
        return self.http.get("/mcp", headers=self.headers(**{"last-event-id": last_event_id}))

    def answer(self, request_id: str, result: dict[str, Any]) -> int:
        message = protocol.rpc_response(request_id, result)
        return int(self.http.post("/mcp", json=message, headers=self.headers()).status_code)
