"""2025-11-25 ``tasks/result`` streams, on the fakes: results of any size delivered
whole, live and on replay, from a log of markers (issue 12, item 2); and a waiting
stream that costs what polling does (issue 13, item 5): one read, then ``retry`` =
the task's ``pollInterval``.

The fake session store refuses an item over 400 KB, as DynamoDB does; the same
flows against moto: tests/integration/test_large_results_stream.py.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from typing import Any

import pytest
from starlette.testclient import TestClient

from taskgate.http_app import create_app
from tests.fakes import World
from tests.fixture_tools import unicode_text
from tests.mcp_client import Legacy, parse_sse
from tests.sse import over_streams, result_over_streams

MEGABYTE_TEXT = unicode_text(1024)


class _Settling:
    """The world's server, with the state machine played before each reconnect (as
    executions run beside the API while the client waits)."""

    def __init__(self, world: World) -> None:
        self._world = world

    def __getattr__(self, name: str) -> Any:
        return getattr(self._world.server, name)

    def handle_get(self, *args: Any) -> Any:
        self._world.settle()
        return self._world.server.handle_get(*args)


def _client(world: World) -> Iterator[Legacy]:
    app = create_app(
        lambda: _Settling(world),  # type: ignore[arg-type,return-value]
        anonymous_owner=world.settings.anonymous_owner,
        max_body_bytes=world.settings.max_body_bytes,
    )
    with TestClient(app, base_url="http://localhost") as http:
        legacy = Legacy(http)
        legacy.initialize()
        yield legacy


@pytest.fixture
def waiting_world() -> World:
    """A stream holds on (reading at pollInterval) for up to 5 s: the result arrives in it."""
    return World(stream_max_seconds=5.0)


@pytest.fixture
def polling_world() -> World:
    """The default: a stream reads once and ends; the client reconnects."""
    return World(stream_max_seconds=0)


def _task(legacy: Legacy, tool: str, arguments: dict[str, Any]) -> str:
    return legacy.result("tools/call", {"name": tool, "arguments": arguments, "task": {}})["task"]["taskId"]  # type: ignore[no-any-return]


def _log_bytes(world: World) -> int:
    return max(
        sum(len(e.encode()) for e in s.events) + len(repr(s.request_id))
        for s in world.sessions.streams.values()
    )


def test_a_megabyte_of_non_ascii_reaches_a_stream_opened_before_it(waiting_world: World) -> None:
    legacy = next(_client(waiting_world))
    task_id = _task(legacy, "unicode_result", {"kilobytes": 1024})
    # The task is still working when the stream opens: the result arrives on it.
    assert waiting_world.store.records[task_id].status.value == "working"
    resp = legacy.post("tasks/result", {"taskId": task_id})
    assert resp.status_code == 200 and resp.headers["content-type"].startswith("text/event-stream")
    events = parse_sse(resp.text)
    (message,) = [e["data"] for e in events if e["data"] and "result" in e["data"]]
    assert message["result"]["content"][0]["text"] == MEGABYTE_TEXT
    # Sent as UTF-8, not six-byte escapes; logged as a marker, not as the megabyte.
    assert len(resp.content) < 1.1 * len(MEGABYTE_TEXT.encode())
    assert _log_bytes(waiting_world) < 200


def test_a_megabyte_of_non_ascii_is_delivered_across_a_resume_and_replayed(polling_world: World) -> None:
    legacy = next(_client(polling_world))
    task_id = _task(legacy, "unicode_result", {"kilobytes": 1024})
    message, streams = result_over_streams(legacy, task_id)
    assert len(streams) >= 2  # the first stream ended before the result: it came on a resume
    assert message["result"]["content"][0]["text"] == MEGABYTE_TEXT
    # A client that lost that stream resumes from before the response: rebuilt whole
    # from the task row and the result bucket.
    first_id = next(e["id"] for e in streams[-1] if e["id"])
    stream_id = first_id.split(":")[0]
    replayed = parse_sse(legacy.resume(f"{stream_id}:0").text)
    (again,) = [e["data"] for e in replayed if e["data"] and "result" in e["data"]]
    assert again == message
    assert _log_bytes(polling_world) < 200


def test_a_plain_calls_large_response_after_a_closed_stream_is_replayed_from_the_bucket(
    polling_world: World,
) -> None:
    legacy = next(_client(polling_world))
    message, streams = over_streams(
        legacy, "tools/call", {"name": "unicode_after_close", "arguments": {"kilobytes": 1024}}
    )
    assert len(streams) == 2  # closed before the response (SEP-1699), then resumed
    assert message["result"]["content"][0]["text"] == MEGABYTE_TEXT
    assert _log_bytes(polling_world) < 200
    assert [k for k in polling_world.blobs.objects if k.startswith("results/streams/")]


def test_without_a_bucket_a_large_plain_response_comes_on_the_first_stream() -> None:
    world = World(stream_max_seconds=0, with_bucket=False)
    legacy = next(_client(world))
    message, streams = over_streams(
        legacy, "tools/call", {"name": "unicode_after_close", "arguments": {"kilobytes": 512}}
    )
    assert len(streams) == 1 and message["result"]["content"][0]["text"] == unicode_text(512)


def test_a_huge_request_id_is_refused_before_a_task_or_stream_exists(polling_world: World) -> None:
    legacy = next(_client(polling_world))
    huge = "i" * 450_000
    headers = legacy.headers()
    ask = {"name": "confirm_delete", "arguments": {"filename": "a"}}
    resp = legacy.http.post(
        "/mcp", json={"jsonrpc": "2.0", "id": huge, "method": "tools/call", "params": ask}, headers=headers
    )
    body = resp.json()
    assert body["error"]["code"] == -32602 and body["error"]["data"] == {"limit": 1024}
    assert polling_world.store.records == {} and polling_world.sessions.streams == {}
    # tasks/result of a working task: the same refusal, and the task goes on.
    task_id = _task(legacy, "slow_compute", {"seconds": 0})
    resp = legacy.http.post(
        "/mcp",
        json={"jsonrpc": "2.0", "id": huge, "method": "tasks/result", "params": {"taskId": task_id}},
        headers=headers,
    )
    assert resp.json()["error"]["data"] == {"limit": 1024}
    assert polling_world.sessions.streams == {}


def test_a_waiting_stream_reads_once_and_retries_at_the_tasks_poll_interval() -> None:
    world = World(stream_max_seconds=0, poll_interval_ms=2_500)
    legacy = next(_client(world))
    task_id = _task(legacy, "quiet_work", {"seconds": 0})
    world.workflow.runnable.clear()  # it stays working for as long as this test looks
    reads = 0
    get = world.store.get

    def counting(wanted: str, **kwargs: Any) -> Any:
        nonlocal reads
        reads += wanted == task_id
        return get(wanted, **kwargs)

    world.store.get = counting  # type: ignore[method-assign]
    slept = world.memory.stream_time
    events = parse_sse(legacy.post("tasks/result", {"taskId": task_id}).text)
    assert reads == 1 and world.memory.stream_time == slept  # one read, no waiting
    assert [e["retry"] for e in events if e["retry"] is not None] == [2_500]
    assert not [e for e in events if e["data"] and "result" in e["data"]]
    # Reconnecting is polling: each resume reads the task once more.
    resumed = parse_sse(legacy.resume(next(e["id"] for e in events if e["id"])).text)
    assert reads == 2 and [e["retry"] for e in resumed if e["retry"] is not None] == [2_500]


def test_a_replayed_question_that_was_answered_is_not_asked_again(polling_world: World) -> None:
    legacy = next(_client(polling_world))
    task_id = _task(legacy, "multi_input", {})
    polling_world.settle()
    events = parse_sse(legacy.post("tasks/result", {"taskId": task_id}).text)
    asked = [e["data"]["id"] for e in events if e["data"] and e["data"].get("method") == "elicitation/create"]
    assert len(asked) == 2
    stream_id = next(e["id"] for e in events if e["id"]).split(":")[0]
    assert legacy.answer(asked[0], {"action": "accept", "content": {"name": "Ann"}}) == 202
    replayed = parse_sse(legacy.resume(f"{stream_id}:0").text)
    again = [
        e["data"]["id"] for e in replayed if e["data"] and e["data"].get("method") == "elicitation/create"
    ]
    assert again == [asked[1]]


def test_a_resume_that_reads_a_lagging_log_reads_it_again_consistently(polling_world: World) -> None:
    """Reconnects read the log eventually consistently (polling's price); one that lags
    behind the id the client holds is read again, consistently, never a 404."""
    legacy = next(_client(polling_world))
    task_id = _task(legacy, "multi_input", {})
    polling_world.settle()
    events = parse_sse(legacy.post("tasks/result", {"taskId": task_id}).text)
    stream_id = next(e["id"] for e in events if e["id"]).split(":")[0]
    logged = polling_world.sessions.streams[stream_id]
    assert len(logged.events) == 2  # the two questions
    polling_world.sessions.lagging[stream_id] = dataclasses.replace(
        logged, events=(), emitted_keys=frozenset()
    )
    resumed = legacy.resume(f"{stream_id}:2")
    assert resumed.status_code == 200
    # Nothing after position 2 to replay, and no question asked twice.
    assert not [
        e for e in parse_sse(resumed.text) if e["data"] and e["data"].get("method") == "elicitation/create"
    ]
