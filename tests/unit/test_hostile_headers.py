"""Hostile header bytes get HTTP 400 with a JSON-RPC error, never a 500, and change
nothing (issue 12, item 5): a byte that is not UTF-8 in any header (it crashed the
dev auth layer), a ``Last-Event-ID`` ending in a Unicode superscript digit (it
crashed the resume code), a repeated ``Mcp-Name`` or ``Mcp-Method`` (only the first
was checked, while a proxy may route on another).

Requests go through ``tests.asgi.raw_request``: Starlette's TestClient rewrites
header bytes as UTF-8 and could not send these. The fuzz's version, against moto:
tests/integration/test_fuzz.py (``test_hostile_header_bytes_and_repeats``).
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from taskgate.domain.model import NewTask
from taskgate.local.dev_auth import DevAuthMiddleware
from tests.asgi import RawResponse, raw_request
from tests.fakes import World
from tests.mcp_client import envelope, headers_for

PING = json.dumps(envelope("ping", {}, 1)).encode()
CALL_PARAMS = {"name": "slow_compute", "arguments": {"seconds": 0}}
CALL = json.dumps(envelope("tools/call", CALL_PARAMS, 1)).encode()


def _headers(
    extra: list[tuple[bytes, bytes]], method: str = "ping", params: Any = None
) -> list[tuple[bytes, bytes]]:
    base = [(k.encode(), v.encode()) for k, v in headers_for(method, params or {}).items()]
    names = {name for name, _ in extra}
    return [h for h in base if h[0] not in names] + extra


@pytest.fixture(params=["dev-auth", "bare"])
def app(request: pytest.FixtureRequest, world: World) -> Any:
    served = world.root.app()
    return DevAuthMiddleware(served, {"alice-token": "alice"}) if request.param == "dev-auth" else served


def _rejected(resp: RawResponse, code: int) -> dict[str, Any]:
    assert resp.status_code == 400, (resp.status_code, resp.text)
    body: dict[str, Any] = json.loads(resp.content)
    assert body["jsonrpc"] == "2.0" and body["error"]["code"] == code, body
    return body


@pytest.mark.parametrize(
    "name", [b"user-agent", b"authorization", b"mcp-session-id", b"accept", b"x-anything", b"last-event-id"]
)
@pytest.mark.parametrize("value", [b"\xff", b"Bearer \xc3(", b"caf\xe9"])
def test_a_header_that_is_not_utf8_is_a_400(app: Any, world: World, name: bytes, value: bytes) -> None:
    for verb, body in (("POST", CALL), ("GET", b""), ("DELETE", b"")):
        resp = raw_request(app, verb, _headers([(name, value)], "tools/call", CALL_PARAMS), body)
        assert "not valid UTF-8" in _rejected(resp, -32600)["error"]["message"]
    assert world.store.records == {}


def _stream_id(app: Any, world: World) -> str:
    task_id = world.tasks.create(
        NewTask(owner="anonymous", tool="slow_compute", arguments={"seconds": 0})
    ).task_id
    world.workflow.runnable.clear()
    body = json.dumps({"jsonrpc": "2.0", "id": 3, "method": "tasks/result", "params": {"taskId": task_id}})
    resp = raw_request(
        app,
        "POST",
        [(b"content-type", b"application/json"), (b"accept", b"text/event-stream")],
        body.encode(),
    )
    line = next(line for line in resp.text.splitlines() if line.startswith("id: "))
    return line[4:].split(":")[0]


@pytest.mark.parametrize("suffix", ["1²", "²", "1¹", "٣", "\U0001d7d9"])
def test_a_last_event_id_with_a_unicode_digit_is_a_400(app: Any, world: World, suffix: str) -> None:
    stream = _stream_id(app, world)
    resp = raw_request(app, "GET", [(b"last-event-id", f"{stream}:{suffix}".encode())])
    assert "outside visible ASCII" in _rejected(resp, -32600)["error"]["message"]
    # Plain ASCII that names no event this server issued is still an unknown stream.
    assert raw_request(app, "GET", [(b"last-event-id", f"{stream}:x".encode())]).status_code == 404


def test_the_resume_code_never_takes_a_unicode_digit_for_a_position(world: World) -> None:
    """Below the edge too: ``str.isdigit`` says yes to '²', ``int`` then raises."""
    record = world.tasks.create(NewTask(owner="anonymous", tool="slow_compute", arguments={"seconds": 0}))
    world.workflow.runnable.clear()
    events = "".join(world.streams.open("anonymous", record, 1))
    stream = events.split("id: ", 1)[1].split(":")[0]
    for suffix in ("1²", "²", "٣"):
        assert world.streams.resume("anonymous", f"{stream}:{suffix}") is None
    assert world.streams.resume("anonymous", f"{stream}:0") is not None


@pytest.mark.parametrize(
    ("name", "second"),
    [
        (b"mcp-name", b"failing_job"),
        (b"mcp-method", b"tasks/cancel"),
        (b"mcp-name", b"slow_compute"),  # even the same value twice: one header, one value
        (b"mcp-param-region", b"us-east-1"),
    ],
)
def test_a_repeated_routing_header_is_a_400(app: Any, world: World, name: bytes, second: bytes) -> None:
    headers = _headers([], "tools/call", CALL_PARAMS)
    first = dict(headers).get(name, b"eu-west-1")
    headers = [h for h in headers if h[0] != name] + [(name, first), (name, second)]
    body = _rejected(raw_request(app, "POST", headers, CALL), -32020)
    assert "appears more than once" in body["error"]["message"]
    assert world.store.records == {}


@pytest.mark.parametrize(
    "name", [b"mcp-session-id", b"mcp-protocol-version", b"last-event-id", b"authorization"]
)
def test_other_repeated_mcp_headers_are_a_400(app: Any, world: World, name: bytes) -> None:
    headers = _headers([(name, b"a"), (name, b"b")], "tools/call", CALL_PARAMS)
    _rejected(raw_request(app, "POST", headers, CALL), -32600)
    assert world.store.records == {}


def test_routing_headers_carry_non_ascii_only_base64_encoded(app: Any, world: World) -> None:
    raw = _headers([(b"mcp-name", "slöw_compute".encode())], "tools/call", CALL_PARAMS)
    assert (
        "outside visible ASCII" in _rejected(raw_request(app, "POST", raw, CALL), -32020)["error"]["message"]
    )
    # SEP-2243: an encoded Mcp-Name is decoded before it is compared with the body.
    encoded = _headers([(b"mcp-name", b"=?base64?c2xvd19jb21wdXRl?=")], "tools/call", CALL_PARAMS)
    resp = raw_request(app, "POST", encoded, CALL)
    assert resp.status_code == 200 and json.loads(resp.content)["result"]["resultType"] == "task"


def test_a_name_with_a_lone_surrogate_is_refused_clearly_and_stores_nothing(app: Any, world: World) -> None:
    """JSON can spell a lone surrogate (``"\\ud800"``), which has no UTF-8: the client helpers
    send it encoded as it is (they crashed building the header, found by the fuzz), and the
    server refuses the body with a JSON-RPC error, never a 500."""
    params = {"name": "\ud800", "arguments": {}}
    headers = _headers([], "tools/call", params)
    assert dict(headers)[b"mcp-name"] == b"=?base64?7aCA?="
    body = json.dumps(envelope("tools/call", params, 1)).encode()
    resp = raw_request(app, "POST", headers, body)
    assert "unpaired UTF-16 surrogate" in _rejected(resp, -32600)["error"]["message"]
    assert world.store.records == {}
