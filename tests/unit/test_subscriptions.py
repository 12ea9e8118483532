"""2025-11-25 resources/subscribe and unsubscribe on the fakes: subscriptions belong
to the session, and the session's open streams report updates of subscribed resources."""

from __future__ import annotations

from typing import Any

from starlette.testclient import TestClient

from tests.fakes import World
from tests.mcp_client import Legacy
from tests.sse import result_over_streams

ACCEPT = {"action": "accept", "content": {"confirm": True}}


def _task(legacy: Legacy, name: str, arguments: dict[str, Any]) -> str:
    created = legacy.result("tools/call", {"name": name, "arguments": arguments, "task": {}})
    return created["task"]["taskId"]  # type: ignore[no-any-return]


def _updates(streams: list[list[dict[str, Any]]]) -> list[str]:
    return [
        e["data"]["params"]["uri"]
        for events in streams
        for e in events
        if e["data"] and e["data"].get("method") == "notifications/resources/updated"
    ]


def test_subscribe_and_unsubscribe_answer_empty_results(legacy: Legacy, world: World) -> None:
    assert legacy.result("resources/subscribe", {"uri": "test://watched-resource"}) == {}
    assert legacy.session_id is not None
    assert list(world.sessions.subscriptions(legacy.session_id)) == ["test://watched-resource"]
    assert legacy.result("resources/subscribe", {"uri": "test://watched-resource"}) == {}  # idempotent
    assert legacy.result("resources/unsubscribe", {"uri": "test://watched-resource"}) == {}
    assert legacy.result("resources/unsubscribe", {"uri": "test://watched-resource"}) == {}
    assert world.sessions.subscriptions(legacy.session_id) == {}


def test_subscribing_needs_a_known_resource_and_a_session(legacy: Legacy, http: TestClient) -> None:
    body = legacy.request("resources/subscribe", {"uri": "test://nope"})
    assert body["error"] == {"code": -32002, "message": "Resource not found", "data": {"uri": "test://nope"}}
    # A template's instances may be subscribed to before they exist (a result not ready yet).
    assert legacy.result("resources/subscribe", {"uri": "taskgate://tasks/abc/result/1"}) == {}
    sessionless = Legacy(http)
    resp = sessionless.post("resources/subscribe", {"uri": "test://watched-resource"})
    assert resp.json()["error"]["code"] == -32600
    assert "Mcp-Session-Id" in resp.json()["error"]["message"]


def test_a_session_holds_at_most_100_subscriptions(legacy: Legacy, world: World) -> None:
    for i in range(100):
        legacy.result("resources/subscribe", {"uri": f"test://template/{i}/data"})
    refused = legacy.request("resources/subscribe", {"uri": "test://template/100/data"})
    assert refused["error"]["code"] == -32602 and refused["error"]["data"] == {"limit": 100}
    # Refreshing one it holds is not a new one.
    assert legacy.result("resources/subscribe", {"uri": "test://template/5/data"}) == {}


def test_deleting_the_session_drops_its_subscriptions(legacy: Legacy, http: TestClient, world: World) -> None:
    legacy.result("resources/subscribe", {"uri": "test://watched-resource"})
    session_id = legacy.session_id
    assert session_id is not None
    assert http.delete("/mcp", headers=legacy.headers()).status_code == 200
    assert world.sessions.subscriptions(session_id) == {}


def test_an_open_stream_reports_an_update_of_a_subscribed_resource(legacy: Legacy, world: World) -> None:
    watched = _task(legacy, "slow_compute", {"seconds": 0, "label": "watched"})
    uri = f"taskgate://tasks/{watched}/result/1"
    legacy.result("resources/subscribe", {"uri": uri})
    # Wait on another task's result: the watched task finishes meanwhile.
    waiting = _task(legacy, "confirm_delete", {"filename": "a.txt"})
    response, streams = result_over_streams(legacy, waiting, ACCEPT)
    assert response["result"]["content"][0]["text"] == "Deleted a.txt"
    assert _updates(streams) == [uri]
    # Reported once: the session now knows the current version.
    again = _task(legacy, "confirm_delete", {"filename": "b.txt"})
    _, streams = result_over_streams(legacy, again, ACCEPT)
    assert _updates(streams) == []


def test_no_update_after_unsubscribing_or_on_another_session(legacy: Legacy, http: TestClient) -> None:
    watched = _task(legacy, "slow_compute", {"seconds": 0})
    uri = f"taskgate://tasks/{watched}/result/1"
    legacy.result("resources/subscribe", {"uri": uri})
    legacy.result("resources/unsubscribe", {"uri": uri})
    other = Legacy(http)
    other.initialize()
    waiting = _task(legacy, "confirm_delete", {"filename": "a.txt"})
    _, streams = result_over_streams(legacy, waiting, ACCEPT)
    assert _updates(streams) == []


SUBSCRIBED_URI_BYTES = 65_536  # docs/reference/limits.md


def test_long_uris_meet_the_byte_bound_before_dynamodbs_item_limit(legacy: Legacy, world: World) -> None:
    """Issue 21 (N4): the 49th subscription with an 8 KiB URI got -32603 "AWS refused the
    request (ValidationException)": the session's subscriptions item passed 400 KB. The
    session's URIs now have a byte budget, refused as -32602 with ``data.limit``."""

    def uri(i: int) -> str:
        head = f"test://template/{i}-"
        return head + "x" * (8192 - len(head) - len("/data")) + "/data"  # 8 KiB, the longest URI

    held = 0
    for i in range(60):
        body = legacy.request("resources/subscribe", {"uri": uri(i)})
        if "error" in body:
            break
        held += 1
    assert body["error"]["code"] == -32602, body["error"]
    assert body["error"]["data"] == {"limit": SUBSCRIBED_URI_BYTES}
    assert "subscribed URIs may total 65536 bytes" in body["error"]["message"]
    assert held == SUBSCRIBED_URI_BYTES // 8192
    assert legacy.session_id is not None
    assert len(world.sessions.subscriptions(legacy.session_id)) == held
    # Refreshing a held one still works, and an unsubscribe makes room again.
    assert legacy.result("resources/subscribe", {"uri": uri(0)}) == {}
    assert legacy.result("resources/unsubscribe", {"uri": uri(0)}) == {}
    assert legacy.result("resources/subscribe", {"uri": uri(59)}) == {}
    assert "error" in legacy.request("resources/subscribe", {"uri": uri(58)})


def test_a_long_version_is_kept_as_a_digest(world: World) -> None:
    from taskgate.protocol.catalog.subscriptions import MAX_VERSION_CHARS, stored_version

    assert stored_version(None) == "" and stored_version("v7") == "v7"
    long_a, long_b = "a" * 10_000, "a" * 9_999 + "b"
    assert len(stored_version(long_a)) <= MAX_VERSION_CHARS
    assert stored_version(long_a) == stored_version(long_a) != stored_version(long_b)
