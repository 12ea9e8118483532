"""Tenant isolation over HTTP, through the same authorizer code path as API Gateway:
every task method, in both eras, for the owner, another caller and an anonymous one.

Run with -s to print the matrix.
"""

from __future__ import annotations

import json
from typing import Any

from starlette.testclient import TestClient

from tests.mcp_client import Legacy, Mcp, parse_sse

MATRIX: list[tuple[str, str, str, str]] = []


def _mcp(http: TestClient, token: str | None) -> Mcp:
    def post(body: Any, headers: dict[str, str]) -> tuple[int, Any]:
        if token:
            headers = {**headers, "authorization": f"Bearer {token}"}
        resp = http.post("/mcp", content=json.dumps(body), headers=headers)
        return resp.status_code, resp.json() if resp.content else None

    return Mcp(post)


def _outcome(body: dict[str, Any]) -> str:
    return "ok" if "result" in body else str(body["error"]["code"])


def test_isolation_matrix(http: TestClient) -> None:
    callers = {"owner": "alice-token", "other": "bob-token", "anonymous": None}
    alice = _mcp(http, "alice-token")
    new_task = alice.call("slow_compute", {"seconds": 30})["taskId"]
    parked = alice.call("confirm_delete", {"filename": "x"})["taskId"]
    alice.wait(parked, {"input_required"})
    legacy_alice = Legacy(http, token="alice-token")
    legacy_alice.initialize()
    legacy_task = legacy_alice.result(
        "tools/call", {"name": "slow_compute", "arguments": {"seconds": 30}, "task": {}}
    )["task"]["taskId"]

    # 2026-07-28 (the owner goes last for the mutating methods, so others meet a live task)
    for who in ("other", "anonymous", "owner"):
        client = _mcp(http, callers[who])
        for method, params in (
            ("tasks/get", {"taskId": new_task}),
            ("tasks/update", {"taskId": parked, "inputResponses": {"confirm_delete": {"action": "decline"}}}),
            ("tasks/cancel", {"taskId": new_task}),
        ):
            got = _outcome(client.request(method, params))
            MATRIX.append(("2026-07-28", method, who, got))
            assert got == ("ok" if who == "owner" else "-32602"), (method, who)
    assert alice.get(new_task)["status"] == "cancelled"
    assert alice.wait(parked)["result"]["content"][0]["text"] == "Kept x"

    # 2025-11-25
    for who in ("other", "anonymous", "owner"):
        client = Legacy(http, token=callers[who])
        client.initialize()
        for method in ("tasks/get", "tasks/result", "tasks/cancel"):
            resp = client.post(method, {"taskId": legacy_task})
            if resp.headers["content-type"].startswith("text/event-stream"):
                events = [e["data"] for e in parse_sse(resp.text) if e["data"]]
                got = "ok (stream)" if events or resp.status_code == 200 else str(resp.status_code)
            else:
                got = _outcome(resp.json())
            MATRIX.append(("2025-11-25", method, who, got))
            assert got.startswith("ok") if who == "owner" else got == "-32602", (method, who, got)
        listed = client.request("tasks/list")
        if who == "anonymous":
            got = _outcome(listed)
            assert got == "-32601"
        else:
            ids = [t["taskId"] for t in listed["result"]["tasks"]]
            got = "ok (own tasks)" if legacy_task in ids else "ok (sees none of alice's)"
            assert (legacy_task in ids) == (who == "owner")
            assert (new_task in ids) == (who == "owner")
        MATRIX.append(("2025-11-25", "tasks/list", who, got))
        # A session belongs to its caller too.
        if who != "owner":
            stolen = Legacy(http, token=callers[who])
            stolen.session_id = legacy_alice.session_id
            got = str(stolen.post("tools/list").status_code)
            MATRIX.append(("2025-11-25", "use alice's Mcp-Session-Id", who, got))
            assert got == "404"

    width = [max(len(r[i]) for r in MATRIX) for i in range(4)]
    print()
    for row in [("era", "method", "caller", "answer"), *MATRIX]:
        print(" | ".join(c.ljust(w) for c, w in zip(row, width, strict=True)))


def test_an_unknown_bearer_token_is_401(http: TestClient) -> None:
    resp = http.post(
        "/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "ping"}, headers={"authorization": "Bearer nope"}
    )
    assert resp.status_code == 401 and resp.json()["error"]["message"] == "Unauthorized"
