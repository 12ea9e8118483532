"""What a client sees for malformed requests: JSON-RPC errors, never a trace, nothing stored."""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest
from starlette.testclient import TestClient

from tests.fakes import World
from tests.mcp_client import envelope, headers_for


def _post(http: TestClient, body: Any, headers: dict[str, str] | None = None) -> tuple[int, Any]:
    raw = body if isinstance(body, (bytes, str)) else json.dumps(body)
    resp = http.post("/mcp", content=raw, headers=headers or headers_for("tools/list", {}))
    return resp.status_code, (resp.json() if resp.content else None)


@pytest.mark.parametrize(
    ("body", "code"),
    [
        (b"{not json", -32700),
        (b"\xff\xfe", -32700),
        ([], -32600),
        ([{"jsonrpc": "2.0", "id": 1, "method": "ping"}], -32600),
        ("just a string", -32600),
        ({"id": 1, "method": "ping"}, -32600),
        ({"jsonrpc": "1.0", "id": 1, "method": "ping"}, -32600),
        ({"jsonrpc": "2.0", "id": {"x": 1}, "method": "ping"}, -32600),
        ({"jsonrpc": "2.0", "id": True, "method": "ping"}, -32600),
        ({"jsonrpc": "2.0", "id": 1, "method": ""}, -32600),
        ({"jsonrpc": "2.0", "id": 1, "method": 7}, -32600),
        ({"jsonrpc": "2.0", "id": 1, "method": "ping", "params": [1, 2]}, -32600),
        ({"jsonrpc": "2.0", "id": 1}, -32600),
    ],
)
def test_malformed_messages_get_a_json_rpc_error(http: TestClient, body: Any, code: int) -> None:
    raw = body if isinstance(body, bytes) else json.dumps(body).encode()
    status, payload = _post(http, raw)
    assert status == 400
    assert payload["jsonrpc"] == "2.0"
    assert payload["error"]["code"] == code
    assert "Traceback" not in json.dumps(payload)


def test_error_echoes_the_request_id_when_it_has_one(http: TestClient) -> None:
    status, payload = _post(http, {"jsonrpc": "1.0", "id": 42, "method": "ping"})
    assert status == 400 and payload["id"] == 42


def test_notifications_and_client_responses_are_accepted_without_a_body(http: TestClient) -> None:
    assert _post(http, {"jsonrpc": "2.0", "method": "notifications/initialized"}) == (202, None)
    assert _post(http, {"jsonrpc": "2.0", "id": 9, "result": {}}) == (202, None)


def test_get_without_a_stream_to_resume_and_delete_without_a_session(http: TestClient) -> None:
    # No standalone server-push stream: GET only resumes a stream after Last-Event-ID.
    assert http.get("/mcp").status_code == 405
    assert http.get("/mcp", headers={"last-event-id": "nope:1"}).status_code == 404
    assert http.delete("/mcp").status_code == 400
    assert http.delete("/mcp", headers={"mcp-session-id": "never-issued"}).status_code == 404


def test_oversized_body_is_refused_before_parsing(http: TestClient, world: World) -> None:
    huge = json.dumps(envelope("tools/call", {"name": "greet", "arguments": {"name": "x" * 2_000_000}}, 1))
    status, payload = _post(http, huge.encode(), headers_for("tools/call", {"name": "greet"}))
    assert status == 413 and payload["error"]["code"] == -32600
    assert world.store.records == {}


def test_unknown_method_is_32601(http: TestClient) -> None:
    status, payload = _post(http, envelope("sampling/fancy", {}, 5), headers_for("sampling/fancy", {}))
    assert (status, payload["error"]["code"], payload["id"]) == (404, -32601, 5)


def _call(
    http: TestClient, headers: dict[str, str], arguments: dict[str, Any] | None = None, name: str = "greet"
) -> tuple[int, Any]:
    params = {"name": name, "arguments": arguments or {}}
    return _post(http, envelope("tools/call", params, 1), headers)


def test_routing_headers_must_match_the_body(http: TestClient, world: World) -> None:
    good = headers_for("tools/call", {"name": "greet"})
    assert _call(http, good)[0] == 200
    for bad in (
        {k: v for k, v in good.items() if k != "mcp-method"},
        {**good, "mcp-method": "tools/list"},
        {**good, "mcp-method": "TOOLS/CALL"},
        {k: v for k, v in good.items() if k != "mcp-name"},
        {**good, "mcp-name": "slow_compute"},
    ):
        status, payload = _call(http, bad)
        assert (status, payload["error"]["code"]) == (400, -32020), bad
    # Optional whitespace around a header value is not part of it (RFC 9110).
    assert _call(http, {**good, "mcp-name": "  greet "})[0] == 200
    assert world.store.records == {}


def test_tasks_methods_check_mcp_name_against_the_task_id(http: TestClient) -> None:
    headers = {**headers_for("tasks/get", {"taskId": "a"}), "mcp-name": "b"}
    status, payload = _post(http, envelope("tasks/get", {"taskId": "a"}, 1), headers)
    assert (status, payload["error"]["code"]) == (400, -32020)


def test_x_mcp_header_arguments_must_be_mirrored(http: TestClient) -> None:
    base = headers_for("tools/call", {"name": "echo_region"})
    args = {"region": "eu-west-1"}
    ok = _call(http, {**base, "mcp-param-region": "eu-west-1"}, args, "echo_region")
    assert ok[0] == 200 and ok[1]["result"]["content"][0]["text"] == "region=eu-west-1"
    encoded = "=?base64?" + base64.b64encode(b"eu-west-1").decode() + "?="
    assert _call(http, {**base, "mcp-param-region": encoded}, args, "echo_region")[0] == 200
    for value in (None, "us-east-1", "=?base64?!!!?="):
        headers = dict(base) if value is None else {**base, "mcp-param-region": value}
        status, payload = _call(http, headers, args, "echo_region")
        assert (status, payload["error"]["code"]) == (400, -32020), value
