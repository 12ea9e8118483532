"""Limits a deployer configures: each enforced with a clear error and nothing stored,
and results larger than a DynamoDB item round-tripped through S3."""

from __future__ import annotations

import json
import time

import boto3
import pytest

import tests.fixture_tools as fixture_tools
from taskgate import wiring
from taskgate.clock import ms_from_iso, now_ms
from taskgate.local.runtime import RESULT_BUCKET, EmbeddedAws
from tests.integration.conftest import active_ids, owner_client, table_items
from tests.mcp_client import Legacy, Mcp

assert fixture_tools  # registers big_result and quiet_work


def _tasks(aws: EmbeddedAws) -> list[dict]:
    return [i for i in table_items(aws) if "#" not in i["taskId"]["S"]]


def test_active_task_limit_per_owner(aws: EmbeddedAws, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MAX_ACTIVE_TASKS_PER_OWNER", "2")
    wiring.reset()
    alice, bob = owner_client("alice"), owner_client("bob")
    first = [alice.call("slow_compute", {"seconds": 30})["taskId"] for _ in range(2)]
    refused = alice.request("tools/call", {"name": "slow_compute", "arguments": {"seconds": 30}})
    assert refused["error"]["code"] == -32000
    assert refused["error"]["data"] == {"limit": 2}
    assert "Too many active tasks" in refused["error"]["message"]
    assert len(_tasks(aws)) == 2  # nothing stored for the refused call
    # Another owner has their own budget; a finished task frees a slot.
    assert bob.call("slow_compute", {"seconds": 0})["resultType"] == "task"
    alice.result("tasks/cancel", {"taskId": first[0]})
    assert alice.call("slow_compute", {"seconds": 0})["resultType"] == "task"
    for task_id in first[1:]:
        alice.result("tasks/cancel", {"taskId": task_id})


def test_argument_size_limit(mcp: Mcp, aws: EmbeddedAws, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MAX_ARGUMENT_BYTES", "1000")
    wiring.reset()
    body = mcp.request(
        "tools/call", {"name": "slow_compute", "arguments": {"seconds": 0, "label": "x" * 2000}}
    )
    assert body["error"]["code"] == -32602
    assert body["error"]["data"] == {"limit": 1000}
    assert _tasks(aws) == []


def test_input_response_size_limit(mcp: Mcp, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MAX_INPUT_RESPONSE_BYTES", "500")
    wiring.reset()
    task_id = mcp.call("confirm_delete", {"filename": "a"})["taskId"]
    mcp.wait(task_id, {"input_required"})
    huge = {"confirm_delete": {"action": "accept", "content": {"confirm": True, "note": "n" * 1000}}}
    body = mcp.request("tasks/update", {"taskId": task_id, "inputResponses": huge})
    assert body["error"]["code"] == -32602
    assert mcp.get(task_id)["status"] == "input_required"  # the oversized answer changed nothing
    mcp.result(
        "tasks/update",
        {
            "taskId": task_id,
            "inputResponses": {"confirm_delete": {"action": "accept", "content": {"confirm": True}}},
        },
    )
    assert mcp.wait(task_id)["status"] == "completed"


def test_a_one_megabyte_result_round_trips_through_s3(mcp: Mcp, http, aws: EmbeddedAws) -> None:  # type: ignore[no-untyped-def]
    expected = fixture_tools.big_result(fixture_tools.BigResultInput(kilobytes=1024), None)  # type: ignore[arg-type]
    task_id = mcp.call("big_result", {"kilobytes": 1024})["taskId"]
    done = mcp.wait(task_id, timeout=30)
    assert done["status"] == "completed"
    assert done["result"]["content"][0]["text"] == expected
    # The row holds a reference, not the megabyte; the object is in the result bucket.
    row = next(i for i in _tasks(aws) if i["taskId"]["S"] == task_id)
    assert "result" not in row and row["resultRef"]["S"] == f"results/{task_id}.json"
    stored = boto3.client("s3", region_name="us-east-1").get_object(
        Bucket=RESULT_BUCKET, Key=row["resultRef"]["S"]
    )
    assert json.loads(stored["Body"].read())["content"][0]["text"] == expected
    # Tagged with the shortest retention class that outlives the task's row (1 h TTL: 1 day).
    tags = boto3.client("s3", region_name="us-east-1").get_object_tagging(
        Bucket=RESULT_BUCKET, Key=row["resultRef"]["S"]
    )["TagSet"]
    assert tags == [{"Key": "retention", "Value": "1d"}]
    # And the 2025 era's tasks/result returns it whole too.
    legacy = Legacy(http)
    legacy.initialize()
    result = legacy.result("tasks/result", {"taskId": task_id})
    assert result["content"][0]["text"] == expected


def test_a_result_whose_object_is_gone_is_a_clear_permanent_error(mcp: Mcp, http, aws: EmbeddedAws) -> None:  # type: ignore[no-untyped-def]
    task_id = mcp.call("big_result", {"kilobytes": 512})["taskId"]
    assert mcp.wait(task_id, {"completed"}, timeout=30)
    boto3.client("s3", region_name="us-east-1").delete_object(
        Bucket=RESULT_BUCKET, Key=f"results/{task_id}.json"
    )
    reply = mcp.request("tasks/get", {"taskId": task_id})
    gone = {"code": -32603, "message": "The task's result is no longer stored; it cannot be returned"}
    assert reply["error"] == gone and reply["_http_status"] != 503
    legacy = Legacy(http)
    legacy.initialize()
    resp = legacy.post("tasks/result", {"taskId": task_id})
    assert resp.status_code != 503 and "retry-after" not in resp.headers
    assert resp.json()["error"] == gone


def test_a_task_that_keeps_working_outlives_its_ttl(
    mcp: Mcp, aws: EmbeddedAws, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DEFAULT_TTL_MS", "2000")
    monkeypatch.setenv("POLL_INTERVAL_MS", "200")
    wiring.reset()
    created = mcp.call("slow_compute", {"seconds": 4, "label": "long"})
    assert created["ttlMs"] == 2000
    # Wait for the moment the requested ttl has run out; the tool reports progress all along.
    first_expiry_ms = ms_from_iso(created["createdAt"]) + 2000
    working = mcp.get(created["taskId"])
    while now_ms() <= first_expiry_ms + 500:
        working = mcp.get(created["taskId"])
        assert working["status"] == "working", working
        time.sleep(0.1)
    assert working["ttlMs"] > 2500  # the effective ttl grew with the work
    done = mcp.wait(created["taskId"])
    assert done["status"] == "completed"
    # Retention after the end: ttl again, from the terminal write.
    row = next(i for i in _tasks(aws) if i["taskId"]["S"] == created["taskId"])
    assert int(row["expiresAt"]["N"]) * 1000 >= int(time.time() * 1000) + 1000
    assert "activeOwner" not in row  # gone from the live-task index


def test_the_active_index_holds_exactly_the_live_tasks(mcp: Mcp, aws: EmbeddedAws) -> None:
    running = mcp.call("slow_compute", {"seconds": 30})["taskId"]
    finished = mcp.call("slow_compute", {"seconds": 0})["taskId"]
    parked = mcp.call("confirm_delete", {"filename": "x"})["taskId"]
    mcp.wait(finished)
    mcp.wait(parked, {"input_required"})
    assert sorted(active_ids()) == sorted([running, parked])
    mcp.result("tasks/cancel", {"taskId": running})
    mcp.result("tasks/cancel", {"taskId": parked})
    assert active_ids() == []
