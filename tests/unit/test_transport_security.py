"""DNS-rebinding protection and the request Content-Type: refused before anything runs."""

from __future__ import annotations

import json
from typing import Any

import pytest
from starlette.testclient import TestClient

from taskgate.config import LOCAL_HOSTS, LOCAL_ORIGINS, Settings
from taskgate.protocol.transport_security import TransportSecurity
from tests.fakes import World
from tests.mcp_client import envelope, headers_for

CALL = {"name": "slow_compute", "arguments": {"seconds": 0}}


def _post(http: TestClient, **headers: str) -> Any:
    body = envelope("tools/call", CALL, 1)
    return http.post("/mcp", json=body, headers={**headers_for("tools/call", CALL), **headers})


@pytest.mark.parametrize(
    "headers",
    [
        {"host": "evil.example.com"},
        {"host": "evil.example.com", "origin": "http://evil.example.com"},
        {"origin": "http://evil.example.com"},
        {"origin": "http://localhost.evil.example.com"},
        {"origin": "null"},
        {"host": "localhost.evil.example.com:80"},
        {"host": "127.0.0.1.nip.io"},
    ],
)
def test_a_foreign_host_or_origin_is_403_and_starts_nothing(
    http: TestClient, world: World, headers: dict[str, str]
) -> None:
    resp = _post(http, **headers)
    assert resp.status_code == 403
    body = resp.json()
    assert body["jsonrpc"] == "2.0" and "id" not in body and body["error"]["code"] == -32600
    assert "not allowed" in body["error"]["message"]
    # Nothing stored, nothing started.
    assert world.store.records == {} and world.workflow.started == 0


def test_get_and_delete_are_guarded_too(http: TestClient) -> None:
    assert http.get("/mcp", headers={"host": "evil.example.com"}).status_code == 403
    assert http.delete("/mcp", headers={"origin": "https://evil.example.com"}).status_code == 403


@pytest.mark.parametrize(
    "headers",
    [
        {},  # no Origin: any non-browser client
        {"host": "127.0.0.1:3931", "origin": "http://127.0.0.1:3931"},
        {"host": "localhost:8080", "origin": "http://localhost:6274"},  # the Inspector's page
        {"host": "[::1]:3000", "origin": "http://[::1]:3000"},
    ],
)
def test_localhost_is_served(http: TestClient, world: World, headers: dict[str, str]) -> None:
    resp = _post(http, **headers)
    assert resp.status_code == 200, resp.text
    assert resp.json()["result"]["resultType"] == "task"
    assert world.workflow.started == 1


@pytest.mark.parametrize("content_type", [None, "text/plain", "application/x-www-form-urlencoded", "json"])
def test_a_post_that_is_not_json_is_415(http: TestClient, world: World, content_type: str | None) -> None:
    headers = {k: v for k, v in headers_for("tools/call", CALL).items() if k != "content-type"}
    if content_type is not None:
        headers["content-type"] = content_type
    resp = http.post("/mcp", content=json.dumps(envelope("tools/call", CALL, 1)), headers=headers)
    assert resp.status_code == 415 and resp.json()["error"]["code"] == -32600
    assert world.store.records == {}


def test_json_with_a_charset_is_json(http: TestClient) -> None:
    assert _post(http, **{"content-type": "application/json; charset=utf-8"}).status_code == 200


def test_the_allow_lists() -> None:
    local = TransportSecurity(LOCAL_HOSTS, LOCAL_ORIGINS)
    assert local.refusal({"host": "localhost"}) is None
    assert local.refusal({}) is not None  # no Host at all
    domain = "abc123.execute-api.us-east-1.amazonaws.com"
    # Behind API Gateway the API's own domain is allowed, as Host and as an https Origin.
    assert local.refusal({"host": domain}) is not None
    assert local.refusal({"host": domain}, own_domain=domain) is None
    assert local.refusal({"host": domain, "origin": f"https://{domain}"}, own_domain=domain) is None
    assert local.refusal({"host": domain, "origin": f"http://{domain}"}, own_domain=domain) is not None
    assert (
        local.refusal({"host": domain, "origin": "https://evil.example.com"}, own_domain=domain) is not None
    )
    # Configured entries: exact ports, any port, or anything.
    custom = TransportSecurity(("mcp.example.com", "dev.example.com:8443"), ("https://app.example.com",))
    assert custom.refusal({"host": "mcp.example.com:443"}) is None
    assert custom.refusal({"host": "dev.example.com:8443"}) is None
    assert custom.refusal({"host": "dev.example.com:9999"}) is not None
    assert custom.refusal({"host": "mcp.example.com", "origin": "https://app.example.com"}) is None
    assert custom.refusal({"host": "mcp.example.com", "origin": "http://app.example.com"}) is not None
    anything = TransportSecurity(("*",), ("*",))
    assert anything.refusal({"host": "x", "origin": "https://y"}) is None


def test_settings_read_the_lists_from_the_environment() -> None:
    base = {"TASK_TABLE": "t", "STATE_MACHINE_ARN": "arn"}
    assert Settings.from_env(base).allowed_hosts == LOCAL_HOSTS
    s = Settings.from_env({**base, "ALLOWED_HOSTS": "mcp.example.com, localhost", "ALLOWED_ORIGINS": "*"})
    assert s.allowed_hosts == ("mcp.example.com", "localhost") and s.allowed_origins == ("*",)
