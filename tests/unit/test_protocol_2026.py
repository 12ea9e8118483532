"""The 2026-07-28 tasks extension as a client sees it, on the fakes (the moto and
real-state-machine runs of the same flows are in tests/integration/test_engine.py)."""

from __future__ import annotations

import re

from starlette.testclient import TestClient

from tests.fakes import World
from tests.mcp_client import TASKS_EXT, Mcp, headers_for

ISO = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$")


def test_discover_advertises_the_tasks_extension(mcp: Mcp) -> None:
    result = mcp.result("server/discover")
    assert result["resultType"] == "complete"
    assert result["supportedVersions"] == ["2026-07-28"]
    assert result["capabilities"]["extensions"] == {TASKS_EXT: {}}
    assert "tasks" not in result["capabilities"]
    assert result["_meta"]["io.modelcontextprotocol/serverInfo"]["name"] == "taskgate"


def test_tools_list_describes_schemas_and_task_support(mcp: Mcp) -> None:
    tools = {t["name"]: t for t in mcp.result("tools/list")["tools"]}
    for name in (
        "greet",
        "slow_compute",
        "failing_job",
        "protocol_error_job",
        "confirm_delete",
        "multi_input",
        "test_tool_with_task",
        "orders_report",
        "archive_orders",
    ):
        assert name in tools
    assert tools["failing_job"]["execution"] == {"taskSupport": "required"}
    assert tools["slow_compute"]["execution"] == {"taskSupport": "optional"}
    assert tools["greet"]["execution"] == {"taskSupport": "forbidden"}
    schema = tools["slow_compute"]["inputSchema"]
    assert schema["type"] == "object"
    assert set(schema["properties"]) == {"seconds", "label"}


def test_plain_tool_call_returns_a_complete_result(mcp: Mcp) -> None:
    result = mcp.call("greet", {"name": "Ada"})
    assert result == {
        "resultType": "complete",
        "content": [{"type": "text", "text": "Hello, Ada!"}],
        "isError": False,
    }


def test_task_tool_returns_a_flat_create_task_result_and_the_row_exists(mcp: Mcp, world: World) -> None:
    created = mcp.call("slow_compute", {"seconds": 0.2, "label": "flat"})
    assert created["resultType"] == "task"
    assert set(created) >= {"taskId", "status", "createdAt", "lastUpdatedAt", "ttlMs", "pollIntervalMs"}
    assert "task" not in created and "requestState" not in created and "ttl" not in created
    assert created["status"] == "working"
    assert ISO.match(created["createdAt"]) and ISO.match(created["lastUpdatedAt"])
    assert created["ttlMs"] == 3_600_000 and created["pollIntervalMs"] == 1_000
    # Write-through: the very next read resolves.
    assert mcp.get(created["taskId"])["taskId"] == created["taskId"]
    assert list(world.store.records) == [created["taskId"]]


def test_task_tool_without_the_extension_runs_inline(mcp: Mcp, world: World) -> None:
    result = mcp.call("slow_compute", {"seconds": 0, "label": "sync"}, tasks=False)
    assert result["resultType"] == "complete"
    assert result["content"][0]["text"] == "sync finished after 0 seconds"
    assert list(world.store.records.values()) == []


def test_task_required_tool_without_the_extension_is_32021(mcp: Mcp, world: World) -> None:
    body = mcp.request("tools/call", {"name": "failing_job", "arguments": {}}, tasks=False)
    assert body["error"]["code"] == -32021
    assert body["error"]["data"] == {"requiredCapabilities": {"extensions": {TASKS_EXT: {}}}}
    assert list(world.store.records.values()) == []


def test_tasks_methods_without_the_extension_are_32021(mcp: Mcp) -> None:
    for method in ("tasks/get", "tasks/update", "tasks/cancel"):
        body = mcp.request(method, {"taskId": "nope", "inputResponses": {}}, tasks=False)
        assert body["error"]["code"] == -32021, method


def test_tasks_result_and_list_do_not_exist_in_this_era(mcp: Mcp) -> None:
    for method in ("tasks/result", "tasks/list"):
        body = mcp.request(method, {"taskId": "x"})
        assert body["error"]["code"] == -32601, method


def test_unknown_and_foreign_tasks_look_the_same(mcp: Mcp, world: World) -> None:
    alice, bob = world.mcp("alice"), world.mcp("bob")
    task_id = alice.call("slow_compute", {"seconds": 0.1})["taskId"]
    unknown = mcp.request("tasks/get", {"taskId": "00000000-0000-4000-8000-000000000000"})
    foreign = bob.request("tasks/get", {"taskId": task_id})
    assert unknown["error"]["code"] == foreign["error"]["code"] == -32602
    assert unknown["error"]["message"] == foreign["error"]["message"]
    for method in ("tasks/update", "tasks/cancel"):
        assert bob.request(method, {"taskId": task_id, "inputResponses": {}})["error"]["code"] == -32602
    assert alice.wait(task_id)["status"] == "completed"


def test_invalid_arguments_are_32602_and_store_nothing(mcp: Mcp, world: World) -> None:
    body = mcp.request("tools/call", {"name": "slow_compute", "arguments": {"seconds": "soon"}})
    assert body["error"]["code"] == -32602
    assert body["error"]["data"]["errors"][0]["path"] == ["seconds"]
    assert mcp.request("tools/call", {"name": "no_such_tool", "arguments": {}})["error"]["code"] == -32602
    assert mcp.request("tools/call", {"name": "greet", "arguments": [1]})["error"]["code"] == -32602
    assert list(world.store.records.values()) == []


def test_tasks_get_without_a_task_id_is_32602(mcp: Mcp) -> None:
    assert mcp.request("tasks/get", {})["error"]["code"] == -32602
    assert mcp.request("tasks/update", {"taskId": "x", "inputResponses": "yes"})["error"]["code"] == -32602


def test_mrtr_round_before_the_task_then_the_task_greets_the_answer(mcp: Mcp) -> None:
    first = mcp.call("test_tool_with_task")
    assert first["resultType"] == "input_required"
    assert "taskId" not in first
    request = first["inputRequests"]["user_name"]
    assert request["method"] == "elicitation/create"
    assert request["params"]["requestedSchema"]["properties"]["name"]["type"] == "string"
    answer = {"user_name": {"action": "accept", "content": {"name": "Alice"}}}
    second = mcp.result(
        "tools/call", {"name": "test_tool_with_task", "arguments": {}, "inputResponses": answer}
    )
    assert second["resultType"] == "task"
    done = mcp.wait(second["taskId"])
    assert done["status"] == "completed"
    assert done["result"]["content"][0]["text"] == "Hello, Alice!"


def test_responses_are_json(http: TestClient) -> None:
    params = {
        "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {},
        }
    }
    resp = http.post(
        "/mcp",
        json={"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": params},
        headers=headers_for("server/discover", {}),
    )
    assert resp.status_code == 200
    assert resp.headers["content-type"] == "application/json"


def test_envelope_rules(mcp: Mcp) -> None:
    ok_headers = headers_for("server/discover", {})
    # _meta without the protocol keys
    status, body = mcp.raw(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "server/discover",
            "params": {"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}},
        },
        ok_headers,
    )
    assert (status, body["error"]["code"]) == (400, -32602)
    # header and _meta disagree on the version
    status, body = mcp.raw(
        {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "server/discover",
            "params": {
                "_meta": {
                    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                    "io.modelcontextprotocol/clientCapabilities": {},
                }
            },
        },
        {**ok_headers, "mcp-protocol-version": "2099-01-01"},
    )
    assert (status, body["error"]["code"]) == (400, -32020)
    # a version we do not speak
    status, body = mcp.raw(
        {
            "jsonrpc": "2.0",
            "id": 3,
            "method": "server/discover",
            "params": {
                "_meta": {
                    "io.modelcontextprotocol/protocolVersion": "2099-01-01",
                    "io.modelcontextprotocol/clientCapabilities": {},
                }
            },
        },
        {**ok_headers, "mcp-protocol-version": "2099-01-01"},
    )
    assert (status, body["error"]["code"]) == (400, -32022)
    assert body["error"]["data"]["supported"] == ["2026-07-28"]
