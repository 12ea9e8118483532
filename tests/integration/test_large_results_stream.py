"""Large results on a 2025-11-25 ``tasks/result`` stream under DynamoDB's real 400 KB
item limit (moto enforces it) and the real state machine (issue 12, item 2).

A client already waiting on ``tasks/result`` when a 1 MB result of non-ASCII text
arrives gets it whole: on the stream that was open, and again when it resumes
from before it (the log keeps a marker; the message is rebuilt from the task row
and S3). A request id too large to keep is refused before a task exists.
"""

from __future__ import annotations

from typing import Any

import pytest
from starlette.testclient import TestClient

from taskgate import wiring
from taskgate.local.runtime import RESULT_BUCKET, EmbeddedAws
from tests.fixture_tools import unicode_text
from tests.integration.conftest import table_items
from tests.mcp_client import Legacy, parse_sse
from tests.sse import result_over_streams

MEGABYTE_TEXT = unicode_text(1024)


@pytest.fixture
def legacy(http: TestClient) -> Legacy:
    client = Legacy(http)
    client.initialize()
    return client


def _responses(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [e["data"] for e in events if e["data"] and ("result" in e["data"] or "error" in e["data"])]


def _largest_stream_item(aws: EmbeddedAws) -> int:
    items = [i for i in table_items(aws) if i["taskId"]["S"].startswith("stream#")]
    return max(len(str(i)) for i in items)


def test_a_megabyte_of_non_ascii_reaches_a_waiting_stream_whole(legacy: Legacy, aws: EmbeddedAws) -> None:
    task_id = legacy.result(
        "tools/call", {"name": "unicode_result", "arguments": {"kilobytes": 1024, "seconds": 1}, "task": {}}
    )["task"]["taskId"]
    assert legacy.result("tasks/get", {"taskId": task_id})["status"] == "working"
    # The stream holds on (STREAM_MAX_SECONDS=1.5 here) and resumes until the result.
    message, streams = result_over_streams(legacy, task_id)
    assert message["result"]["content"][0]["text"] == MEGABYTE_TEXT
    assert message["result"]["_meta"]["io.modelcontextprotocol/related-task"] == {"taskId": task_id}
    # Every stream and resume answered 200; a lost stream replays the response whole.
    stream_id = next(e["id"] for e in streams[-1] if e["id"]).split(":")[0]
    replay = legacy.resume(f"{stream_id}:0")
    assert replay.status_code == 200
    assert _responses(parse_sse(replay.text)) == [message]
    assert _largest_stream_item(aws) < 2_000


def test_a_megabyte_of_non_ascii_across_a_resume_with_short_streams(
    http: TestClient, aws: EmbeddedAws, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The default: each stream reads once; the result comes on a reconnect."""
    monkeypatch.setenv("STREAM_MAX_SECONDS", "0")
    wiring.reset()
    legacy = Legacy(http)
    legacy.initialize()
    task_id = legacy.result(
        "tools/call", {"name": "unicode_result", "arguments": {"kilobytes": 1024, "seconds": 1}, "task": {}}
    )["task"]["taskId"]
    message, streams = result_over_streams(legacy, task_id, limit=200)
    assert len(streams) >= 2
    assert message["result"]["content"][0]["text"] == MEGABYTE_TEXT


def test_a_450_kb_request_id_is_refused_and_orphans_no_task(legacy: Legacy, aws: EmbeddedAws) -> None:
    resp = legacy.http.post(
        "/mcp",
        json={
            "jsonrpc": "2.0",
            "id": "i" * 450_000,
            "method": "tools/call",
            "params": {"name": "confirm_delete", "arguments": {"filename": "a"}},
        },
        headers=legacy.headers(),
    )
    assert resp.status_code == 200
    error = resp.json()["error"]
    assert error["code"] == -32602 and error["data"] == {"limit": 1024}
    assert [i for i in table_items(aws) if "#" not in i["taskId"]["S"]] == []


def test_a_plain_calls_large_response_is_logged_in_the_bucket_and_replays(
    legacy: Legacy, aws: EmbeddedAws
) -> None:
    """A plain 2025 call's response past 16 KiB is kept for its stream's replays in the result
    bucket (results/streams/...), written by ApiFunction itself: its policy must allow it."""
    import boto3

    from tests.integration.conftest import known_quick
    from tests.sse import over_streams

    known_quick("big_text")  # run inline: its response is the stream's own, logged for replays
    message, streams = over_streams(
        legacy, "tools/call", {"name": "big_text", "arguments": {"kilobytes": 40}}
    )
    assert len(message["result"]["content"][0]["text"]) == 40 * 1024
    keys = [
        o["Key"]
        for o in boto3.client("s3", region_name="us-east-1")
        .list_objects_v2(Bucket=RESULT_BUCKET)
        .get("Contents", [])
    ]
    assert any(k.startswith("results/streams/") for k in keys), keys
    stream_id = next(e["id"] for s in streams for e in s if e["id"]).split(":")[0]
    replay = legacy.resume(f"{stream_id}:0")
    assert replay.status_code == 200 and _responses(parse_sse(replay.text)) == [message]
