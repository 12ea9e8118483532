"""One request id, one call (red team round three, L3). A 2025-11-25 call without a session
is known by its caller and its request id only, so two different calls sent with the same id
shared one task: the second caller was answered with the first call's result. The claim now
keeps the tool and a digest of the arguments; a retry of the same call still finds its task,
another call with that id is refused with -32600, and no session is required."""

from __future__ import annotations

from typing import Any

from starlette.testclient import TestClient

from taskgate.codes import INVALID_REQUEST
from tests.fakes import World
from tests.mcp_client import parse_sse

HEADERS = {
    "content-type": "application/json",
    "accept": "application/json, text/event-stream",
    "mcp-protocol-version": "2025-11-25",
}


def _call(http: TestClient, request_id: Any, tool: str, arguments: dict[str, Any]) -> list[dict[str, Any]]:
    """A sessionless 2025 tools/call: what came back (its JSON, or its stream's messages)."""
    body = {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "tools/call",
        "params": {"name": tool, "arguments": arguments},
    }
    reply = http.post("/mcp", json=body, headers=HEADERS)
    if reply.headers["content-type"].startswith("application/json"):
        return [reply.json()]
    return [e["data"] for e in parse_sse(reply.text) if e["data"]]


def test_a_sessionless_2025_request_id_names_one_call(http: TestClient, world: World) -> None:
    # long_job runs as a hidden task (the red team used slow_compute, 11 s and 12 s, deployed).
    first = _call(http, "same", "long_job", {"minutes": 0.5, "steps": 11})
    assert not any("error" in m for m in first), first
    assert len(world.store.records) == 1
    other = _call(http, "same", "long_job", {"minutes": 0.5, "steps": 12})
    errors = [m["error"] for m in other if "error" in m]
    assert errors and errors[0]["code"] == INVALID_REQUEST and "request id in use" in errors[0]["message"], (
        other
    )
    assert len(world.store.records) == 1  # nothing started for it
    other_tool = _call(http, "same", "long_forecast", {"city": "Oslo"})
    assert [m["error"]["code"] for m in other_tool if "error" in m] == [INVALID_REQUEST]
    # The same call again (a retry after a dropped connection) still finds its task.
    again = _call(http, "same", "long_job", {"minutes": 0.5, "steps": 11})
    assert not any("error" in m for m in again) and len(world.store.records) == 1
    # Arguments in another order are the same arguments.
    _call(http, "pair", "long_job", {"minutes": 0.5, "steps": 3})
    same = _call(http, "pair", "long_job", {"steps": 3, "minutes": 0.5})
    assert not any("error" in m for m in same) and len(world.store.records) == 2
