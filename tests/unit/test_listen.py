"""subscriptions/listen (issue 30): the caller's tasks as tasks/get shows them, resource updates
and list changes on a front that streams; an empty acknowledgement and the result at once on
one that buffers; another owner's task indistinguishable from an unknown one; the per-owner
cap on open streams. On the in-memory fakes, with the real era and the real worker."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from taskgate.protocol.v2026.listen import SUBSCRIPTION_ID
from tests.fakes import World
from tests.mcp_client import envelope, headers_for

STREAMING = {"front_streaming": True, "front_timeout_seconds": 900}
TASKS_EXT = "io.modelcontextprotocol/tasks"


def _streaming(**settings: Any) -> World:
    return World(**STREAMING, **settings)


def _listen(
    world: World, notifications: dict[str, Any], *, owner: str = "ann", msg_id: Any = "l1", tasks: bool = True
) -> Any:
    params = {"notifications": notifications}
    return world.handle(
        envelope("subscriptions/listen", params, msg_id, tasks=tasks),
        headers_for("subscriptions/listen", params),
        owner,
    )


def _messages(chunks: Iterator[str]) -> Iterator[dict[str, Any]]:
    for chunk in chunks:
        for event in chunk.split("\n\n"):
            for line in event.split("\n"):
                if line.startswith("data: "):
                    yield json.loads(line[6:])


def _all(reply: Any) -> list[dict[str, Any]]:
    assert reply.stream is not None, reply.body
    return list(_messages(reply.stream))


def _task(world: World, owner: str = "ann", **arguments: Any) -> str:
    params = {"name": "long_job", "arguments": {"minutes": 5, **arguments}}
    reply = world.handle(envelope("tools/call", params, 7), headers_for("tools/call", params), owner)
    result = reply.body["result"]
    assert result["resultType"] == "task", result
    return str(result["taskId"])


def _tasks_get(world: World, task_id: str, owner: str = "ann") -> dict[str, Any]:
    params = {"taskId": task_id}
    reply = world.handle(envelope("tasks/get", params, 9), headers_for("tasks/get", params), owner)
    return dict(reply.body["result"])


# -- the HTTP API: nothing can be pushed -------------------------------------------------------


def test_behind_a_buffering_front_listen_is_acknowledged_as_nothing_and_ended_at_once() -> None:
    world = World()
    task_id = _task(world)
    reply = _listen(
        world,
        {"toolsListChanged": True, "resourceSubscriptions": ["test://static-text"], "taskIds": [task_id]},
    )
    assert reply.status == 200
    ack, result = _all(reply)
    assert ack == {
        "jsonrpc": "2.0",
        "method": "notifications/subscriptions/acknowledged",
        "params": {"notifications": {}, "_meta": {SUBSCRIPTION_ID: "l1"}},
    }
    assert result == {
        "jsonrpc": "2.0",
        "id": "l1",
        "result": {"resultType": "complete", "_meta": {SUBSCRIPTION_ID: "l1"}},
    }
    # No place is held for it.
    assert world.sessions.places == {}


def test_server_discover_declares_subscriptions_only_where_they_are_honoured() -> None:
    def resources(world: World) -> Any:
        params: dict[str, Any] = {}
        reply = world.handle(envelope("server/discover", params, 1), headers_for("server/discover", params))
        return reply.body["result"]["capabilities"]

    buffered, streamed = resources(World()), resources(_streaming())
    assert buffered["resources"] == {} and "listChanged" not in buffered["tools"]
    assert streamed["resources"] == {"subscribe": True, "listChanged": True}
    # Tools and prompts change only with a deploy: never declared.
    assert streamed["tools"] == {} and streamed["prompts"] == {}


@pytest.mark.parametrize("world", [World(), _streaming()], ids=["buffered", "streaming"])
def test_task_ids_without_the_tasks_extension_are_refused_with_missing_capability(world: World) -> None:
    reply = _listen(world, {"taskIds": ["x"]}, tasks=False)
    error = reply.body["error"]
    assert error["code"] == -32021
    assert error["data"] == {"requiredCapabilities": {"extensions": {TASKS_EXT: {}}}}


# -- the streaming endpoint ----------------------------------------------------------------------


def test_a_watched_task_is_sent_as_tasks_get_shows_it_through_to_completed_and_the_stream_ends() -> None:
    world = _streaming()
    task_id = _task(world, steps=2)
    reply = _listen(world, {"taskIds": [task_id]})
    assert reply.headers["content-type"] == "text/event-stream"
    messages = _all(reply)
    ack, *notes, end = messages
    assert ack["params"]["notifications"] == {"taskIds": [task_id]}
    assert [n["method"] for n in notes] == ["notifications/tasks", "notifications/tasks"]
    first, last = (n["params"] for n in notes)
    assert first["status"] == "working" and last["status"] == "completed"
    # The task as tasks/get shows it (without the result's own resultType), tagged.
    shown = _tasks_get(world, task_id)
    shown.pop("resultType")
    assert {k: v for k, v in last.items() if k != "_meta"} == shown
    assert last["result"]["content"][0]["text"] == "long job done after 2 steps"
    assert all(m["params"]["_meta"][SUBSCRIPTION_ID] == "l1" for m in [ack, *notes])
    # Nothing left to watch: the stream ends with its result (and its lease).
    assert end["id"] == "l1" and end["result"]["_meta"] == {SUBSCRIPTION_ID: "l1"}
    assert world.sessions.places == {}


def test_a_task_that_asks_is_sent_with_its_questions_and_again_once_answered() -> None:
    world = _streaming()
    task_id = _task(world, ask=True, steps=1)
    stream = _messages(_listen(world, {"taskIds": [task_id]}).stream)
    next(stream)  # the acknowledgement
    assert next(stream)["params"]["status"] == "working"
    asked = next(stream)["params"]
    assert asked["status"] == "input_required" and set(asked["inputRequests"]) == {"go"}
    params = {"taskId": task_id, "inputResponses": {"go": {"action": "accept", "content": {"ok": True}}}}
    world.handle(envelope("tasks/update", params, 3), headers_for("tasks/update", params), "ann")
    rest = list(stream)
    statuses = [m["params"]["status"] for m in rest if m.get("method") == "notifications/tasks"]
    assert statuses[-1] == "completed"
    assert "result" in rest[-1]


def test_another_owners_task_is_indistinguishable_from_an_unknown_one() -> None:
    world = _streaming()
    theirs = _task(world, owner="bob")
    mine = _task(world, owner="ann")
    mixed = _all(_listen(world, {"taskIds": [theirs, "no-such-task", mine]}))
    assert mixed[0]["params"]["notifications"] == {"taskIds": [mine]}
    assert {m["params"]["taskId"] for m in mixed if m.get("method") == "notifications/tasks"} == {mine}
    # Alone, either is answered exactly alike: nothing honoured, nothing held, nothing sent.
    alone_theirs = _all(_listen(world, {"taskIds": [theirs]}, msg_id=2))
    alone_unknown = _all(_listen(world, {"taskIds": ["no-such-task"]}, msg_id=2))
    assert alone_theirs == alone_unknown
    assert [m.get("method") for m in alone_theirs] == ["notifications/subscriptions/acknowledged", None]


def test_a_stream_ends_with_its_result_before_the_cut_and_a_re_listen_continues() -> None:
    world = _streaming(listen_seconds=5, listen_interval_ms=1000)
    task_id = _task(world)
    world.workflow.runnable.clear()  # its execution has not run yet: the task stays working
    first = _all(_listen(world, {"taskIds": [task_id]}))
    assert first[-1]["result"]["_meta"] == {SUBSCRIPTION_ID: "l1"}
    assert world.memory.stream_time == pytest.approx(5.0)
    # Between the streams the task finishes; the re-listen sends it as it is now.
    world.workflow.runnable.append(task_id)
    world.settle()
    again = _all(_listen(world, {"taskIds": [task_id]}, msg_id="l2"))
    assert again[1]["params"]["status"] == "completed"
    assert again[1]["params"]["_meta"] == {SUBSCRIPTION_ID: "l2"}


def test_an_idle_stream_sends_a_heartbeat_inside_api_gateways_idle_timeout() -> None:
    world = _streaming(listen_seconds=95, listen_interval_ms=5000)
    task_id = _task(world)
    world.workflow.runnable.clear()
    chunks = list(_listen(world, {"taskIds": [task_id]}).stream)
    beats = [i for i, chunk in enumerate(chunks) if chunk == ": keep-alive\n\n"]
    assert len(beats) == 3  # at 30, 60 and 90 s of nothing new


def _held_call(world: World, msg_id: int, owner: str = "ann") -> Any:
    """A plain 2026 call of a long tool on the streaming front: held open, its task hidden."""
    params = {"name": "long_job", "arguments": {"minutes": 0.5}}
    reply = world.handle(
        envelope("tools/call", params, msg_id, tasks=False), headers_for("tools/call", params), owner
    )
    assert reply.stream is not None
    return reply


def test_the_per_owner_cap_counts_listen_streams_with_held_calls_and_frees_a_place_when_one_ends() -> None:
    world = _streaming(max_held_calls_per_owner=2)
    tasks = [_task(world) for _ in range(2)]
    world.workflow.runnable.clear()
    listening = _listen(world, {"taskIds": [tasks[0]]})
    assert next(listening.stream).startswith("event: message")  # acknowledged, holding a place
    held = _held_call(world, 11)
    world.workflow.runnable.clear()  # its tool still runs
    next(held.stream)  # held: the owner's second place
    assert len(world.sessions.places) == 2
    refused = _listen(world, {"taskIds": [tasks[1]]}, msg_id=3)
    assert refused.stream is None
    assert refused.body["error"]["code"] == -32603 and refused.body["error"]["data"] == {"limit": 2}
    # A held call past the places is handed over at once, as AUTH's L2 does it.
    handed = [
        json.loads(e.split("data: ", 1)[1]) for e in _held_call(world, 12).stream if e.startswith("event:")
    ]
    assert "handle" in handed[-1]["result"]["structuredContent"]
    # Another owner is not held back by ann's.
    other = _task(world, owner="bob")
    world.workflow.runnable.clear()
    assert _listen(world, {"taskIds": [other]}, owner="bob").stream is not None
    listening.stream.close()  # the stream ends: its place is free again
    again = _listen(world, {"taskIds": [tasks[1]]}, msg_id=4)
    assert again.stream is not None and next(again.stream).startswith("event: message")


def test_a_subscribed_resource_update_and_a_resource_list_change_reach_the_stream() -> None:
    world = _streaming(listen_seconds=3)
    # A running orders report: its resource exists (version: the task's status) but is not
    # listed until it has finished.
    params = {"name": "orders_report", "arguments": {"year": 2024, "orders": 100}}
    created = world.handle(envelope("tools/call", params, 5), headers_for("tools/call", params), "ann")
    task_id = created.body["result"]["taskId"]
    world.workflow.runnable.clear()
    uri = f"reports://orders/{task_id}"
    stream = _messages(
        _listen(
            world,
            {
                "resourceSubscriptions": [uri, "test://no-version"],
                "resourcesListChanged": True,
                "toolsListChanged": True,
            },
        ).stream
    )
    ack = next(stream)
    # Exactly what is honoured: the versioned resource, the list; not tools, not an unknown URI.
    assert ack["params"]["notifications"] == {"resourceSubscriptions": [uri], "resourcesListChanged": True}
    world.workflow.runnable.append(task_id)
    news = list(stream)
    methods = [m.get("method") for m in news]
    assert "notifications/resources/updated" in methods and "notifications/resources/list_changed" in methods
    updated = next(m for m in news if m.get("method") == "notifications/resources/updated")
    assert updated["params"] == {"uri": uri, "_meta": {SUBSCRIPTION_ID: "l1"}}
    assert news[-1]["result"]["_meta"] == {SUBSCRIPTION_ID: "l1"}
