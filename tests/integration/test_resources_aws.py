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
from taskgate.domain.sessions import Session, Subscribed
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
    bounds = {"expires_at_ms": expires, "limit": 2, "max_uri_bytes": 1000}
    store.create_session(Session("s1", "alice", "2025-11-25", expires))
    assert store.subscriptions("s1") == {}
    assert store.subscribe("s1", "a://1", "", **bounds) is Subscribed.YES
    assert store.subscribe("s1", "a://2", "v1", **bounds) is Subscribed.YES
    assert store.subscribe("s1", "a://3", "", **bounds) is Subscribed.TOO_MANY
    assert store.subscribe("s1", "a://2", "v2", **bounds) is Subscribed.YES  # a refresh
    assert store.subscriptions("s1") == {"a://1": "", "a://2": "v2"}
    # Only one of two streams reporting the same change wins.
    assert store.advance_subscription("s1", "a://1", "", "done")
    assert not store.advance_subscription("s1", "a://1", "", "done")
    assert not store.advance_subscription("s1", "a://9", "", "x")
    store.unsubscribe("s1", "a://1")
    store.unsubscribe("s1", "a://1")
    store.unsubscribe("nobody", "a://1")
    assert store.subscriptions("s1") == {"a://2": "v2"}
    long_uri = "weird://" + "\u00e9/ #?" * 100  # 608 bytes
    assert store.subscribe("s1", long_uri, "", **{**bounds, "limit": 3, "max_uri_bytes": 600}) is (
        Subscribed.TOO_LARGE  # alone
    )
    assert store.subscribe("s1", long_uri, "", **{**bounds, "limit": 3, "max_uri_bytes": 612}) is (
        Subscribed.TOO_LARGE  # with "a://2"
    )
    bigger = {**bounds, "limit": 3, "max_uri_bytes": 5 + 608}  # "a://2" and the long one, exactly
    assert store.subscribe("s1", long_uri, "", **bigger) is Subscribed.YES
    assert long_uri in store.subscriptions("s1")
    assert store.subscribe("s1", "b://", "", **{**bigger, "limit": 9}) is Subscribed.TOO_LARGE
    store.unsubscribe("s1", long_uri)  # gives its bytes back
    assert store.subscribe("s1", "b://", "", **{**bigger, "limit": 9}) is Subscribed.YES
    store.delete_session("s1")
    assert store.subscriptions("s1") == {}
    # Subscriptions expire with the session, whenever DynamoDB gets round to deleting them.
    store.subscribe("s2", "a://1", "", **{**bounds, "expires_at_ms": now_ms() - 2_000})
    assert store.subscriptions("s2") == {}


def test_an_item_written_before_bytes_were_counted_is_counted_once(aws: EmbeddedAws) -> None:
    """Sessions older than the byte bound have a subscriptions item without ``subsBytes``:
    the first subscribe counts what it holds, and the bound applies from there."""
    ddb = boto3.client("dynamodb", region_name="us-east-1")
    store = DynamoDBSessionStore(lambda: ddb, aws.table_name, now_ms)
    expires = now_ms() + 60_000
    entry = {"M": {"u": {"S": "a://" + "x" * 600}, "v": {"S": ""}}}
    ddb.put_item(
        TableName=aws.table_name,
        Item={
            "taskId": {"S": "subs#old"},
            "kind": {"S": "subscriptions"},
            "subs": {"M": {"u0": entry}},
            "expiresAt": {"N": str(expires // 1000 + 1)},
        },
    )
    bounds = {"expires_at_ms": expires, "limit": 10, "max_uri_bytes": 1000}
    assert store.subscribe("old", "b://" + "y" * 500, "", **bounds) is Subscribed.TOO_LARGE
    assert store.subscribe("old", "b://" + "y" * 300, "", **bounds) is Subscribed.YES
    item = ddb.get_item(TableName=aws.table_name, Key={"taskId": {"S": "subs#old"}})["Item"]
    assert item["subsBytes"] == {"N": str(604 + 304)}


SUBSCRIBED_URI_BYTES = 65_536  # docs/reference/limits.md


def test_subscriptions_with_the_longest_uris_never_reach_dynamodbs_item_limit(http: TestClient) -> None:
    """Issue 21 (N4), on DynamoDB (moto enforces its 400 KB item): the 49th subscribe with
    an 8 KiB URI was -32603 "AWS refused the request (ValidationException)"."""
    legacy = Legacy(http)
    legacy.initialize()
    errors = []
    for i in range(60):
        head = f"test://template/{i}-"
        uri = head + "x" * (8192 - len(head) - len("/data")) + "/data"
        body = legacy.request("resources/subscribe", {"uri": uri})
        if "error" in body:
            errors.append(body["error"])
    assert errors, "60 subscriptions of 8 KiB each were all accepted"
    assert {e["code"] for e in errors} == {-32602}, errors[0]
    assert errors[0]["data"] == {"limit": SUBSCRIBED_URI_BYTES}
    assert len(errors) == 60 - SUBSCRIBED_URI_BYTES // 8192
