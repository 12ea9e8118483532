"""2025-11-25 ``notifications/cancelled`` for a plain ``tools/call`` whose tool asked a
question, so that the call became a task behind the scenes: the task is cancelled
and its execution stopped, instead of holding a live-task slot for its whole TTL
(issue 12, item 6). Only that caller's own request, in its own session, can do it.
"""

from __future__ import annotations

from typing import Any

from starlette.testclient import TestClient

from taskgate.domain.model import TaskStatus
from tests.fakes import World
from tests.mcp_client import Legacy, parse_sse

CALL = {"name": "confirm_delete", "arguments": {"filename": "plain.txt"}}


def _plain_call_that_asks(legacy: Legacy, world: World) -> tuple[str, int]:
    """POST the plain call (raw id 1 of this client), read its stream up to the question."""
    resp = legacy.post("tools/call", CALL)
    assert resp.headers["content-type"].startswith("text/event-stream")
    events = parse_sse(resp.text)
    world.settle()
    if not any(e["data"] and e["data"].get("method") == "elicitation/create" for e in events):
        last = [e["id"] for e in events if e["id"]][-1]
        events = parse_sse(legacy.resume(last).text)
    assert any(e["data"] and e["data"].get("method") == "elicitation/create" for e in events)
    (record,) = world.store.records.values()
    assert record.status is TaskStatus.INPUT_REQUIRED
    return record.task_id, 1


def _cancel(http: TestClient, legacy: Legacy, request_id: Any) -> int:
    message = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": request_id}}
    return int(http.post("/mcp", json=message, headers=legacy.headers()).status_code)


def test_cancelling_a_plain_call_that_became_a_task_cancels_the_task(http: TestClient, world: World) -> None:
    legacy = Legacy(http)
    legacy.initialize()
    task_id, request_id = _plain_call_that_asks(legacy, world)
    assert world.store.list_active() == [task_id]
    assert _cancel(http, legacy, request_id) == 202
    row = world.store.records[task_id]
    assert row.status is TaskStatus.CANCELLED
    assert world.workflow.stop_reasons[task_id] == "The task was cancelled by the client."
    assert world.store.list_active() == []  # the live-task slot is free
    assert (
        "cancel_requested",
        {"taskId": task_id, "owner": "anonymous", "status": "cancelled"},
    ) in world.events
    # Late, repeated or unknown cancellations are ignored, as the specification allows.
    assert _cancel(http, legacy, request_id) == 202
    assert _cancel(http, legacy, 999) == 202
    assert _cancel(http, legacy, None) == 202


def test_only_the_caller_in_its_own_session_can_cancel_its_call(http: TestClient, world: World) -> None:
    alice = Legacy(http)
    alice.initialize()
    task_id, request_id = _plain_call_that_asks(alice, world)
    # Another session of the same caller has its own request ids.
    other = Legacy(http)
    other.initialize()
    assert _cancel(http, other, request_id) == 202
    # Another caller presenting the same session and request id gets nothing either.
    message = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": request_id}}
    world.handle(message, {"mcp-session-id": alice.session_id or ""}, owner="mallory")
    assert world.store.records[task_id].status is TaskStatus.INPUT_REQUIRED
    assert _cancel(http, alice, request_id) == 202
    assert world.store.records[task_id].status is TaskStatus.CANCELLED


def test_a_task_the_client_asked_for_is_cancelled_with_tasks_cancel_not_this(
    http: TestClient, world: World
) -> None:
    """Task-augmented requests are cancelled with tasks/cancel (the specification says
    so): a cancellation naming the request that created one changes nothing."""
    legacy = Legacy(http)
    legacy.initialize()
    created = legacy.result("tools/call", {**CALL, "task": {}})
    task_id = created["task"]["taskId"]
    world.settle()
    assert _cancel(http, legacy, 1) == 202
    assert world.store.records[task_id].status is TaskStatus.INPUT_REQUIRED
