"""Concurrent partial answers under DynamoDB and the real state machine: 50 tasks
per era, each asked two questions at once (``multi_input``) and answered by two
threads released together, one answer each. Every task must resume exactly once
and complete; none may be left waiting with no question outstanding (issue 12,
item 1). Run with ``-s`` for the counts.

2026-07-28: two ``tasks/update`` calls. 2025-11-25: the two ``elicitation/create``
requests of one ``tasks/result`` stream answered at once, then the stream resumed
(``Last-Event-ID``) until it delivers the result.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from taskgate import wiring
from taskgate.domain.model import TaskStatus
from taskgate.local.runtime import EmbeddedAws
from tests.integration.conftest import owner_client
from tests.mcp_client import parse_sse

TASKS = 50
OWNER = "racer"
EXPECTED = "Hello, Ann! Your favourite colour is teal."
NAME = {"action": "accept", "content": {"name": "Ann"}}
COLOR = {"action": "accept", "content": {"color": "teal"}}
H2025 = {"content-type": "application/json", "accept": "application/json, text/event-stream"}


def _wait_all(task_ids: list[str], status: TaskStatus, timeout: float = 60) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    pending = set(task_ids)
    rows: dict[str, Any] = {}
    while pending and time.monotonic() < deadline:
        for task_id in list(pending):
            record = wiring.root().store.get(task_id)
            assert record is not None
            rows[task_id] = record
            if record.status is status or record.status.terminal:
                pending.discard(task_id)
        time.sleep(0.05)
    return rows


def _together(*calls: Callable[[], Any]) -> list[Any]:
    """Run the calls on their own threads, released at the same moment."""
    barrier = threading.Barrier(len(calls))
    out: list[Any] = [None] * len(calls)

    def run(i: int) -> None:
        barrier.wait()
        out[i] = calls[i]()

    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(calls))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    return out


def _verdict(era: str, task_ids: list[str]) -> dict[str, Any]:
    rows = _wait_all(task_ids, TaskStatus.COMPLETED)
    stuck = [t for t, r in rows.items() if r.status is TaskStatus.INPUT_REQUIRED and not r.input_requests]
    completed = [
        t
        for t, r in rows.items()
        if r.status is TaskStatus.COMPLETED
        and wiring.root().tasks.with_result(r).result["content"][0]["text"] == EXPECTED  # type: ignore[index]
    ]
    print(f"\n{era}: {len(task_ids)} tasks, {len(completed)} completed, {len(stuck)} stuck with no question")
    return {"stuck": stuck, "completed": len(completed), "others": {t: r.status for t, r in rows.items()}}


def test_concurrent_tasks_update_calls_leave_no_task_stuck(aws: EmbeddedAws) -> None:
    client = owner_client(OWNER)
    task_ids = [client.call("multi_input")["taskId"] for _ in range(TASKS)]
    parked = _wait_all(task_ids, TaskStatus.INPUT_REQUIRED)
    assert all(r.status is TaskStatus.INPUT_REQUIRED for r in parked.values())

    def update(task_id: str, key: str, value: dict[str, Any]) -> Callable[[], Any]:
        return lambda: client.request("tasks/update", {"taskId": task_id, "inputResponses": {key: value}})

    def answer_both(task_id: str) -> list[Any]:
        return _together(update(task_id, "name", NAME), update(task_id, "color", COLOR))

    with ThreadPoolExecutor(max_workers=8) as pool:
        replies = [r for pair in pool.map(answer_both, task_ids) for r in pair]
    assert all(r.get("result") == {"resultType": "complete"} for r in replies), replies[:3]
    verdict = _verdict("2026 tasks/update", task_ids)
    assert verdict["stuck"] == [] and verdict["completed"] == TASKS, verdict


def _server_call(body: dict[str, Any], headers: dict[str, str] | None = None) -> Any:
    return wiring.root().server.handle(body, {**H2025, **(headers or {})}, OWNER)


def _events(reply: Any) -> list[dict[str, Any]]:
    assert reply.stream is not None, (reply.status, reply.body)
    return parse_sse("".join(reply.stream))


def _result_stream_2025(session: str, task_id: str) -> tuple[list[dict[str, Any]], str]:
    """tasks/result until the stream has asked both questions; the last event id to resume from."""
    reply = _server_call(
        {"jsonrpc": "2.0", "id": 7, "method": "tasks/result", "params": {"taskId": task_id}},
        {"mcp-session-id": session},
    )
    events = _events(reply)
    asked = [e["data"] for e in events if e["data"] and e["data"].get("method") == "elicitation/create"]
    last = [e["id"] for e in events if e["id"]][-1]
    for _ in range(40):
        if len(asked) == 2:
            return asked, last
        resumed = wiring.root().server.handle_get(
            {**H2025, "mcp-session-id": session, "last-event-id": last}, OWNER
        )
        events = _events(resumed)
        asked += [e["data"] for e in events if e["data"] and e["data"].get("method") == "elicitation/create"]
        last = ([e["id"] for e in events if e["id"]] or [last])[-1]
    raise AssertionError(f"{task_id}: the stream asked {len(asked)} questions")


def _result_after(session: str, last: str) -> dict[str, Any]:
    for _ in range(60):
        reply = wiring.root().server.handle_get(
            {**H2025, "mcp-session-id": session, "last-event-id": last}, OWNER
        )
        events = _events(reply)
        for event in events:
            if event["data"] and ("result" in event["data"] or "error" in event["data"]):
                return event["data"]  # type: ignore[no-any-return]
        last = ([e["id"] for e in events if e["id"]] or [last])[-1]
    raise AssertionError("the resumed stream never delivered the result")


def test_concurrent_elicitation_answers_leave_no_task_stuck(aws: EmbeddedAws) -> None:
    init = _server_call(
        {
            "jsonrpc": "2.0",
            "id": 0,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-11-25",
                "capabilities": {"tasks": {}, "elicitation": {}},
                "clientInfo": {"name": "racer", "version": "0"},
            },
        }
    )
    session = init.headers["mcp-session-id"]
    call = {"name": "multi_input", "arguments": {}, "task": {}}
    task_ids = [
        _server_call(
            {"jsonrpc": "2.0", "id": i + 1, "method": "tools/call", "params": call},
            {"mcp-session-id": session},
        ).body["result"]["task"]["taskId"]
        for i in range(TASKS)
    ]

    def answer(message_id: str, value: dict[str, Any]) -> Callable[[], Any]:
        return lambda: _server_call({"jsonrpc": "2.0", "id": message_id, "result": value}).status

    def ask_answer_and_wait(task_id: str) -> dict[str, Any]:
        asked, last = _result_stream_2025(session, task_id)
        by_key = {a["id"].rsplit(":", 1)[1]: a["id"] for a in asked}
        statuses = _together(answer(by_key["name"], NAME), answer(by_key["color"], COLOR))
        assert statuses == [202, 202]
        return _result_after(session, last)

    with ThreadPoolExecutor(max_workers=8) as pool:
        delivered = list(pool.map(ask_answer_and_wait, task_ids))
    texts = [m.get("result", {}).get("content", [{}])[0].get("text") for m in delivered]
    verdict = _verdict("2025 elicitation answers", task_ids)
    assert verdict["stuck"] == [] and verdict["completed"] == TASKS, verdict
    assert texts == [EXPECTED] * TASKS, json.dumps(delivered[:2])[:500]


@pytest.fixture(autouse=True)
def _quiet_streams(monkeypatch: pytest.MonkeyPatch) -> None:
    # Streams that wait on a working task return within 0.3 s; the threads resume them.
    monkeypatch.setenv("STREAM_MAX_SECONDS", "0.3")
    wiring.reset()
