"""The 2025-11-25 Tasks surface over HTTP: sessions in the store, nested CreateTaskResult,
tasks/result over resumable SSE with elicitation, owner-scoped tasks/list."""

from __future__ import annotations

import base64
import json
import time
from typing import Any

import boto3
import pytest
from starlette.testclient import TestClient

from taskgate import wiring
from taskgate.local.runtime import EmbeddedAws
from tests.integration.conftest import known_quick, table_items
from tests.mcp_client import Legacy, parse_sse
from tests.sse import over_streams, result_over_streams

RELATED = "io.modelcontextprotocol/related-task"


@pytest.fixture
def legacy(http: TestClient) -> Legacy:
    client = Legacy(http)
    client.initialize()
    return client


def _wait_status(client: Legacy, task_id: str, statuses: set[str], timeout: float = 10) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while (task := client.result("tasks/get", {"taskId": task_id}))["status"] not in statuses:
        assert time.monotonic() < deadline, task
        time.sleep(0.05)
    return task


def test_initialize_negotiates_and_stores_a_session(http: TestClient, aws: EmbeddedAws) -> None:
    client = Legacy(http)
    result = client.initialize()
    assert result["protocolVersion"] == "2025-11-25"
    assert result["capabilities"]["tasks"] == {"cancel": {}, "requests": {"tools": {"call": {}}}}
    # The session is in DynamoDB, not in this process: any instance can serve it.
    keys = [i["taskId"]["S"] for i in table_items(aws)]
    assert keys == [f"session#{client.session_id}"]
    older = Legacy(http)
    resp = http.post(
        "/mcp",
        json={
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "x", "version": "1"},
            },
        },
    )
    assert resp.json()["result"]["protocolVersion"] == "2025-06-18"
    assert older.session_id is None


def test_identified_callers_are_offered_tasks_list(http: TestClient) -> None:
    assert "list" in Legacy(http, token="alice-token").initialize()["capabilities"]["tasks"]


def test_unknown_or_deleted_session_is_404(legacy: Legacy) -> None:
    assert legacy.post("tools/list").status_code == 200
    assert legacy.http.delete("/mcp", headers=legacy.headers()).status_code == 200
    resp = legacy.post("tools/list")
    assert resp.status_code == 404 and resp.json()["error"]["message"] == "Session not found"


def test_another_callers_session_is_404(http: TestClient) -> None:
    alice = Legacy(http, token="alice-token")
    alice.initialize()
    bob = Legacy(http, token="bob-token")
    bob.session_id = alice.session_id
    assert bob.post("tools/list").status_code == 404


def test_tools_list_carries_task_support(legacy: Legacy) -> None:
    tools = {t["name"]: t for t in legacy.result("tools/list")["tools"]}
    assert tools["failing_job"]["execution"] == {"taskSupport": "required"}
    assert tools["greet"]["execution"] == {"taskSupport": "forbidden"}
    assert "resultType" not in legacy.result("tools/list")


def test_task_augmented_call_returns_a_nested_task_with_the_effective_ttl(legacy: Legacy) -> None:
    created = legacy.result(
        "tools/call", {"name": "slow_compute", "arguments": {"seconds": 0.1}, "task": {"ttl": 10**12}}
    )
    task = created["task"]
    assert set(task) >= {"taskId", "status", "createdAt", "lastUpdatedAt", "ttl", "pollInterval"}
    assert "ttlMs" not in task and "resultType" not in created
    assert task["ttl"] == 86_400_000  # MaxTtlMs, not what was asked
    got = legacy.result("tasks/get", {"taskId": task["taskId"]})
    # Any write since creation (progress, the end) renews the task's life: ttl only grows.
    assert 86_400_000 <= got["ttl"] < 86_400_000 + 60_000 and got["pollInterval"] == 1000


def test_task_support_rules(legacy: Legacy) -> None:
    forbidden = legacy.request("tools/call", {"name": "greet", "arguments": {}, "task": {}})
    assert forbidden["error"]["code"] == -32601
    required = legacy.request("tools/call", {"name": "failing_job", "arguments": {}})
    assert required["error"]["code"] == -32601
    assert (
        legacy.result("tools/call", {"name": "greet", "arguments": {"name": "Bo"}})["content"][0]["text"]
        == "Hello, Bo!"
    )
    bad_ttl = legacy.request("tools/call", {"name": "slow_compute", "arguments": {}, "task": {"ttl": "soon"}})
    assert bad_ttl["error"]["code"] == -32602


def test_tasks_result_returns_what_the_call_would_have(legacy: Legacy) -> None:
    ok = legacy.result("tools/call", {"name": "slow_compute", "arguments": {"seconds": 0}, "task": {}})[
        "task"
    ]["taskId"]
    tool_error = legacy.result("tools/call", {"name": "failing_job", "arguments": {}, "task": {}})["task"][
        "taskId"
    ]
    rpc_error = legacy.result("tools/call", {"name": "protocol_error_job", "arguments": {}, "task": {}})[
        "task"
    ]["taskId"]
    for task_id in (ok, tool_error, rpc_error):
        _wait_status(legacy, task_id, {"completed", "failed"})

    result = legacy.result("tasks/result", {"taskId": ok})
    assert result["content"][0]["text"] == "compute finished after 0 seconds"
    assert result["_meta"][RELATED] == {"taskId": ok}

    # isError: true is 'failed' in this era, and tasks/result still returns the tool result.
    assert legacy.result("tasks/get", {"taskId": tool_error})["status"] == "failed"
    result = legacy.result("tasks/result", {"taskId": tool_error})
    assert result["isError"] is True and result["_meta"][RELATED] == {"taskId": tool_error}

    error = legacy.request("tasks/result", {"taskId": rpc_error})["error"]
    assert error["code"] == -32603 and error["message"] == "Simulated protocol error during execution"
    assert error["data"][RELATED] == {"taskId": rpc_error}


def test_tasks_result_blocks_across_resumed_streams(legacy: Legacy) -> None:
    task_id = legacy.result(
        "tools/call", {"name": "slow_compute", "arguments": {"seconds": 3.5}, "task": {}}
    )["task"]["taskId"]
    started = time.monotonic()
    message, streams = result_over_streams(legacy, task_id)
    assert message["result"]["content"][0]["text"] == "compute finished after 3.5 seconds"
    assert message["result"]["_meta"][RELATED] == {"taskId": task_id}
    assert time.monotonic() - started >= 3
    assert len(streams) >= 2  # the wait did not fit one 1.5 s stream
    first = streams[0]
    assert first[0]["data"] is None and first[0]["id"].split(":")[1] == "0" and first[0]["retry"]
    # Every stream, resumed ones too, carries an id to resume from (some clients
    # forget the previous one), and ids are unique and keep their order.
    assert all(any(e["id"] for e in s) for s in streams)
    ids = [e["id"] for s in streams for e in s if e["id"]]
    assert len(ids) == len(set(ids))
    positions = [int(i.split(":")[1]) for i in ids]
    assert positions == sorted(positions)


def test_input_required_arrives_as_elicitation_on_the_result_stream(legacy: Legacy) -> None:
    task_id = legacy.result(
        "tools/call", {"name": "confirm_delete", "arguments": {"filename": "old.log"}, "task": {}}
    )["task"]["taskId"]
    _wait_status(legacy, task_id, {"input_required"})
    answer = {"action": "accept", "content": {"confirm": True}}
    message, streams = result_over_streams(legacy, task_id, answer)
    asked = [
        e["data"] for s in streams for e in s if e["data"] and e["data"].get("method") == "elicitation/create"
    ]
    assert len(asked) == 1
    assert asked[0]["params"]["message"] == "Delete old.log?"
    assert asked[0]["params"]["_meta"][RELATED] == {"taskId": task_id}
    assert message["result"]["content"][0]["text"] == "Deleted old.log"


def test_a_plain_call_to_a_tool_that_asks_elicits_on_its_own_stream(legacy: Legacy, aws: EmbeddedAws) -> None:
    """No params.task: 2025 has no inline question, so the call becomes a task whose
    elicitation and result travel on the call's own (resumed) stream, and nothing on it
    names the task the client never asked for."""
    call = {"name": "confirm_delete", "arguments": {"filename": "plain.txt"}}
    answer = {"action": "accept", "content": {"confirm": True}}
    message, streams = over_streams(legacy, "tools/call", call, answer)
    sent = [e["data"] for s in streams for e in s if e["data"]]
    asked = [m for m in sent if m.get("method") == "elicitation/create"]
    assert [a["params"]["message"] for a in asked] == ["Delete plain.txt?"]
    assert "_meta" not in asked[0]["params"]
    assert not [m for m in sent if m.get("method") == "notifications/tasks/status"]
    assert len(streams) >= 2  # the answer resumed the task; the response came on a resumed stream
    assert isinstance(message["id"], int)  # the tools/call's own id
    assert message["result"] == {"content": [{"type": "text", "text": "Deleted plain.txt"}], "isError": False}
    # Behind it, a task that ran to completion.
    rows = [i for i in table_items(aws) if "#" not in i["taskId"]["S"]]
    assert [(r["tool"]["S"], r["status"]["S"]) for r in rows] == [("confirm_delete", "completed")]


def test_a_plain_call_that_asks_without_an_event_stream_is_refused_and_stores_nothing(
    legacy: Legacy, aws: EmbeddedAws
) -> None:
    known_quick("confirm_delete")  # run inline, where the question comes before any task exists
    call = {"name": "confirm_delete", "arguments": {"filename": "x"}}
    resp = legacy.post("tools/call", call, accept="application/json")
    error = resp.json()["error"]
    assert error["code"] == -32602 and "call it as a task" in error["message"].lower()
    assert [i["taskId"]["S"] for i in table_items(aws) if "#" not in i["taskId"]["S"]] == []


def test_a_declined_elicitation_is_an_answer_too(legacy: Legacy) -> None:
    task_id = legacy.result(
        "tools/call", {"name": "confirm_delete", "arguments": {"filename": "keep.txt"}, "task": {}}
    )["task"]["taskId"]
    _wait_status(legacy, task_id, {"input_required"})
    message, _ = result_over_streams(legacy, task_id, {"action": "decline"})
    assert message["result"]["content"][0]["text"] == "Kept keep.txt"


def test_progress_token_lives_for_the_task(legacy: Legacy) -> None:
    created = legacy.result(
        "tools/call",
        {
            "name": "slow_compute",
            "arguments": {"seconds": 2.5, "label": "p"},
            "task": {},
            "_meta": {"progressToken": "tok-1"},
        },
    )
    message, streams = result_over_streams(legacy, created["task"]["taskId"])
    assert message["result"]["isError"] is False
    progress = [
        e["data"]["params"]
        for s in streams
        for e in s
        if e["data"] and e["data"].get("method") == "notifications/progress"
    ]
    assert progress and all(p["progressToken"] == "tok-1" for p in progress)
    assert [p["progress"] for p in progress] == sorted({p["progress"] for p in progress})
    statuses = [
        e["data"]["params"]["status"]
        for s in streams
        for e in s
        if e["data"] and e["data"].get("method") == "notifications/tasks/status"
    ]
    assert statuses[-1] == "completed"


def test_cancel_returns_the_cancelled_task_and_refuses_a_finished_one(legacy: Legacy) -> None:
    task_id = legacy.result("tools/call", {"name": "slow_compute", "arguments": {"seconds": 60}, "task": {}})[
        "task"
    ]["taskId"]
    cancelled = legacy.result("tasks/cancel", {"taskId": task_id})
    assert cancelled["taskId"] == task_id and cancelled["status"] == "cancelled"
    again = legacy.request("tasks/cancel", {"taskId": task_id})
    assert again["error"]["code"] == -32602
    error = legacy.request("tasks/result", {"taskId": task_id})["error"]
    assert error["data"][RELATED] == {"taskId": task_id}


def test_tasks_list_is_owner_scoped_and_paged(
    http: TestClient, aws: EmbeddedAws, monkeypatch: pytest.MonkeyPatch
) -> None:
    alice, bob = Legacy(http, token="alice-token"), Legacy(http, token="bob-token")
    alice.initialize()
    bob.initialize()
    mine = [
        alice.result("tools/call", {"name": "slow_compute", "arguments": {"seconds": 0}, "task": {}})["task"][
            "taskId"
        ]
        for _ in range(5)
    ]
    theirs = bob.result("tools/call", {"name": "slow_compute", "arguments": {"seconds": 0}, "task": {}})[
        "task"
    ]["taskId"]
    service = wiring.root().tasks
    original = service.list
    monkeypatch.setattr(
        service, "list", lambda owner, cursor, limit=2, **kw: original(owner, cursor, limit, **kw)
    )
    seen: list[str] = []
    cursor = None
    pages = 0
    while True:
        page = alice.result("tasks/list", {"cursor": cursor} if cursor else {})
        seen += [t["taskId"] for t in page["tasks"]]
        pages += 1
        cursor = page.get("nextCursor")
        if not cursor:
            break
    assert sorted(seen) == sorted(mine) and theirs not in seen
    assert pages >= 3
    assert alice.request("tasks/list", {"cursor": "garbage"})["error"]["code"] == -32602
    first = alice.result("tasks/list")
    assert bob.request("tasks/list", {"cursor": first["nextCursor"]})["error"]["code"] == -32602
    # Issue 21: a well-formed position the server never issued (a DynamoDB key of alice's,
    # as the cursor used to be) is refused too; cursors are sealed.
    row = next(i for i in table_items(aws) if i["taskId"]["S"] == mine[2])
    key = {name: row[name] for name in ("taskId", "ownerId", "createdAt")}
    forged = base64.urlsafe_b64encode(json.dumps(key).encode()).decode()
    refused = alice.request("tasks/list", {"cursor": forged})
    assert "error" in refused, refused
    assert refused["error"]["code"] == -32602 and refused["error"]["message"].startswith("Invalid cursor")
    # Another owner's task looks missing on every method.
    for method in ("tasks/get", "tasks/result", "tasks/cancel"):
        assert bob.request(method, {"taskId": mine[0]})["error"]["code"] == -32602


def test_anonymous_callers_cannot_list(legacy: Legacy) -> None:
    assert legacy.request("tasks/list")["error"]["code"] == -32601


def test_stream_resume_belongs_to_its_owner(http: TestClient) -> None:
    alice, bob = Legacy(http, token="alice-token"), Legacy(http, token="bob-token")
    alice.initialize()
    task_id = alice.result("tools/call", {"name": "slow_compute", "arguments": {"seconds": 3}, "task": {}})[
        "task"
    ]["taskId"]
    resp = alice.post("tasks/result", {"taskId": task_id})
    last = [e["id"] for e in parse_sse(resp.text) if e["id"]][-1]
    assert bob.resume(last).status_code == 404
    alice.result("tasks/cancel", {"taskId": task_id})


def test_a_tool_can_close_the_stream_and_the_result_survives_in_the_log(legacy: Legacy) -> None:
    resp = legacy.post("tools/call", {"name": "test_reconnection", "arguments": {}})
    assert resp.headers["content-type"].startswith("text/event-stream")
    events = parse_sse(resp.text)
    assert len(events) == 1 and events[0]["data"] is None and events[0]["retry"]
    resumed = parse_sse(legacy.resume(events[0]["id"]).text)
    messages = [e["data"] for e in resumed if e["data"]]
    assert messages[-1]["id"] == 1 and "resumed stream" in messages[-1]["result"]["content"][0]["text"]


def test_cancelling_a_plain_call_that_asked_cancels_its_hidden_task(legacy: Legacy, aws: EmbeddedAws) -> None:
    """notifications/cancelled for the call's request id reaches the task through the
    call# item in DynamoDB, and stops the parked execution."""
    import boto3

    resp = legacy.post("tools/call", {"name": "confirm_delete", "arguments": {"filename": "x"}})
    events = parse_sse(resp.text)
    for _ in range(20):
        if any(e["data"] and e["data"].get("method") == "elicitation/create" for e in events):
            break
        events = parse_sse(legacy.resume([e["id"] for e in events if e["id"]][-1]).text)
    (task_id,) = [i["taskId"]["S"] for i in table_items(aws) if "#" not in i["taskId"]["S"]]
    message = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}}
    assert legacy.http.post("/mcp", json=message, headers=legacy.headers()).status_code == 202
    assert wiring.root().store.get(task_id).status.value == "cancelled"  # type: ignore[union-attr]
    sfn = boto3.client("stepfunctions", region_name="us-east-1")
    arn = aws.state_machine_arn.replace(":stateMachine:", ":execution:") + ":" + task_id
    deadline = time.monotonic() + 10
    while sfn.describe_execution(executionArn=arn)["status"] == "RUNNING":
        assert time.monotonic() < deadline
        time.sleep(0.05)
    assert sfn.describe_execution(executionArn=arn)["status"] == "ABORTED"


class _LaggingOwnerIndex:
    """The DynamoDB client, except that queries of the owner index miss every task put
    since the lag began (as an eventually consistent index may, for a moment)."""

    def __init__(self, client: Any) -> None:
        self._client = client
        self.unindexed: set[str] = set()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._client, name)

    def put_item(self, **kwargs: Any) -> Any:
        if "ownerId" in kwargs.get("Item", {}):
            self.unindexed.add(kwargs["Item"]["taskId"]["S"])
        return self._client.put_item(**kwargs)

    def query(self, **kwargs: Any) -> Any:
        page = self._client.query(**kwargs)
        if kwargs.get("IndexName") == "byOwner":
            page["Items"] = [i for i in page["Items"] if i["taskId"]["S"] not in self.unindexed]
        return page


def test_tasks_list_shows_the_task_just_created_while_the_owner_index_lags(
    http: TestClient, aws: EmbeddedAws, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 21, the spec audit, on DynamoDB: the owner index behind tasks/list is eventually
    consistent, so a task just created could be missing from the list while tasks/get found
    it. The session remembers its own newest tasks (an item attribute it already reads on
    every request), and the list reads those from the table itself."""
    store = wiring.root().store
    lagging = _LaggingOwnerIndex(store._ddb)  # type: ignore[attr-defined]
    monkeypatch.setattr(store, "_client", lambda: lagging)
    alice = Legacy(http, token="alice-token")
    alice.initialize()
    task_id = alice.result("tools/call", {"name": "slow_compute", "arguments": {"seconds": 0}, "task": {}})[
        "task"
    ]["taskId"]
    assert task_id in lagging.unindexed
    listed = alice.result("tasks/list")["tasks"]
    assert [t["taskId"] for t in listed] == [task_id]
    assert listed[0]["status"] in ("working", "completed") and listed[0]["ttl"] > 0
    session = next(i for i in table_items(aws) if i["taskId"]["S"] == f"session#{alice.session_id}")
    assert list(session["recentTasks"]["M"]) == [task_id]
    lagging.unindexed.clear()  # caught up: listed once
    assert [t["taskId"] for t in alice.result("tasks/list")["tasks"]] == [task_id]


def test_a_session_remembers_its_newest_tasks_in_its_item(aws: EmbeddedAws) -> None:
    from taskgate.adapters.dynamodb_sessions import DynamoDBSessionStore
    from taskgate.clock import now_ms
    from taskgate.domain.sessions import Session

    ddb = boto3.client("dynamodb", region_name="us-east-1")
    store = DynamoDBSessionStore(lambda: ddb, aws.table_name, now_ms)
    expires = now_ms() + 60_000
    store.create_session(Session("new", "alice", "2025-11-25", expires))
    store.remember_task("new", "t1", 1)
    store.remember_task("new", "t2", 2)
    store.remember_task("new", "t3", 3, forget=["t1", "never-there"])
    assert store.get_session("new").recent_tasks == {"t2": 2, "t3": 3}  # type: ignore[union-attr]
    # A session opened before sessions remembered their tasks starts its list on the first.
    ddb.put_item(
        TableName=aws.table_name,
        Item={
            "taskId": {"S": "session#old"},
            "kind": {"S": "session"},
            "sessionOwner": {"S": "alice"},
            "protocolVersion": {"S": "2025-11-25"},
            "expiresAt": {"N": str(expires // 1000 + 1)},
        },
    )
    assert store.get_session("old").recent_tasks == {}  # type: ignore[union-attr]
    store.remember_task("old", "t9", 9)
    assert store.get_session("old").recent_tasks == {"t9": 9}  # type: ignore[union-attr]
    # A session that is gone stays gone.
    store.remember_task("gone", "t1", 1)
    assert store.get_session("gone") is None
