"""DNS-rebinding protection and the request Content-Type: refused before anything runs."""

from __future__ import annotations

import json
from typing import Any

import pytest
from starlette.testclient import TestClient

from taskgate.config import LOCAL_HOSTS, LOCAL_ORIGINS, Settings
from taskgate.protocol.wire.transport_security import TransportSecurity
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


# -- issue 21 (N3): strict parsing. A lenient split read each of these as localhost, while a
# browser, a proxy or the socket's real peer reads evil.example.

RED_TEAM_HOSTS = [
    "localhost:evil.example",  # a "port" that is a name
    "localhost:3000@evil.example",  # userinfo: the host is evil.example
    "[::1]evil.example",  # text after an IPv6 literal
    "localhost:",  # an empty port
    "localhost:99999",  # past 65535
    "localhost:+80",
    "localhost.",  # a trailing dot: another name for DNS
    "[fe80::1%25eth0]",  # an IPv6 zone id
    "[v1.localhost]",  # IPvFuture
    "[::1",
    "localhost,evil.example",  # two values joined (API Gateway joins repeated headers so)
    "localhost evil.example",
    "localhost/evil",
    "loc%61lhost",
    "127.000.0.1",  # a browser reads these as 127.0.0.1; so might a resolver
    "127.1",
    "0x7f.0.0.1",
    "",
]
RED_TEAM_ORIGINS = [
    "http://localhost:1@evil.example",  # userinfo: the page is evil.example's
    "http://user@localhost",
    "http://localhost:evil.example",
    "http://[::1]evil.example",
    "http://localhost/",  # a serialized origin has no path
    "http://localhost/path",
    "http://localhost?x",
    "http://localhost#x",
    "http://localhost, http://evil.example",  # a list
    "http://localhost http://evil.example",
    "ftp://localhost",
    "http:localhost",
    "localhost",
    "null",
]


@pytest.mark.parametrize("host", RED_TEAM_HOSTS)
def test_a_malformed_host_is_refused(host: str) -> None:
    local = TransportSecurity(LOCAL_HOSTS, LOCAL_ORIGINS)
    assert local.refusal({"host": host}) == "Forbidden: Host header not allowed"
    # Even where every host is allowed: "*" allows any host, not any text.
    assert TransportSecurity(("*",), ("*",)).refusal({"host": host}) is not None


@pytest.mark.parametrize("origin", RED_TEAM_ORIGINS)
def test_a_malformed_origin_is_refused(origin: str) -> None:
    local = TransportSecurity(LOCAL_HOSTS, LOCAL_ORIGINS)
    assert local.refusal({"host": "localhost", "origin": origin}) == "Forbidden: Origin not allowed"


@pytest.mark.parametrize(
    ("host", "origin"),
    [
        ("localhost", None),
        ("localhost:3000", "http://localhost:3000"),
        ("LOCALHOST:3000", "HTTP://LocalHost:6274"),  # names and schemes are case-insensitive
        ("127.0.0.1", "http://127.0.0.1"),
        ("127.0.0.1:65535", "https://127.0.0.1:443"),
        ("[::1]", "http://[::1]"),
        ("[::1]:3000", "http://[::1]:3000"),
        ("[0:0:0:0:0:0:0:1]:8080", "http://[0::1]:6274"),  # another spelling of ::1
        (" localhost:3000 ", " http://localhost:3000 "),  # whitespace around a field value
        ("localhost:03000", None),  # a port may have leading zeros
    ],
)
def test_legal_local_forms_still_pass(host: str, origin: str | None) -> None:
    local = TransportSecurity(LOCAL_HOSTS, LOCAL_ORIGINS)
    headers = {"host": host} | ({"origin": origin} if origin else {})
    assert local.refusal(headers) is None


def test_legal_deployed_and_configured_forms_still_pass() -> None:
    domain = "abc123.execute-api.us-east-1.amazonaws.com"
    local = TransportSecurity(LOCAL_HOSTS, LOCAL_ORIGINS)
    for host in (domain, f"{domain}:443", domain.upper()):
        assert local.refusal({"host": host, "origin": f"https://{domain}"}, own_domain=domain) is None
    custom = TransportSecurity(
        ("mcp.example.com", "dev.example.com:8443", "my_host.internal", "10.0.0.7", "[2001:db8::1]:8443"),
        ("https://app.example.com", "http://localhost:6274", "https://[2001:db8::2]"),
    )
    for host in (
        "mcp.example.com",
        "mcp.example.com:443",
        "dev.example.com:8443",
        "my_host.internal",
        "10.0.0.7:80",
        "[2001:db8::1]:8443",
        "[2001:DB8:0::1]:8443",
    ):
        assert custom.refusal({"host": host}) is None, host
    for origin in ("https://app.example.com", "https://app.example.com:443", "http://localhost:6274"):
        assert custom.refusal({"host": "mcp.example.com", "origin": origin}) is None, origin
    assert custom.refusal({"host": "mcp.example.com", "origin": "https://[2001:db8::2]:8443"}) is None
    assert custom.refusal({"host": "dev.example.com"}) is not None  # the entry names its port
    assert custom.refusal({"host": "[2001:db8::1]:9443"}) is not None
    assert custom.refusal({"host": "mcp.example.com", "origin": "http://localhost:6275"}) is not None


def _raw(headers: list[tuple[str, str]]) -> list[tuple[bytes, bytes]]:
    base = [(k.encode(), v.encode()) for k, v in headers_for("tools/call", CALL).items()]
    return base + [(k.encode(), v.encode()) for k, v in headers]


@pytest.mark.parametrize(
    "extra",
    [
        [("origin", "http://localhost:3000"), ("origin", "https://evil.example")],  # allowed, then evil
        [("origin", "https://evil.example"), ("origin", "http://localhost:3000")],
        [("origin", "http://localhost"), ("origin", "http://localhost")],
        [("host", "localhost"), ("host", "evil.example")],
    ],
)
def test_a_repeated_host_or_origin_is_refused(world: World, extra: list[tuple[str, str]]) -> None:
    from taskgate.http_app import create_app
    from tests.asgi import raw_request

    app = create_app(lambda: world.server, anonymous_owner="anonymous", max_body_bytes=1_048_576)
    body = json.dumps(envelope("tools/call", CALL, 1)).encode()
    hosts = [] if any(name == "host" for name, _ in extra) else [("host", "localhost:3000")]
    resp = raw_request(app, "POST", _raw(hosts + extra), body)
    assert resp.status_code == 403, resp.text
    error = json.loads(resp.content)["error"]
    assert error["code"] == -32600 and "more than one" in error["message"]
    assert world.store.records == {} and world.workflow.started == 0


@pytest.mark.parametrize(
    "headers",
    [{"host": host} for host in RED_TEAM_HOSTS[:3]]
    + [{"host": "localhost:3000", "origin": origin} for origin in RED_TEAM_ORIGINS[:4]],
)
def test_the_red_teams_values_are_403_over_http(
    http: TestClient, world: World, headers: dict[str, str]
) -> None:
    resp = _post(http, **headers)
    assert resp.status_code == 403, resp.text
    assert world.store.records == {} and world.workflow.started == 0


def test_settings_refuse_an_entry_the_parser_cannot_read() -> None:
    from taskgate.config import ConfigurationError

    base = {"TASK_TABLE": "t", "STATE_MACHINE_ARN": "arn"}
    for name, value in (
        ("ALLOWED_HOSTS", "localhost,user@mcp.example.com"),
        ("ALLOWED_HOSTS", "mcp.example.com:https"),
        ("ALLOWED_ORIGINS", "https://app.example.com/"),
        ("ALLOWED_ORIGINS", "app.example.com"),
    ):
        with pytest.raises(ConfigurationError, match=name):
            Settings.from_env({**base, name: value})
