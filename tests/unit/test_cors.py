"""Browser hosts on an allowed origin can call the API and read the MCP headers (CORS);
pages from other origins cannot (issue 20, item 6)."""

from __future__ import annotations

from starlette.testclient import TestClient

from taskgate.http_app import create_app
from taskgate.protocol.wire.transport_security import TransportSecurity
from tests.fakes import World
from tests.mcp_client import envelope, headers_for

CALL = {"name": "slow_compute", "arguments": {"seconds": 0}}

PAGE = "https://inspector.example.com"


def _client(world: World) -> TestClient:
    app = create_app(
        lambda: world.server,
        anonymous_owner="anonymous",
        max_body_bytes=1_000_000,
        security=TransportSecurity(("localhost",), (PAGE,)),
    )
    return TestClient(app, base_url="http://localhost")


def test_a_preflight_from_an_allowed_origin_is_answered() -> None:
    http = _client(World())
    reply = http.options(
        "/mcp",
        headers={
            "Origin": PAGE,
            "Access-Control-Request-Method": "POST",
            "Access-Control-Request-Headers": "authorization, content-type, mcp-protocol-version, mcp-param-region",
        },
    )
    assert reply.status_code == 204
    assert reply.headers["access-control-allow-origin"] == PAGE
    assert "POST" in reply.headers["access-control-allow-methods"]
    assert "mcp-param-region" in reply.headers["access-control-allow-headers"]
    assert "authorization" in reply.headers["access-control-allow-headers"]


def test_the_mcp_headers_are_readable_by_an_allowed_page() -> None:
    http = _client(World())
    body = envelope("tools/call", CALL, 1)
    reply = http.post("/mcp", json=body, headers={**headers_for("tools/call", CALL), "Origin": PAGE})
    assert reply.status_code == 200, reply.text
    assert reply.headers["access-control-allow-origin"] == PAGE
    exposed = {h.strip().lower() for h in reply.headers["access-control-expose-headers"].split(",")}
    assert exposed == {"mcp-session-id", "mcp-protocol-version", "www-authenticate"}


def test_other_origins_get_no_cors_and_are_refused() -> None:
    http = _client(World())
    preflight = http.options(
        "/mcp", headers={"Origin": "https://evil.example", "Access-Control-Request-Method": "POST"}
    )
    assert preflight.status_code >= 400 and "access-control-allow-origin" not in preflight.headers
    body = envelope("tools/call", CALL, 1)
    reply = http.post(
        "/mcp", json=body, headers={**headers_for("tools/call", CALL), "Origin": "https://evil.example"}
    )
    assert reply.status_code == 403 and "access-control-allow-origin" not in reply.headers
