"""Plain calls of long tools (issue 18): a host that never asks for a task still gets long
work done durably, its progress and log lines while it runs, and its result; a retry does
not start the work twice; a cancel (even one racing the call) or a caller that hangs up for
good stops it. On the in-memory fakes, with the real eras, streams, worker and sweeper."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from starlette.testclient import TestClient

from taskgate.domain.ending import HUNG_UP
from taskgate.domain.model import NewTask, TaskStatus
from taskgate.http_app import create_app
from taskgate.protocol.calls.caller import Caller
from taskgate.protocol.calls.plan import Plan, decide, decide_job
from taskgate.protocol.calls.policy import WAIT_HEADER, CallPolicy
from taskgate.protocol.calls.runs import resolve_tool
from tests.fakes import World
from tests.mcp_client import Legacy, envelope, headers_for, parse_sse

PROTOCOL_2026 = "2026-07-28"


# -- the decision ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("tool", "arguments", "policy", "headers", "resumable", "sse", "plan"),
    [
        # Quick tools run inline whatever the client speaks.
        ("greet", {}, CallPolicy(), {}, True, True, Plan.INLINE),
        ("long_job", {"minutes": 0.1}, CallPolicy(), {}, False, False, Plan.INLINE),
        # 2025-11-25: the call's own resumable stream while the caller waits for it…
        ("long_job", {"minutes": 0.5}, CallPolicy(), {}, True, True, Plan.STREAM),
        # …a task handle beyond that…
        ("long_job", {"minutes": 10}, CallPolicy(), {}, True, True, Plan.HANDLE),
        # …unless the caller says it waits, or handles are off, or the tool's results have a schema.
        (
            "long_job",
            {"minutes": 10},
            CallPolicy(),
            {"taskgate-wait-seconds": "900"},
            True,
            True,
            Plan.STREAM,
        ),
        ("long_job", {"minutes": 10}, CallPolicy(handles=False), {}, True, True, Plan.STREAM),
        ("long_forecast", {"city": "Oslo"}, CallPolicy(), {}, True, True, Plan.STREAM),
        # A caller that says it does not wait gets the handle at once.
        ("long_job", {"minutes": 0.5}, CallPolicy(), {"taskgate-wait-seconds": "0"}, True, True, Plan.HANDLE),
        # Without SSE nothing can stream: a handle, or (handles off) a refusal.
        ("long_job", {"minutes": 0.5}, CallPolicy(), {}, True, False, Plan.HANDLE),
        ("long_job", {"minutes": 0.5}, CallPolicy(handles=False), {}, True, False, Plan.REFUSE),
        # 2026-07-28 behind the HTTP API (buffers, cuts at 29 s): nothing can hold the call.
        ("long_job", {"minutes": 0.5}, CallPolicy(), {}, False, True, Plan.HANDLE),
        ("long_job", {"minutes": 0.5}, CallPolicy(handles=False), {}, False, True, Plan.REFUSE),
        ("long_forecast", {"city": "Oslo"}, CallPolicy(), {}, False, True, Plan.REFUSE),
        # 2026-07-28 behind a front that streams for 15 minutes: held while the caller waits.
        (
            "long_job",
            {"minutes": 0.5},
            CallPolicy(front_streaming=True, front_timeout_seconds=900),
            {},
            False,
            True,
            Plan.HOLD,
        ),
        (
            "long_job",
            {"minutes": 10},
            CallPolicy(front_streaming=True, front_timeout_seconds=900),
            {},
            False,
            True,
            Plan.HANDLE,
        ),
        (
            "long_job",
            {"minutes": 10},
            CallPolicy(front_streaming=True, front_timeout_seconds=900, handles=False),
            {},
            False,
            True,
            Plan.HOLD,
        ),
        (
            "long_job",
            {"minutes": 20},
            CallPolicy(front_streaming=True, front_timeout_seconds=900, handles=False),
            {},
            False,
            True,
            Plan.REFUSE,
        ),
    ],
)
def test_what_a_plain_call_becomes(
    world: World,
    tool: str,
    arguments: dict[str, Any],
    policy: CallPolicy,
    headers: dict[str, str],
    resumable: bool,
    sse: bool,
    plan: Plan,
) -> None:
    request = resolve_tool(world.root, tool, arguments)
    assert decide(policy, request, _caller(policy, headers, resumable, sse)).plan is plan


def _caller(policy: CallPolicy, headers: dict[str, str], resumable: bool, sse: bool) -> Caller:
    """What a caller can do, as its era reads it from these headers (the flow's input)."""
    wait = policy.client_wait(headers.get(WAIT_HEADER))
    return Caller(wait_seconds=wait, front=policy.front, accepts_sse=sse, resumable=resumable)


# -- 2025-11-25: the call's own resumable stream --------------------------------------------


def _call(legacy: Legacy, name: str, arguments: dict[str, Any], msg_id: int, **headers: str) -> Any:
    body = {
        "jsonrpc": "2.0",
        "id": msg_id,
        "method": "tools/call",
        "params": {"name": name, "arguments": arguments, "_meta": {"progressToken": f"p{msg_id}"}},
    }
    return legacy.http.post("/mcp", json=body, headers=legacy.headers(**headers))


def _messages(events: list[dict[str, Any]], method: str) -> list[dict[str, Any]]:
    return [e for e in events if e["data"] and e["data"].get("method") == method]


def _response(events: list[dict[str, Any]], msg_id: int) -> dict[str, Any] | None:
    found = [
        e["data"] for e in events if e["data"] and e["data"].get("id") == msg_id and "method" not in e["data"]
    ]
    return found[-1] if found else None


def _until_answered(legacy: Legacy, first: Any, msg_id: int, limit: int = 20) -> list[dict[str, Any]]:
    """Every event of a plain call's stream, resumed with Last-Event-ID as a client does."""
    events = parse_sse(first.text)
    for _ in range(limit):
        if _response(events, msg_id) is not None:
            return events
        last = [e["id"] for e in events if e["id"]][-1]
        events += parse_sse(legacy.resume(last).text)
    raise AssertionError(f"no response after {limit} resumes: {events}")


def test_a_long_plain_call_streams_the_tools_progress_numbers_and_log_lines_then_its_result(
    legacy: Legacy, world: World
) -> None:
    resp = _call(legacy, "long_job", {"minutes": 0.5, "steps": 7}, 41)
    assert resp.headers["content-type"].startswith("text/event-stream")
    events = _until_answered(legacy, resp, 41)
    # One hidden task ran the work, watched for its caller.
    (record,) = world.store.records.values()
    assert record.status is TaskStatus.COMPLETED and record.watched_until_ms is not None
    progress = [e["data"]["params"] for e in _messages(events, "notifications/progress")]
    # The tool's own numbers; throttled to one write a second, but never its last report.
    assert progress and progress[-1] == {
        "progressToken": "p41",
        "progress": 7,
        "total": 7,
        "message": "step 7",
    }
    assert [p["progress"] for p in progress] == sorted({p["progress"] for p in progress})
    logs = [e["data"]["params"] for e in _messages(events, "notifications/message")]
    assert [line["data"] for line in logs] == [f"step {n} of 7" for n in range(1, 8)]
    # Nothing names a task the client never asked for.
    assert not _messages(events, "notifications/tasks/status")
    assert all("_meta" not in p for p in progress)
    answer = _response(events, 41)
    assert answer is not None and answer["result"]["content"][0]["text"] == "long job done after 7 steps"
    # Every event a client may resume from carries an id; notifications carry the cursor.
    assert all(
        e["id"] for e in events if e["data"] and e["data"].get("method") != "notifications/tasks/status"
    )


def test_resuming_sends_each_notification_once(legacy: Legacy, world: World) -> None:
    resp = _call(legacy, "long_job", {"minutes": 0.5, "steps": 3}, 7)
    events = _until_answered(legacy, resp, 7)
    logged = [e for e in events if e["data"] and e["data"].get("method") == "notifications/message"]
    assert len(logged) == 3
    # A client that lost the connection after the first line resumes from its id: it gets
    # the rest, and not the lines it had.
    again = parse_sse(legacy.resume(logged[0]["id"]).text)
    lines = [e["data"]["params"]["data"] for e in _messages(again, "notifications/message")]
    assert lines == ["step 2 of 3", "step 3 of 3"]
    progress = [e["data"]["params"]["progress"] for e in _messages(again, "notifications/progress")]
    assert progress == [3]  # the client had none yet: the latest, once
    assert _response(again, 7) is not None


def test_a_retry_of_the_same_call_resumes_the_same_task(legacy: Legacy, world: World) -> None:
    first = _until_answered(legacy, _call(legacy, "long_job", {"minutes": 0.5}, 5), 5)
    # The client sends the same request again (a 504, a dropped connection): same session, same id.
    second = _until_answered(legacy, _call(legacy, "long_job", {"minutes": 0.5}, 5), 5)
    assert len(world.store.records) == 1
    assert [m for m in world.events if m[0] == "task_created"] == [world.events[0]]
    assert _response(first, 5) == _response(second, 5)
    # Another request id is another call.
    _until_answered(legacy, _call(legacy, "long_job", {"minutes": 0.5}, 6), 6)
    assert len(world.store.records) == 2


def test_a_long_tool_the_caller_cannot_wait_for_is_handed_to_the_model_as_a_task_handle(
    legacy: Legacy, world: World, http: TestClient
) -> None:
    resp = _call(legacy, "long_job", {"minutes": 10, "steps": 4}, 3)
    assert resp.headers["content-type"].startswith("application/json")
    result = resp.json()["result"]
    handle = result["structuredContent"]["handle"]
    assert result["isError"] is False and "taskgate_task_status" in result["content"][0]["text"]
    assert "task" not in result  # an ordinary result: no task for a client that never asked for one
    tools = {t["name"] for t in legacy.result("tools/list")["tools"]}
    assert {"taskgate_task_status", "taskgate_task_result", "taskgate_task_cancel"} <= tools
    status = legacy.result("tools/call", {"name": "taskgate_task_status", "arguments": {"handle": handle}})
    assert status["structuredContent"]["status"] == "working"
    waiting = legacy.result("tools/call", {"name": "taskgate_task_result", "arguments": {"handle": handle}})
    assert waiting["isError"] is False and "still working" in waiting["content"][0]["text"]
    world.settle()
    done = legacy.result("tools/call", {"name": "taskgate_task_result", "arguments": {"handle": handle}})
    assert done["content"][0]["text"] == "long job done after 4 steps"
    # Owner-scoped: another caller's handle reads as one that never existed.
    other = Legacy(TestClient(_as_owner(world, "mallory"), base_url="http://localhost"))
    other.initialize()
    for name in ("taskgate_task_status", "taskgate_task_result", "taskgate_task_cancel"):
        theirs = other.result("tools/call", {"name": name, "arguments": {"handle": handle}})
        missing = other.result("tools/call", {"name": name, "arguments": {"handle": "no-such-task"}})
        assert theirs["isError"] and theirs["content"][0]["text"].replace(handle, "X") == missing["content"][
            0
        ]["text"].replace("no-such-task", "X")
    assert world.store.records[handle].status is TaskStatus.COMPLETED


def _as_owner(world: World, owner: str) -> Any:
    app = create_app(lambda: world.server, anonymous_owner=owner, max_body_bytes=1_048_576)
    return app


def test_the_model_can_cancel_its_task_through_the_handle(legacy: Legacy, world: World) -> None:
    handle = _call(legacy, "long_job", {"minutes": 10}, 3).json()["result"]["structuredContent"]["handle"]
    out = legacy.result("tools/call", {"name": "taskgate_task_cancel", "arguments": {"handle": handle}})
    assert out["structuredContent"]["status"] == "cancelled"
    assert world.store.records[handle].status is TaskStatus.CANCELLED
    assert handle in world.workflow.stop_reasons
    result = legacy.result("tools/call", {"name": "taskgate_task_result", "arguments": {"handle": handle}})
    assert result["isError"] and "cancelled" in result["content"][0]["text"]


def test_a_call_still_running_when_the_wait_is_up_is_handed_over_not_left_to_time_out(
    legacy: Legacy, world: World
) -> None:
    body = {
        "jsonrpc": "2.0",
        "id": 9,
        "method": "tools/call",
        "params": {"name": "long_job", "arguments": {"minutes": 0.5}},
    }
    reply = world.handle(body, legacy.headers())
    assert reply.stream is not None
    priming = next(reply.stream)
    assert priming.startswith("id: ")
    world.workflow.runnable.clear()  # the work is slower than its estimate: still running
    world.clock.advance(51_000)  # past the caller's wait (50 s)
    events = parse_sse("".join(reply.stream))
    answer = _response(events, 9)
    assert answer is not None
    handle = answer["result"]["structuredContent"]["handle"]
    record = world.store.records[handle]
    # The model drives it from here: no stream is expected back, so nothing watches for one.
    assert record.status is TaskStatus.WORKING and record.watched_until_ms is None


# -- cancel -----------------------------------------------------------------------------------


def _cancel(legacy: Legacy, request_id: Any) -> int:
    message = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": request_id}}
    return int(legacy.http.post("/mcp", json=message, headers=legacy.headers()).status_code)


def test_a_cancel_of_a_running_hidden_task_stops_it(legacy: Legacy, world: World) -> None:
    body = {
        "jsonrpc": "2.0",
        "id": 4,
        "method": "tools/call",
        "params": {"name": "long_job", "arguments": {"minutes": 0.5}},
    }
    reply = world.handle(body, legacy.headers())
    assert reply.stream is not None
    next(reply.stream)
    (record,) = world.store.records.values()
    assert _cancel(legacy, 4) == 202
    row = world.store.records[record.task_id]
    assert row.status is TaskStatus.CANCELLED
    assert world.workflow.stop_reasons[record.task_id] == "The task was cancelled by the client."


def test_a_cancel_that_arrives_before_the_call_means_nothing_runs(legacy: Legacy, world: World) -> None:
    assert _cancel(legacy, 12) == 202
    resp = _call(legacy, "long_job", {"minutes": 0.5}, 12)
    assert "cancelled" in resp.json()["error"]["message"]
    assert world.store.records == {}


def test_a_cancel_racing_the_call_before_its_task_exists_still_cancels_it(
    legacy: Legacy, world: World
) -> None:
    """The red team's race: the cancel lands after the call claimed its key and before its
    task row exists. The cancel cannot find the task; the call finds the mark."""
    claim = world.sessions.claim_call

    def claim_then_cancel(key: str, task_id: str, expires_at_ms: int, digest: str = "") -> Any:
        won = claim(key, task_id, expires_at_ms, digest)
        assert _cancel(legacy, 13) == 202  # while this call is still being served
        return won

    world.sessions.claim_call = claim_then_cancel  # type: ignore[method-assign]
    resp = _call(legacy, "long_job", {"minutes": 0.5}, 13)
    assert "cancelled" in resp.json()["error"]["message"]
    (record,) = world.store.records.values()
    assert record.status is TaskStatus.CANCELLED
    assert record.task_id in world.workflow.stop_reasons
    world.settle()
    assert world.store.records[record.task_id].status is TaskStatus.CANCELLED  # it never ran


# -- hang-up ----------------------------------------------------------------------------------


def _start_hidden(legacy: Legacy, world: World, msg_id: int, **arguments: Any) -> tuple[str, str]:
    """A hidden-task call whose first piece the client read; returns (task id, last event id)."""
    body = {
        "jsonrpc": "2.0",
        "id": msg_id,
        "method": "tools/call",
        "params": {"name": "long_job", "arguments": {"minutes": 0.5, **arguments}},
    }
    reply = world.handle(body, legacy.headers())
    assert reply.stream is not None
    event_id = next(reply.stream).split("\n")[0].removeprefix("id: ")
    reply.stream.close()
    (record,) = [r for r in world.store.records.values() if r.status is TaskStatus.WORKING]
    world.workflow.runnable.clear()
    return record.task_id, event_id


def test_a_caller_that_hangs_up_for_good_cancels_its_task_at_the_tools_next_check(
    legacy: Legacy, world: World
) -> None:
    task_id, _ = _start_hidden(legacy, world, 21, steps=3)
    world.clock.advance(91_000)  # no resume for longer than the hang-up timeout (90 s)
    world.workflow.runnable.append(task_id)
    world.settle()
    row = world.store.records[task_id]
    assert row.status is TaskStatus.CANCELLED and row.status_message == HUNG_UP
    assert row.result is None  # the tool stopped at its first progress report


def test_the_sweeper_cancels_a_task_whose_caller_hung_up(legacy: Legacy, world: World) -> None:
    task_id, _ = _start_hidden(legacy, world, 22)
    world.clock.advance(91_000)
    report = world.sweeper.sweep()
    assert report.cancelled == {task_id: HUNG_UP}
    assert world.store.records[task_id].status is TaskStatus.CANCELLED
    assert world.workflow.stop_reasons[task_id] == HUNG_UP


def test_the_sweeper_stops_the_job_a_hung_up_callers_task_waits_on(legacy: Legacy, world: World) -> None:
    child = "arn:aws:states:us-east-1:123456789012:stateMachine:pipeline"
    task_id, _ = _start_hidden(legacy, world, 24, steps=1, hand_off_to=child)
    world.workflow.runnable.append(task_id)
    world.settle()
    assert world.store.records[task_id].job is not None  # parked on the job, no step running
    world.clock.advance(91_000)
    assert world.sweeper.sweep().cancelled == {task_id: HUNG_UP}
    assert world.memory.jobs.stopped == {task_id: HUNG_UP}
    assert world.workflow.stop_reasons[task_id] == HUNG_UP


def test_a_slow_reconnect_never_cancels_live_work(legacy: Legacy, world: World) -> None:
    task_id, event_id = _start_hidden(legacy, world, 23, steps=2)
    world.clock.advance(60_000)  # a slow reconnect (a cold start, a long piece), inside the timeout
    resumed = legacy.resume(event_id)
    assert resumed.status_code == 200
    world.clock.advance(60_000)  # 120 s after the call, 60 s after the resume
    world.workflow.runnable.append(task_id)
    world.settle()
    assert world.store.records[task_id].status is TaskStatus.COMPLETED
    assert world.sweeper.sweep().cancelled == {}


# -- 2026-07-28 ---------------------------------------------------------------------------------


def _plain_2026(world: World, name: str, arguments: dict[str, Any], msg_id: int = 1, **extra: str) -> Any:
    params = {"name": name, "arguments": arguments}
    body = envelope("tools/call", params, msg_id, tasks=False)
    body["params"]["_meta"]["progressToken"] = f"p{msg_id}"
    body["params"]["_meta"]["io.modelcontextprotocol/logLevel"] = "info"
    headers = {**headers_for("tools/call", params), **extra}
    return world.handle(body, headers)


def test_2026_behind_a_buffering_front_gets_a_task_handle_never_a_task(world: World) -> None:
    reply = _plain_2026(world, "long_job", {"minutes": 0.5})
    assert reply.status == 200 and reply.body is not None
    result = reply.body["result"]
    assert result["resultType"] == "complete"  # never resultType "task": it did not opt in
    handle = result["structuredContent"]["handle"]
    assert world.store.records[handle].status is TaskStatus.WORKING
    # The same call again (same id, tool and arguments) is the same task.
    again = _plain_2026(world, "long_job", {"minutes": 0.5})
    assert again.body["result"]["structuredContent"]["handle"] == handle
    assert len(world.store.records) == 1


def test_2026_with_handles_off_and_nothing_to_hold_the_call_is_told_how_to_use_tasks() -> None:
    world = World(call_handles=False)
    reply = _plain_2026(world, "long_job", {"minutes": 0.5})
    assert reply.status == 400
    message = reply.body["error"]["message"]
    assert "io.modelcontextprotocol/tasks" in message and "tasks_config" in message
    assert world.store.records == {}


def test_2026_behind_a_streaming_front_is_held_and_streamed() -> None:
    world = World(front_streaming=True, front_timeout_seconds=900)
    reply = _plain_2026(world, "long_job", {"minutes": 0.5, "steps": 3})
    assert reply.stream is not None and reply.headers["content-type"] == "text/event-stream"
    events = [json.loads(e.split("data: ", 1)[1]) for e in reply.stream if e.startswith("event: message")]
    assert [e["params"]["data"] for e in events if e.get("method") == "notifications/message"] == [
        "step 1 of 3",
        "step 2 of 3",
        "step 3 of 3",
    ]
    progress = [e["params"] for e in events if e.get("method") == "notifications/progress"]
    assert progress[-1] == {"progressToken": "p1", "progress": 3, "total": 3, "message": "step 3"}
    final = events[-1]
    assert final["id"] == 1 and final["result"]["resultType"] == "complete"
    assert final["result"]["content"][0]["text"] == "long job done after 3 steps"


def test_2026_closing_a_held_call_cancels_its_work() -> None:
    world = World(front_streaming=True, front_timeout_seconds=900)
    reply = _plain_2026(world, "long_job", {"minutes": 0.5})
    assert reply.stream is not None
    (record,) = world.store.records.values()
    world.workflow.runnable.clear()  # still running when the client goes away
    assert next(reply.stream) == ": keep-alive\n\n"  # nothing new for a while: the stream stays up
    reply.stream.close()  # the client closed the stream: this era's cancel
    assert world.store.records[record.task_id].status is TaskStatus.CANCELLED
    assert record.task_id in world.workflow.stop_reasons


# -- what the worker keeps ----------------------------------------------------------------


def test_the_worker_keeps_the_last_progress_and_a_bounded_window_of_log_lines(world: World) -> None:
    record = world.tasks.create(
        NewTask(owner="ann", tool="long_job", arguments={"steps": 60}, progress_token="t", log_level="info")
    )
    world.settle()
    row = world.store.records[record.task_id]
    assert row.status is TaskStatus.COMPLETED
    assert row.progress is not None and (row.progress.progress, row.progress.total) == (60, 60)
    assert row.progress_count == 60 and row.log_count == 60
    assert [line.data for line in row.log_lines][-1] == "step 60 of 60"
    assert len(row.log_lines) == 20  # the window; the count says how many came before


def test_a_task_keeps_no_log_lines_below_what_its_caller_asked_for(world: World) -> None:
    record = world.tasks.create(
        NewTask(owner="ann", tool="long_job", arguments={"steps": 3}, log_level="warning")
    )
    world.settle()
    row = world.store.records[record.task_id]
    assert row.log_count == 0 and row.log_lines == ()
    assert row.progress_count == 3


def test_a_task_clients_progress_carries_the_tools_numbers(legacy: Legacy, world: World) -> None:
    created = legacy.result(
        "tools/call",
        {"name": "long_job", "arguments": {"steps": 4}, "task": {}, "_meta": {"progressToken": "tok"}},
    )
    task_id = created["task"]["taskId"]
    resp = legacy.post("tasks/result", {"taskId": task_id})
    events = parse_sse(resp.text)
    progress = [e["data"]["params"] for e in _messages(events, "notifications/progress")]
    assert progress[-1]["progress"] == 4 and progress[-1]["total"] == 4
    assert progress[-1]["_meta"] == {"io.modelcontextprotocol/related-task": {"taskId": task_id}}


def test_a_task_clients_log_lines_come_at_the_level_its_session_set(legacy: Legacy, world: World) -> None:
    def logged(level: str | None) -> list[dict[str, Any]]:
        if level is not None:
            legacy.result("logging/setLevel", {"level": level})
        created = legacy.result("tools/call", {"name": "long_job", "arguments": {"steps": 2}, "task": {}})
        task_id = created["task"]["taskId"]
        events = parse_sse(legacy.post("tasks/result", {"taskId": task_id}).text)
        return [e["data"]["params"] for e in _messages(events, "notifications/message")]

    assert logged(None) == []  # a session that never set a level is sent none
    lines = logged("info")
    assert [line["data"] for line in lines] == ["step 1 of 2", "step 2 of 2"]
    assert all(line["_meta"]["io.modelcontextprotocol/related-task"]["taskId"] for line in lines)
    assert logged("error") == []


def test_ending_the_session_ends_its_calls_hidden_tasks_but_not_those_handed_out(
    legacy: Legacy, world: World
) -> None:
    """Clients on the Python SDK 1.x send no notifications/cancelled when a call is
    aborted; they close their session (DELETE). Its calls' streams can never be resumed."""
    streamed, _ = _start_hidden(legacy, world, 31)
    handed = _call(legacy, "long_job", {"minutes": 10}, 32).json()["result"]["structuredContent"]["handle"]
    resp = legacy.http.delete("/mcp", headers=legacy.headers())
    assert resp.status_code == 200
    assert world.store.records[streamed].status is TaskStatus.CANCELLED
    assert streamed in world.workflow.stop_reasons
    assert world.store.records[handed].status is TaskStatus.WORKING  # the model's, through its handle


def test_a_stream_whose_response_was_had_is_unknown_from_then_on(legacy: Legacy, world: World) -> None:
    """A client that resumes after the last event (the TypeScript SDK does, after an error
    response) is told the stream is unknown, instead of reconnecting every second forever."""
    events = _until_answered(legacy, _call(legacy, "long_job", {"minutes": 0.5}, 44), 44)
    final = [e for e in events if e["data"] and e["data"].get("id") == 44][-1]
    assert legacy.resume(final["id"]).status_code == 404
    # Earlier ids still replay what followed them.
    first = next(e["id"] for e in events if e["id"])
    assert _response(parse_sse(legacy.resume(first).text), 44) is not None


def test_event_ids_carry_the_cursor_only_once_the_client_has_had_progress_or_logs() -> None:
    from taskgate.protocol.v2025 import streams
    from taskgate.protocol.wire.task_events import Cursor

    # Every stream but a hidden task's keeps the ids it always had.
    assert streams._cursor_id("ab12", 3, Cursor()) == "ab12:3"
    assert re.fullmatch(r"ab12:0:[0-9a-f]{8}", streams._priming_id("ab12", 0, Cursor()))
    assert streams._cursor_id("ab12", 3, Cursor(2, 1)) == "ab12:3:c2.1"
    assert re.fullmatch(r"ab12:0:c2\.1n[0-9a-f]{8}", streams._priming_id("ab12", 0, Cursor(2, 1)))
    for event_id, cursor in (
        ("ab12:3", (None, None)),
        ("ab12:0:5b7de296", (None, None)),
        ("ab12:0:c2.1n5b7de296", ("2", "1")),
    ):
        parsed = streams._EVENT_ID.fullmatch(event_id)
        assert parsed is not None and (parsed.group(3), parsed.group(4)) == cursor


@pytest.mark.parametrize(
    ("policy", "resumable", "sse", "plan", "wait"),
    [
        # 2025-11-25: its own stream while the caller waits, then a handle.
        (CallPolicy(), True, True, Plan.STREAM, 50.0),
        (CallPolicy(), True, False, Plan.HANDLE, 50.0),
        # 2026-07-28: a handle behind a buffering front, held where the front streams.
        (CallPolicy(), False, True, Plan.HANDLE, 50.0),
        (CallPolicy(front_streaming=True, front_timeout_seconds=900), False, True, Plan.HOLD, 50.0),
        # Handles off: held to the front's limit, or refused where nothing holds it.
        (
            CallPolicy(handles=False, front_streaming=True, front_timeout_seconds=900),
            False,
            True,
            Plan.HOLD,
            870.0,
        ),
        (CallPolicy(handles=False), False, True, Plan.REFUSE, 50.0),
    ],
)
def test_a_call_whose_tool_hands_a_job_off_lasts_as_long_as_its_caller_waits(
    world: World, policy: CallPolicy, resumable: bool, sse: bool, plan: Plan, wait: float
) -> None:
    # run_job declares no expected_seconds (decide runs it inline); its hand_off needs a task.
    request = resolve_tool(world.root, "run_job", {"kind": "glue", "target": "nightly"})
    caller = _caller(policy, {}, resumable, sse)
    assert decide(policy, request, caller).plan is Plan.INLINE
    decision = decide_job(policy, request, caller)
    assert (decision.plan, decision.wait, decision.expected) == (plan, wait, None)
