"""Resources on moto: a result too large for one response is linked and read back in
parts from S3 (ranged GETs), in both eras; subscriptions kept in DynamoDB."""

from __future__ import annotations

import json
from typing import Any

import boto3
import pytest
from starlette.testclient import TestClient

import tests.fixture_tools as fixture_tools
from taskgate import wiring
from taskgate.adapters.dynamodb_sessions import DynamoDBSessionStore
from taskgate.clock import now_ms
from taskgate.domain.sessions import Session
from taskgate.local.runtime import RESULT_BUCKET, EmbeddedAws
from tests.integration.conftest import owner_client
from tests.mcp_client import Legacy, Mcp
from tests.sse import result_over_streams

assert fixture_tools  # registers big_result

LIMIT = 65_536


def _join(client: Mcp | Legacy, result: dict[str, Any]) -> str:
    links = [c["uri"] for c in result["content"] if c["type"] == "resource_link"]
    return "".join(client.result("resources/read", {"uri": uri})["contents"][0]["text"] for uri in links)


@pytest.fixture
def small_responses(aws: EmbeddedAws, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MAX_RESULT_RESPONSE_BYTES", str(LIMIT))
    wiring.reset()


def test_a_large_result_is_read_in_parts_from_s3(small_responses: None, http: TestClient) -> None:
    alice, bob = owner_client("alice"), owner_client("bob")
    task_id = alice.call("big_result", {"kilobytes": 300})["taskId"]
    done = alice.wait(task_id, timeout=30)
    assert done["status"] == "completed"
    links = [c for c in done["result"]["content"] if c["type"] == "resource_link"]
    stored = (
        boto3.client("s3", region_name="us-east-1")
        .get_object(Bucket=RESULT_BUCKET, Key=f"results/{task_id}.json")["Body"]
        .read()
    )
    assert len(links) == -(-len(stored) // (LIMIT // 2))
    joined = _join(alice, done["result"])
    assert joined.encode() == stored
    expected = fixture_tools.big_result(fixture_tools.BigResultInput(kilobytes=300), None)  # type: ignore[arg-type]
    assert json.loads(joined)["content"][0]["text"] == expected
    # Another owner reads nothing, exactly as if the task did not exist.
    first = links[0]["uri"]
    assert bob.request("resources/read", {"uri": first})["error"] == {
        "code": -32602,
        "message": "Resource not found",
        "data": {"uri": first},
    }
    past = f"taskgate://tasks/{task_id}/result/{len(links) + 1}"
    assert alice.request("resources/read", {"uri": past})["error"]["data"] == {"uri": past}
    # The 2025 era's tasks/result links the same parts.
    legacy = Legacy(http)
    legacy.initialize()
    anonymous_task = legacy.result(
        "tools/call", {"name": "big_result", "arguments": {"kilobytes": 100}, "task": {}}
    )["task"]["taskId"]
    # Waited for over the tasks/result stream: the links are what the stream delivers.
    response, _ = result_over_streams(legacy, anonymous_task)
    result = response["result"]
    assert json.loads(_join(legacy, result))["content"][0]["text"] == fixture_tools.big_result(
        fixture_tools.BigResultInput(kilobytes=100),
        None,  # type: ignore[arg-type]
    )


def test_subscriptions_live_in_the_table(aws: EmbeddedAws) -> None:
    ddb = boto3.client("dynamodb", region_name="us-east-1")
    store = DynamoDBSessionStore(lambda: ddb, aws.table_name, now_ms)
    expires = now_ms() + 60_000
    store.create_session(Session("s1", "alice", "2025-11-25", expires))
    assert store.subscriptions("s1") == {}
    assert store.subscribe("s1", "a://1", "", expires_at_ms=expires, limit=2)
    assert store.subscribe("s1", "a://2", "v1", expires_at_ms=expires, limit=2)
    assert not store.subscribe("s1", "a://3", "", expires_at_ms=expires, limit=2)
    assert store.subscribe("s1", "a://2", "v2", expires_at_ms=expires, limit=2)  # a refresh
    assert store.subscriptions("s1") == {"a://1": "", "a://2": "v2"}
    # Only one of two streams reporting the same change wins.
    assert store.advance_subscription("s1", "a://1", "", "done")
    assert not store.advance_subscription("s1", "a://1", "", "done")
    assert not store.advance_subscription("s1", "a://9", "", "x")
    store.unsubscribe("s1", "a://1")
    store.unsubscribe("s1", "a://1")
    store.unsubscribe("nobody", "a://1")
    assert store.subscriptions("s1") == {"a://2": "v2"}
    long_uri = "weird://" + "\u00e9/ #?" * 500
    assert store.subscribe("s1", long_uri, "", expires_at_ms=expires, limit=3)
    assert long_uri in store.subscriptions("s1")
    store.delete_session("s1")
    assert store.subscriptions("s1") == {}
    # Subscriptions expire with the session, whenever DynamoDB gets round to deleting them.
    store.subscribe("s2", "a://1", "", expires_at_ms=now_ms() - 2_000, limit=2)
    assert store.subscriptions("s2") == {}
