"""Progress that only goes forward (issue 27 item 4). MCP requires each progress
notification's value to be higher than the last for its token; a tool that asks runs again
from the top once answered, so what it reported before the question comes again (9 -> 1),
and a resumed stream used to send its last value again (9/18 twice).

``half_way_question`` (tests/fixture_tools.py) reports 18 steps and asks at step 9 without a
checkpoint. Called plainly by a 2025-11-25 client (a hidden task on the call's own stream,
resumed after the answer) and as a task (``tasks/result``), the values its client receives
strictly increase. Underneath: the task keeps the highest value sent per progress token and
raises it only by a conditional write; the step stores no numbers that fall (its
statusMessage still tells what happens); the kit warns of a tool whose progress would go
back after a question."""

from __future__ import annotations

import json
import warnings
from typing import Any

import pytest
from pydantic import BaseModel
from starlette.testclient import TestClient

from taskgate.domain.model import NewTask
from taskgate.testing import ProgressWentBack, ToolTester, accept
from taskgate.tools import Elicit, ToolContext
from taskgate.tools.registry import Tool
from tests.fakes import World
from tests.mcp_client import Legacy, parse_sse

YES = {"action": "accept", "content": {"ok": True}}


def _legacy(world: World) -> Legacy:
    client = Legacy(TestClient(world.root.app(), base_url="http://localhost"))
    client.initialize()
    return client


def _response(events: list[dict[str, Any]], msg_id: Any) -> dict[str, Any] | None:
    found = [
        e["data"] for e in events if e["data"] and e["data"].get("id") == msg_id and "method" not in e["data"]
    ]
    return found[-1] if found else None


def _drive(legacy: Legacy, first: Any, msg_id: Any) -> tuple[list[dict[str, Any]], int]:
    """Every event the client gets, answering each question and resuming with Last-Event-ID
    as an SDK does; and how many streams (pieces) it took."""
    events = parse_sse(first.text)
    seen, pieces = list(events), 1
    for _ in range(60):
        if _response(seen, msg_id) is not None:
            return seen, pieces
        for event in events:
            if event["data"] and event["data"].get("method") == "elicitation/create":
                assert legacy.answer(event["data"]["id"], YES) == 202
        last = [e["id"] for e in events if e["id"]][-1]
        events = parse_sse(legacy.resume(last).text)
        seen += events
        pieces += 1
    raise AssertionError(f"no response: {seen}")


def _progress(events: list[dict[str, Any]]) -> list[float]:
    return [
        e["data"]["params"]["progress"]
        for e in events
        if e["data"] and e["data"].get("method") == "notifications/progress"
    ]


def test_a_2025_plain_call_that_asks_mid_loop_gets_progress_that_only_rises() -> None:
    world = World(poll_interval_ms=100)
    legacy = _legacy(world)
    body = {
        "jsonrpc": "2.0",
        "id": 77,
        "method": "tools/call",
        "params": {"name": "half_way_question", "arguments": {}, "_meta": {"progressToken": "p77"}},
    }
    first = legacy.http.post("/mcp", json=body, headers=legacy.headers())
    events, pieces = _drive(legacy, first, 77)
    answer = _response(events, 77)
    assert answer is not None and answer["result"]["content"][0]["text"] == "done after 18 steps"
    values = _progress(events)
    assert values, events
    assert values == sorted(set(values)), values  # strictly rising: nothing repeated, nothing back
    assert values[-1] == 18 and pieces >= 2


def test_a_2025_task_that_asks_mid_loop_gets_progress_that_only_rises() -> None:
    world = World(poll_interval_ms=100)
    legacy = _legacy(world)
    params = {"name": "half_way_question", "arguments": {}, "task": {}, "_meta": {"progressToken": "t1"}}
    task_id = legacy.result("tools/call", params)["task"]["taskId"]
    first = legacy.post("tasks/result", {"taskId": task_id})
    events, _ = _drive(legacy, first, json.loads(first.request.content)["id"])
    values = _progress(events)
    assert values and values == sorted(set(values)), values
    assert values[-1] == 18


def test_a_second_stream_of_the_same_task_sends_no_value_the_first_sent() -> None:
    """``tasks/result`` called twice (a client that reconnects with a new request rather than
    resuming): the highest value sent is the task's, not the stream's."""
    world = World(poll_interval_ms=100)
    legacy = _legacy(world)
    params = {"name": "half_way_question", "arguments": {}, "task": {}, "_meta": {"progressToken": 5}}
    task_id = legacy.result("tools/call", params)["task"]["taskId"]
    world.settle()  # it waits on its question at step 9
    first = parse_sse(legacy.post("tasks/result", {"taskId": task_id}).text)
    second = parse_sse(legacy.post("tasks/result", {"taskId": task_id}).text)
    assert _progress(first) == [9] and _progress(second) == []


def test_the_highest_value_sent_is_raised_only_when_it_rises() -> None:
    world = World()
    record = world.tasks.create(NewTask(owner="o", tool="greet", arguments={}, progress_token="a"))
    claims = [world.tasks.claim_progress(record.task_id, "a", v) for v in (1, 1, 0.5, 2, 2.5)]
    assert claims == [True, False, False, True, True]
    # Per token: 1 and "1" are two tokens, each with its own highest value.
    assert world.tasks.claim_progress(record.task_id, 1, 1) is True
    assert world.tasks.claim_progress(record.task_id, "1", 1) is True
    assert world.tasks.claim_progress("no-such-task", "a", 9) is False


def test_a_step_stores_no_numbers_that_fall_but_still_says_what_happens() -> None:
    world = World(poll_interval_ms=1)
    written: list[tuple[str, float | None, int]] = []
    report_progress = world.store.report_progress

    def recording(task_id: str, report: Any, *args: Any, **kwargs: Any) -> None:
        numbers = report.progress.progress if report.progress is not None else None
        written.append((report.message, numbers, report.progress_count))
        report_progress(task_id, report, *args, **kwargs)

    world.store.report_progress = recording  # type: ignore[method-assign]
    arguments = {"steps": 4, "pause": 0.002}
    record = world.tasks.create(NewTask(owner="o", tool="half_way_question", arguments=arguments))
    world.settle()  # runs to its question at step 2
    assert written[-1] == ("step 2 of 4", 2, 2)
    world.tasks.submit_input("o", record.task_id, {"go_on": YES})
    world.settle()
    # Run again from the top: steps 1 and 2 came again; their messages were stored (the task's
    # statusMessage tells what happens), their numbers were not; 3 and 4 were.
    again = written[written.index(("step 2 of 4", 2, 2)) + 1 :]
    assert again[:2] == [("step 1 of 4", 2, 2), ("step 2 of 4", 2, 2)]
    assert again[-1] == ("step 4 of 4", 4, 4)


# -- the kit -------------------------------------------------------------------------------


class NoArgs(BaseModel):
    pass


def forgets_its_place(args: NoArgs, ctx: ToolContext) -> str:
    for step in range(1, 5):
        ctx.progress(progress=step, total=4)
        if step == 2:
            ctx.ask("go_on", Elicit("Carry on?", {"ok": {"type": "boolean"}}))
    return "done"


def keeps_its_place(args: NoArgs, ctx: ToolContext) -> str:
    start = (ctx.state or {}).get("done", 0) + 1
    for step in range(start, 5):
        ctx.progress(progress=step, total=4)
        if step == 2:
            ctx.checkpoint({"done": step})
            ctx.ask("go_on", Elicit("Carry on?", {"ok": {"type": "boolean"}}))
    return "done"


FORGETS = Tool(
    "forgets_its_place", "asks half way through its loop, without a checkpoint", NoArgs, forgets_its_place
)
KEEPS = Tool("keeps_its_place", "asks half way through its loop, after a checkpoint", NoArgs, keeps_its_place)


@pytest.mark.parametrize("as_task", [True, False])
def test_the_kit_warns_of_progress_that_would_go_back_after_a_question(as_task: bool) -> None:
    tester = ToolTester(FORGETS)
    run = tester.start(FORGETS) if as_task else tester.call(FORGETS)
    with pytest.warns(ProgressWentBack, match=r"forgets_its_place.*1.*after.*2.*checkpoint"):
        run.answer(go_on=accept(ok=True))
    assert run.status == "completed"


def test_the_kit_is_quiet_about_a_tool_that_keeps_its_place() -> None:
    tester = ToolTester(KEEPS)
    run = tester.start(KEEPS)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ProgressWentBack)
        run.answer(go_on=accept(ok=True))
    assert run.status == "completed" and [p.progress for p in run.progress] == [1, 2, 3, 4]
