"""The 2025-11-25 era on the fakes: sessions, nested task results, tasks/result over
resumable SSE with elicitation, plain calls that ask on their own stream. (The
same flows on DynamoDB and the real state machine: tests/integration/test_protocol_2025.py.)"""

from __future__ import annotations

from typing import Any

from starlette.testclient import TestClient

from taskgate.domain.model import NewTask
from tests.fakes import World
from tests.mcp_client import Legacy
from tests.sse import over_streams, result_over_streams

RELATED = "io.modelcontextprotocol/related-task"


def _task(legacy: Legacy, name: str, arguments: dict[str, Any], **task: Any) -> str:
    return legacy.result("tools/call", {"name": name, "arguments": arguments, "task": task})["task"]["taskId"]  # type: ignore[no-any-return]


def test_initialize_opens_a_session_that_belongs_to_its_caller(http: TestClient, world: World) -> None:
    client = Legacy(http)
    result = client.initialize()
    assert result["protocolVersion"] == "2025-11-25"
    assert result["capabilities"]["tasks"] == {"cancel": {}, "requests": {"tools": {"call": {}}}}
    assert result["serverInfo"]["name"] == "taskgate"
    assert client.session_id in world.sessions.sessions
    # Another caller presenting it, or an id never issued, is 404.
    resp = world.handle(
        {"jsonrpc": "2.0", "id": 1, "method": "ping"}, {"mcp-session-id": client.session_id}, "bob"
    )
    assert (
        resp.status == 404 and resp.body is not None and resp.body["error"]["message"] == "Session not found"
    )
    assert world.handle({"jsonrpc": "2.0", "id": 2, "method": "ping"}, {"mcp-session-id": "x"}).status == 404
    # DELETE ends it.
    assert http.delete("/mcp", headers=client.headers()).status_code == 200
    assert client.post("ping").status_code == 404


def test_a_task_call_is_nested_with_the_effective_ttl(legacy: Legacy) -> None:
    created = legacy.result(
        "tools/call", {"name": "slow_compute", "arguments": {"seconds": 0}, "task": {"ttl": 10**12}}
    )
    task = created["task"]
    assert task["status"] == "working" and task["ttl"] == 86_400_000 and task["pollInterval"] == 1_000
    assert "ttlMs" not in task and "resultType" not in created


def test_task_support_rules_and_strict_params(legacy: Legacy) -> None:
    assert (
        legacy.request("tools/call", {"name": "greet", "arguments": {}, "task": {}})["error"]["code"]
        == -32601
    )
    assert legacy.request("tools/call", {"name": "failing_job", "arguments": {}})["error"]["code"] == -32601
    bad_ttl = legacy.request("tools/call", {"name": "slow_compute", "arguments": {}, "task": {"ttl": "soon"}})
    assert bad_ttl["error"]["code"] == -32602


def test_tasks_result_is_what_the_call_would_have_returned(legacy: Legacy, world: World) -> None:
    ok = _task(legacy, "greet_task" if False else "slow_compute", {"seconds": 0})
    tool_error = _task(legacy, "failing_job", {})
    rpc_error = _task(legacy, "protocol_error_job", {})
    world.settle()
    result = legacy.result("tasks/result", {"taskId": ok})
    assert result["content"][0]["text"] == "compute finished after 0 seconds"
    assert result["_meta"][RELATED] == {"taskId": ok}
    assert legacy.result("tasks/get", {"taskId": tool_error})["status"] == "failed"
    assert legacy.result("tasks/result", {"taskId": tool_error})["isError"] is True
    error = legacy.request("tasks/result", {"taskId": rpc_error})["error"]
    assert error["code"] == -32603 and error["data"][RELATED] == {"taskId": rpc_error}


def test_a_question_arrives_on_the_result_stream_and_the_answer_resumes(legacy: Legacy, world: World) -> None:
    task_id = _task(legacy, "confirm_delete", {"filename": "old.log"})
    message, streams = result_over_streams(
        legacy, task_id, {"action": "accept", "content": {"confirm": True}}
    )
    asked = [
        e["data"] for s in streams for e in s if e["data"] and e["data"].get("method") == "elicitation/create"
    ]
    assert [a["params"]["message"] for a in asked] == ["Delete old.log?"]
    assert asked[0]["params"]["_meta"][RELATED] == {"taskId": task_id}
    assert message["result"]["content"][0]["text"] == "Deleted old.log"
    # Every stream opens with an id to resume from; ids keep their order.
    ids = [e["id"] for s in streams for e in s if e["id"]]
    assert len(ids) == len(set(ids)) and all(any(e["id"] for e in s) for s in streams)


def test_a_plain_call_that_asks_becomes_a_hidden_task_on_its_own_stream(legacy: Legacy, world: World) -> None:
    call = {"name": "confirm_delete", "arguments": {"filename": "plain.txt"}}
    message, streams = over_streams(
        legacy, "tools/call", call, {"action": "accept", "content": {"confirm": True}}
    )
    sent = [e["data"] for s in streams for e in s if e["data"]]
    asked = [m for m in sent if m.get("method") == "elicitation/create"]
    assert len(asked) == 1 and "_meta" not in asked[0]["params"]
    assert not [m for m in sent if m.get("method") == "notifications/tasks/status"]
    assert message["result"] == {"content": [{"type": "text", "text": "Deleted plain.txt"}], "isError": False}
    assert [(r.tool, r.status.value) for r in world.store.records.values()] == [
        ("confirm_delete", "completed")
    ]
    refused = legacy.post("tools/call", call, accept="application/json").json()["error"]
    assert refused["code"] == -32602 and "Call it as a task: send params.task" in refused["message"]
    assert len(world.store.records) == 1


def test_cancel_returns_the_cancelled_task_and_refuses_an_ended_one(legacy: Legacy) -> None:
    task_id = _task(legacy, "confirm_delete", {"filename": "x"})
    cancelled = legacy.result("tasks/cancel", {"taskId": task_id})
    assert cancelled["status"] == "cancelled" and cancelled["taskId"] == task_id
    again = legacy.request("tasks/cancel", {"taskId": task_id})
    assert again["error"]["code"] == -32602 and "already cancelled" in again["error"]["message"]


def test_tasks_list_is_for_identified_callers_only_and_pages(http: TestClient, world: World) -> None:
    anonymous = Legacy(http)
    assert "list" not in anonymous.initialize()["capabilities"]["tasks"]
    assert anonymous.request("tasks/list")["error"]["code"] == -32601
    # An identified caller (what an authorizer puts in the request).
    ann = world.mcp  # noqa: F841  (2026 client unused; the 2025 list is asked directly below)
    for _ in range(3):
        world.handle(
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "tools/call",
                "params": {"name": "slow_compute", "task": {}},
            },
            owner="ann",
        )
    listed = world.handle({"jsonrpc": "2.0", "id": 2, "method": "tasks/list"}, owner="ann").body
    assert listed is not None and len(listed["result"]["tasks"]) == 3
    assert world.handle({"jsonrpc": "2.0", "id": 3, "method": "tasks/list"}, owner="bob").body["result"] == {
        "tasks": []
    }
    bad = world.handle(
        {"jsonrpc": "2.0", "id": 4, "method": "tasks/list", "params": {"cursor": "zz"}}, owner="ann"
    )
    assert bad.body is not None and bad.body["error"]["code"] == -32602


# -- issue 21, the spec audit: tasks/result returns the error the call would have returned,
# and an ``optional`` tool with a prepare step is callable as a task.


def test_tasks_result_returns_the_tools_error_data_exactly(legacy: Legacy, world: World) -> None:
    for data in ("a reason in plain text", [1, "two", None], 7, False, {"field": "name"}, None):
        arguments = {} if data is None else {"data": data}
        task_id = _task(legacy, "error_with_data", arguments)
        world.settle()
        error = legacy.request("tasks/result", {"taskId": task_id})["error"]
        assert (error["code"], error["message"]) == (-32050, "failed with data")
        tag = {RELATED: {"taskId": task_id}}
        if isinstance(data, dict):
            assert error["data"] == {**data, **tag}  # an object gains the related task
        elif data is None:
            assert error["data"] == tag
        else:
            assert error["data"] == data, data  # anything else comes back as the tool sent it


def test_an_optional_tool_that_asks_before_it_starts_is_callable_as_a_task(
    legacy: Legacy, world: World
) -> None:
    """``test_tool_with_task`` is listed ``optional`` but was refused with -32602 as a task:
    its ``prepare`` step asks first, and this revision has no round for that before a task.
    The task now asks it (input_required, on the tasks/result stream)."""
    tools = {t["name"]: t for t in legacy.result("tools/list")["tools"]}
    assert tools["test_tool_with_task"]["execution"] == {"taskSupport": "optional"}
    task_id = _task(legacy, "test_tool_with_task", {})
    world.settle()
    assert legacy.result("tasks/get", {"taskId": task_id})["status"] == "input_required"
    response, streams = result_over_streams(legacy, task_id, {"action": "accept", "content": {"name": "Ada"}})
    asked = [
        e["data"]
        for events in streams
        for e in events
        if e["data"] and e["data"].get("method") == "elicitation/create"
    ]
    assert [a["params"]["message"] for a in asked] == ["What is your name?"]
    assert response["result"]["content"][0]["text"] == "Hello, Ada!"


def test_a_prepare_step_is_asked_wherever_the_tool_runs(legacy: Legacy, world: World) -> None:
    """What ``prepare`` asks gates the tool everywhere: as a 2025 task, and as a plain call."""
    declined = _task(legacy, "gated_job", {})
    response, _ = result_over_streams(legacy, declined, {"action": "decline"})
    assert response["result"]["isError"] is True
    assert response["result"]["content"][0]["text"] == "The gated job was not confirmed."
    confirmed = _task(legacy, "gated_job", {})
    response, _ = result_over_streams(legacy, confirmed, {"action": "accept", "content": {"ok": True}})
    assert response["result"]["content"][0]["text"] == "the gated job ran"
    # A plain 2026 call asks in an input round, then runs with the answer.
    mcp = world.mcp()
    first = mcp.call("gated_job", tasks=False)
    assert first["resultType"] == "input_required" and list(first["inputRequests"]) == ["go_ahead"]
    done = mcp.result(
        "tools/call",
        {
            "name": "gated_job",
            "arguments": {},
            "inputResponses": {"go_ahead": {"action": "accept", "content": {"ok": True}}},
        },
        tasks=False,
    )
    assert done["content"][0]["text"] == "the gated job ran"


def _list(world: World, owner: str, cursor: str | None = None) -> Any:
    params = {"cursor": cursor} if cursor is not None else {}
    return world.handle(
        {"jsonrpc": "2.0", "id": 9, "method": "tasks/list", "params": params}, owner=owner
    ).body


def test_a_cursor_opens_only_as_issued_to_its_caller(world: World) -> None:
    """Issue 21, the spec audit: a well-formed cursor the server never issued was accepted
    (the store's own position, handed out as is). Cursors are now sealed like requestState."""
    for _ in range(3):
        world.tasks.create(NewTask(owner="ann", tool="slow_compute", arguments={"seconds": 0}))
    world.tasks.create(NewTask(owner="bob", tool="slow_compute", arguments={"seconds": 0}))
    original = world.tasks.list
    world.tasks.list = lambda owner, cursor, limit=2, **kw: original(owner, cursor, limit, **kw)  # type: ignore[method-assign]
    first = _list(world, "ann")["result"]
    cursor = first["nextCursor"]
    second = _list(world, "ann", cursor)["result"]
    assert len(first["tasks"]) == 2 and len(second["tasks"]) == 1 and "nextCursor" not in second
    refused = [
        "2",  # the fake store's own position for the second page: well-formed, never issued
        cursor[:-2] + ("AA" if cursor[-2:] != "AA" else "BB"),  # altered
        cursor + "A",
    ]
    for forged in refused:
        error = _list(world, "ann", forged)["error"]
        assert error["code"] == -32602 and error["message"].startswith("Invalid cursor"), forged
    assert _list(world, "bob", cursor)["error"]["code"] == -32602  # another caller's
    # A requestState sealed for ann is not a cursor either, nor does a cursor outlive its hour.
    from taskgate.protocol.wire.request_state import Carried

    state = world.request_states.seal(
        Carried({}, "2"), owner="ann", method="tools/call", target="x", arguments={}
    )
    assert _list(world, "ann", state)["error"]["code"] == -32602
    world.clock.advance(3_600_001)
    assert _list(world, "ann", cursor)["error"]["code"] == -32602


def test_tasks_list_shows_the_task_just_created_while_the_index_lags(world: World) -> None:
    """Issue 21, the spec audit: on AWS the owner index behind tasks/list is eventually
    consistent, so a task just created could be missing from the list while tasks/get found
    it. The fake store's index lags here (``index_lags``) as DynamoDB's may."""
    from taskgate.http_app import create_app
    from taskgate.local.dev_auth import DevAuthMiddleware

    world.store.index_lags = True
    app = create_app(lambda: world.server, anonymous_owner="anonymous", max_body_bytes=1_048_576)
    with TestClient(DevAuthMiddleware(app, {"ann-token": "ann"}), base_url="http://localhost") as http:
        ann = Legacy(http, token="ann-token")
        ann.initialize()
        first = _task(ann, "slow_compute", {"seconds": 0})
        assert (
            world.store.list_for_owner("ann", limit=50, cursor=None)[0] == []
        )  # the index has not caught up
        assert [t["taskId"] for t in ann.result("tasks/list")["tasks"]] == [first]
        assert ann.result("tasks/get", {"taskId": first})["taskId"] == first
        created = [first]
        for _ in range(19):
            world.clock.advance(1)  # newest first is an order only if their times differ
            created.append(_task(ann, "slow_compute", {"seconds": 0}))
        listed = [t["taskId"] for t in ann.result("tasks/list")["tasks"]]
        # The session remembers its newest 16; the rest wait for the index.
        assert listed == created[::-1][:16]
        assert ann.session_id is not None and len(world.sessions.sessions[ann.session_id].recent_tasks) == 16
        # Another session of the same owner sees them once the index has them; nobody twice.
        other = Legacy(http, token="ann-token")
        other.initialize()
        world.store.catch_up_index()
        for client in (ann, other):
            assert sorted(t["taskId"] for t in client.result("tasks/list")["tasks"]) == sorted(created)
        # Walked in pages of 3, with the session's own newest merged into the first: each once.
        world.store.index_lags = True
        world.clock.advance(1)
        created.append(_task(ann, "slow_compute", {"seconds": 0}))
        original = world.tasks.list
        world.tasks.list = lambda owner, cursor, limit=3, **kw: original(owner, cursor, limit, **kw)  # type: ignore[method-assign]
        seen: list[str] = []
        cursor = None
        while True:
            page = ann.result("tasks/list", {"cursor": cursor} if cursor else {})
            seen += [t["taskId"] for t in page["tasks"]]
            if not (cursor := page.get("nextCursor")):
                break
        assert sorted(seen) == sorted(created) and seen[0] == created[-1]
