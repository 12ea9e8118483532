"""Plain calls of long tools on moto with the real state machine: the hidden task's stream
in pieces (progress while the tool runs, then the result), the cancel that stops the
execution, the call key and its tombstone in DynamoDB, a held 2026 call, and the
conditional writes that watch for a caller who hung up."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from starlette.testclient import TestClient

from taskgate import wiring
from taskgate.domain.ending import HUNG_UP
from taskgate.domain.errors import TransitionRejected
from taskgate.domain.model import TaskRecord, TaskStatus
from taskgate.domain.progress import ProgressReport
from taskgate.domain.service import new_task_id
from taskgate.local.runtime import EmbeddedAws
from tests.mcp_client import Legacy, envelope, headers_for, parse_sse

PIECE_SECONDS = 2.0


@pytest.fixture
def pieces(aws: EmbeddedAws, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    # Short pieces, so that a 12-second tool takes several: resumption is what is tested.
    monkeypatch.setenv("CALL_PIECE_SECONDS", str(PIECE_SECONDS))
    monkeypatch.setenv("HANG_UP_SECONDS", "30")
    wiring.reset()
    yield
    wiring.reset()


@pytest.fixture
def legacy(pieces: None, http: TestClient) -> Legacy:
    client = Legacy(http)
    client.initialize()
    return client


def _call(legacy: Legacy, msg_id: int, seconds: float) -> Any:
    body = {
        "jsonrpc": "2.0",
        "id": msg_id,
        "method": "tools/call",
        "params": {
            "name": "slow_compute",
            "arguments": {"seconds": seconds, "label": "it"},
            "_meta": {"progressToken": "tok"},
        },
    }
    return legacy.http.post("/mcp", json=body, headers=legacy.headers())


def _row(aws: EmbeddedAws, task_id: str) -> dict[str, Any]:
    ddb = boto3.client("dynamodb", region_name="us-east-1")
    return ddb.get_item(TableName=aws.table_name, Key={"taskId": {"S": task_id}}, ConsistentRead=True)["Item"]  # type: ignore[no-any-return]


def _tasks(aws: EmbeddedAws) -> list[dict[str, Any]]:
    ddb = boto3.client("dynamodb", region_name="us-east-1")
    items = ddb.scan(TableName=aws.table_name)["Items"]
    return [i for i in items if "#" not in i["taskId"]["S"]]


def test_a_long_plain_call_comes_in_pieces_with_progress_while_it_runs(
    legacy: Legacy, aws: EmbeddedAws
) -> None:
    started = time.monotonic()
    resp = _call(legacy, 1, 12)
    pieces: list[tuple[float, list[dict[str, Any]]]] = []
    answer = None
    for _ in range(30):
        events = parse_sse(resp.text)
        pieces.append((time.monotonic() - started, events))
        answer = next((e["data"] for e in events if e["data"] and e["data"].get("id") == 1), None)
        if answer is not None:
            break
        last = [e["id"] for e in events if e["id"]][-1]
        resp = legacy.resume(last)
    assert answer is not None and answer["result"]["content"][0]["text"] == "it finished after 12 seconds"
    # Several pieces, none longer than a piece (and a read), every one ending with the
    # caller told when to come back.
    assert len(pieces) >= 3
    durations = [b - a for (a, _), (b, _) in zip([(0.0, []), *pieces[:-1]], pieces, strict=True)]
    assert max(durations) < PIECE_SECONDS + 2.5, durations
    # Progress with the tool's numbers arrived in pieces before the last one: while it ran.
    early = [
        e["data"]["params"]
        for _, events in pieces[:-1]
        for e in events
        if e["data"] and e["data"].get("method") == "notifications/progress"
    ]
    assert early and all(p["total"] == 12 and 0 <= p["progress"] < 12 for p in early), early
    (task,) = _tasks(aws)
    assert task["status"]["S"] == "completed" and "watchedUntil" in task


def test_notifications_cancelled_stops_the_hidden_task_and_its_execution(
    legacy: Legacy, aws: EmbeddedAws
) -> None:
    resp = _call(legacy, 2, 30)
    assert resp.headers["content-type"].startswith("text/event-stream")
    (task,) = _tasks(aws)
    task_id = task["taskId"]["S"]
    message = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 2}}
    cancelled_at = time.monotonic()
    assert legacy.http.post("/mcp", json=message, headers=legacy.headers()).status_code == 202
    sfn = boto3.client("stepfunctions", region_name="us-east-1")
    arn = aws.state_machine_arn.replace(":stateMachine:", ":execution:") + f":{task_id}"
    deadline = cancelled_at + 4
    while sfn.describe_execution(executionArn=arn)["status"] == "RUNNING":
        assert time.monotonic() < deadline, "the execution still runs 4 s after the cancel"
        time.sleep(0.1)
    assert _row(aws, task_id)["status"]["S"] == "cancelled"
    # The tool saw it too (its next progress write was refused): no result was ever written.
    time.sleep(1)
    assert "result" not in _row(aws, task_id)


def test_the_call_key_and_its_tombstone_live_in_the_table(legacy: Legacy, aws: EmbeddedAws) -> None:
    # A cancel before the call: the tombstone stops it before any task exists.
    message = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 3}}
    assert legacy.http.post("/mcp", json=message, headers=legacy.headers()).status_code == 202
    refused = _call(legacy, 3, 12)
    assert "cancelled" in refused.json()["error"]["message"]
    assert _tasks(aws) == []
    # A retry of a call finds the task the first one started.
    first = _call(legacy, 4, 12)
    second = _call(legacy, 4, 12)
    assert first.status_code == second.status_code == 200
    (task,) = _tasks(aws)
    calls = [
        i
        for i in boto3.client("dynamodb", region_name="us-east-1").scan(TableName=aws.table_name)["Items"]
        if i["taskId"]["S"].startswith("call#")
    ]
    assert {c.get("callTaskId", {}).get("S") for c in calls} == {None, task["taskId"]["S"]}


def test_the_stores_writes_refuse_a_caller_who_hung_up(pieces: None, aws: EmbeddedAws) -> None:
    tasks = wiring.root().tasks
    store = wiring.root().store
    # A row with no execution behind it: only the writes under test touch it.
    now = int(time.time() * 1000)
    record = TaskRecord(
        task_id=new_task_id(),
        owner="ann",
        tool="slow_compute",
        arguments={"seconds": 30},
        status=TaskStatus.WORKING,
        created_at_ms=now,
        last_updated_at_ms=now,
        ttl_ms=60_000,
        poll_interval_ms=1_000,
        expires_at_ms=now + 60_000,
        retention_ms=60_000,
        watched_until_ms=now + 1_000,
    )
    store.create(record)
    report = ProgressReport("m", None, 1, (), 0)
    later = record.created_at_ms + 5_000
    with pytest.raises(TransitionRejected):
        store.report_progress(record.task_id, report, later, record.kept_alive(later))
    # The end of a step is written whoever waits for it.
    store.report_progress(record.task_id, report, later, record.kept_alive(later), check_caller=False)
    # A resume moves the watch on; a hand-over ends it.
    assert tasks.watch(record.task_id, 60_000)
    store.report_progress(record.task_id, report, later, record.kept_alive(later))
    assert tasks.watch(record.task_id, None)
    assert "watchedUntil" not in _row(aws, record.task_id)
    # The sweeper reads the watch from the index's rows and cancels a task nobody came back for.
    assert tasks.watch(record.task_id, 1)
    time.sleep(0.01)
    report_of_sweep = wiring.root().sweeper.sweep()
    assert report_of_sweep.cancelled == {record.task_id: HUNG_UP}
    row = tasks.get("ann", record.task_id)
    assert row.status is TaskStatus.CANCELLED and row.status_message == HUNG_UP


def test_a_2026_plain_call_is_held_and_streamed_where_the_front_streams(
    aws: EmbeddedAws, monkeypatch: pytest.MonkeyPatch
) -> None:
    from taskgate.http_app import create_app

    monkeypatch.setenv("FRONT_STREAMING", "true")
    monkeypatch.setenv("FRONT_TIMEOUT_SECONDS", "900")
    wiring.reset()
    app = create_app(lambda: wiring.root().server, anonymous_owner="anonymous", max_body_bytes=1_048_576)
    params = {"name": "slow_compute", "arguments": {"seconds": 12, "label": "held"}}
    body = envelope("tools/call", params, 1, tasks=False)
    body["params"]["_meta"]["progressToken"] = "h"
    with TestClient(app, base_url="http://localhost") as http:
        resp = http.post("/mcp", content=json.dumps(body), headers=headers_for("tools/call", params))
    wiring.reset()
    assert resp.headers["content-type"].startswith("text/event-stream")
    messages = [json.loads(line[6:]) for line in resp.text.splitlines() if line.startswith("data: ")]
    progress = [m["params"] for m in messages if m.get("method") == "notifications/progress"]
    assert len(progress) >= 5 and progress[-1]["total"] == 12
    final = messages[-1]
    assert final["result"]["resultType"] == "complete"
    assert final["result"]["content"][0]["text"] == "held finished after 12 seconds"


def test_a_call_key_is_claimed_once_until_it_expires(pieces: None, aws: EmbeddedAws) -> None:
    from taskgate.domain.calls import CallClaim

    store = wiring.root().sessions
    now = int(time.time() * 1000)
    assert store.claim_call("k1", "task-a", now + 60_000) is None
    # A second claim (a retry) finds the first; a cancel marks it and names its task.
    assert store.claim_call("k1", "task-b", now + 60_000) == CallClaim("task-a")
    assert store.cancel_call("k1", now + 60_000) == CallClaim("task-a", cancelled=True)
    assert store.find_call("k1") == CallClaim("task-a", cancelled=True)
    # A cancel first leaves a tombstone a later claim finds.
    assert store.cancel_call("k2", now + 60_000) == CallClaim(None, cancelled=True)
    assert store.claim_call("k2", "task-c", now + 60_000) == CallClaim(None, cancelled=True)
    # An expired claim (a 2026 key past its retry window) is no claim any more.
    assert store.claim_call("k3", "task-d", now - 1_000) is None
    assert store.claim_call("k3", "task-e", now + 60_000) is None
    assert store.find_call("k3") == CallClaim("task-e")
    # The claim keeps which call it was (its tool and arguments' digest: red team L3).
    assert store.claim_call("k4", "task-f", now + 60_000, "digest-1") is None
    assert store.claim_call("k4", "task-g", now + 60_000, "digest-2") == CallClaim(
        "task-f", digest="digest-1"
    )


def test_an_owners_places_are_leases_in_the_table(pieces: None, aws: EmbeddedAws) -> None:
    """Red team L2: the places held calls take (domain/holds.py) are conditional writes on
    DynamoDB: one holder a place, a renewal by its own holder, free once the lease runs out
    or its holder leaves."""
    store = wiring.root().sessions
    now = int(time.time() * 1000)
    assert store.take_place("p#0", "h1", until_ms=now + 60_000, now_ms=now)
    assert not store.take_place("p#0", "h2", until_ms=now + 60_000, now_ms=now)
    assert store.take_place("p#0", "h1", until_ms=now + 90_000, now_ms=now)  # a renewal
    assert store.take_place("p#0", "h2", until_ms=now + 200_000, now_ms=now + 90_000)  # run out
    store.leave_place("p#0", "h1")  # not its holder any more: nothing happens
    assert not store.take_place("p#0", "h3", until_ms=now + 100_000, now_ms=now + 95_000)
    store.leave_place("p#0", "h2")
    assert store.take_place("p#0", "h3", until_ms=now + 100_000, now_ms=now + 95_000)
