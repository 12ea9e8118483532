"""A small raw 2026-07-28 client for tests: builds envelopes, headers and polls."""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable, Iterable
from typing import Any

PROTOCOL = "2026-07-28"
TASKS_EXT = "io.modelcontextprotocol/tasks"
NAME_FIELD = {"tools/call": "name", "tasks/get": "taskId", "tasks/update": "taskId", "tasks/cancel": "taskId"}
TERMINAL = {"completed", "failed", "cancelled"}


def meta(tasks: bool = True) -> dict[str, Any]:
    return {
        "io.modelcontextprotocol/protocolVersion": PROTOCOL,
        "io.modelcontextprotocol/clientCapabilities": {"extensions": {TASKS_EXT: {}}} if tasks else {},
        "io.modelcontextprotocol/clientInfo": {"name": "taskgate-tests", "version": "0"},
    }


def envelope(method: str, params: dict[str, Any], msg_id: int, tasks: bool = True) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": msg_id, "method": method, "params": {**params, "_meta": meta(tasks)}}


def headers_for(method: str, params: dict[str, Any]) -> dict[str, str]:
    headers = {
        "content-type": "application/json",
        "accept": "application/json, text/event-stream",
        "mcp-protocol-version": PROTOCOL,
        "mcp-method": method,
    }
    field = NAME_FIELD.get(method)
    if field and isinstance(params.get(field), str):
        headers["mcp-name"] = params[field]
    return headers


class Mcp:
    """``post(body, headers) -> (status, json)`` is all it needs from the transport."""

    def __init__(self, post: Callable[[dict[str, Any], dict[str, str]], tuple[int, Any]]) -> None:
        self._post = post
        self._ids = itertools.count(1)

    def raw(self, body: Any, headers: dict[str, str]) -> tuple[int, Any]:
        return self._post(body, headers)

    def request(
        self, method: str, params: dict[str, Any] | None = None, *, tasks: bool = True
    ) -> dict[str, Any]:
        params = params or {}
        status, body = self._post(
            envelope(method, params, next(self._ids), tasks), headers_for(method, params)
        )
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


def parse_sse(text: str) -> list[dict[str, Any]]:
    """Events of an SSE body: each {"id": ..., "retry": ..., "data": parsed JSON or None}."""
    import json

    events = []
    for block in text.replace("\r\n", "\n").split("\n\n"):
        if not block.strip():
            continue
        event: dict[str, Any] = {"id": None, "retry": None, "data": None}
        data_lines = []
        for line in block.split("\n"):
            name, _, value = line.partition(":")
            value = value[1:] if value.startswith(" ") else value
            if name == "id":
                event["id"] = value
            elif name == "retry":
                event["retry"] = int(value)
            elif name == "data":
                data_lines.append(value)
        raw = "\n".join(data_lines)
        event["data"] = json.loads(raw) if raw.strip() else None
        events.append(event)
    return events


class Legacy:
    """A 2025-11-25 client over a Starlette TestClient: initialize, session header, SSE."""

    def __init__(self, http: Any, token: str | None = None) -> None:
        self.http = http
        self.token = token
        self.session_id: str | None = None
        self._ids = itertools.count(1)

    def headers(self, **extra: str) -> dict[str, str]:
        h = {"content-type": "application/json", "accept": "application/json, text/event-stream"}
        if self.session_id:
            h["mcp-session-id"] = self.session_id
            h["mcp-protocol-version"] = "2025-11-25"
        if self.token:
            h["authorization"] = f"Bearer {self.token}"
        h.update(extra)
        return h

    def initialize(self) -> dict[str, Any]:
        resp = self.http.post(
            "/mcp",
            json={
                "jsonrpc": "2.0",
                "id": 0,
                "method": "initialize",
                "params": {
                    "protocolVersion": "2025-11-25",
                    "capabilities": {"tasks": {}},
                    "clientInfo": {"name": "tests", "version": "0"},
                },
            },
            headers=self.headers(),
        )
        assert resp.status_code == 200, resp.text
        self.session_id = resp.headers["mcp-session-id"]
        return resp.json()["result"]  # type: ignore[no-any-return]

    def post(self, method: str, params: dict[str, Any] | None = None, **headers: str) -> Any:
        body = {"jsonrpc": "2.0", "id": next(self._ids), "method": method, "params": params or {}}
        return self.http.post("/mcp", json=body, headers=self.headers(**headers))

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
        resp = self.http.post(
            "/mcp", json={"jsonrpc": "2.0", "id": request_id, "result": result}, headers=self.headers()
        )
        return int(resp.status_code)
