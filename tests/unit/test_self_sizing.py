"""Self-sizing tools and handles the model drives in a few turns (issue 27 items 1 and 3), on
the in-memory fakes with the real eras, flow, worker and waiting.

A tool whose author declared nothing is possibly long until its runs say otherwise: its plain
call runs as a hidden task the request waits on, and its body time is learned per code version,
after which its plain calls run inline. A known-quick run that overruns is answered with an
error before the front's cut and is possibly long from then on. ``taskgate_task_result`` waits
for the task within its caller's budget.
"""

from __future__ import annotations

import importlib.util
import itertools
import pathlib
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
from pydantic import BaseModel

from taskgate.codes import REQUEST_TIMED_OUT
from taskgate.domain.durations import ToolDurations, code_version, duration_key
from taskgate.domain.ending import HUNG_UP
from taskgate.domain.errors import ServiceUnavailable
from taskgate.domain.model import TaskStatus
from taskgate.protocol.calls.handle_tools import HandleTools
from taskgate.protocol.calls.plan import Plan, decide
from taskgate.protocol.calls.policy import WAIT_HEADER
from taskgate.protocol.calls.runs import resolve_tool
from taskgate.testing.memory import FakeClock, MemoryDurationStore
from taskgate.tools import Elicit, GlueJobRun, ToolContext
from taskgate.tools.registry import Tool, ToolRegistry
from tests.fakes import World
from tests.mcp_client import envelope, headers_for, parse_sse
from tests.unit.test_plain_long_calls import _caller


class NoInput(BaseModel):
    pass


class Loops(BaseModel):
    ticks: int = 0


RUNS: list[str] = []  # what each body run saw (the API process's and the worker's alike)


def _tools(spend: list[Any]) -> ToolRegistry:
    """The tools of these tests; ``spend[0](seconds)`` passes fake time in a body (the memory's
    stream time, which the worker measures bodies by)."""

    def quick(args: NoInput, ctx: ToolContext) -> str:
        RUNS.append("quick")
        return "done"

    def half_minute(args: NoInput, ctx: ToolContext) -> str:
        RUNS.append("half_minute")
        spend[0](30)  # its body takes 30 s of the worker's time
        return "done after 30 s"

    def reports(args: NoInput, ctx: ToolContext) -> str:
        for step in (1, 2, 3):
            ctx.progress(f"step {step} of 3", progress=step, total=3)
        return "reported"

    def asks(args: NoInput, ctx: ToolContext) -> str:
        answer = ctx.ask("go", Elicit("Ship the release to production?", {"ok": {"type": "boolean"}}))
        return f"went: {answer.accepted}"

    def looks(args: Loops, ctx: ToolContext) -> str:
        # Checks whether to stop between ticks of real time (ticks=0: until told to).
        RUNS.append("looks")
        tick = 0
        while not ctx.cancelled() and (args.ticks == 0 or tick < args.ticks):
            time.sleep(0.01)
            tick += 1
        RUNS.append("looks stopped")
        return f"looked {tick} times"

    def busy(args: NoInput, ctx: ToolContext) -> str:
        # Never looks: pure Python until interrupted.
        RUNS.append("busy")
        spins = 0
        try:
            while True:
                spins += 1
        finally:
            RUNS.append("busy stopped")

    def job(args: NoInput, ctx: ToolContext) -> str:
        ctx.hand_off("nightly", GlueJobRun("nightly"))
        return "loaded"

    tools = ToolRegistry()
    for found in (
        Tool("quick", "Quick, never declared.", NoInput, quick),
        Tool("half_minute", "Runs 30 s, never declared.", NoInput, half_minute),
        Tool("declared_quick", "Declared quick.", NoInput, half_minute, expected_seconds=1),
        Tool("declared_long", "Declared long.", NoInput, quick, expected_seconds=120),
        Tool("reports", "Reports progress, never declared.", NoInput, reports),
        Tool("asks", "Asks, never declared.", NoInput, asks),
        Tool("asks_long", "Asks, declared long.", NoInput, asks, expected_seconds=600),
        Tool("looks", "Checks ctx.cancelled() as it works.", Loops, looks),
        Tool("declared_looks", "Checks as it works; declared quick.", Loops, looks, expected_seconds=1),
        Tool("busy", "Never looks.", NoInput, busy),
        Tool("job", "Hands a Glue job off.", NoInput, job),
    ):
        tools.add(found)
    return tools


def _world(**settings: Any) -> World:
    spend: list[Any] = [lambda seconds: None]
    world = World(_tools(spend), **settings)

    def passes(seconds: float) -> None:
        world.memory.stream_time += seconds

    spend[0] = passes
    return world


NOWHERE: list[Any] = [lambda seconds: None]


@pytest.fixture(autouse=True)
def _fresh_runs() -> Iterator[None]:
    RUNS.clear()
    yield


IDS = itertools.count(1)


def _call(world: World, tool: str, arguments: dict[str, Any] | None = None, **headers: str) -> Any:
    """A plain 2026-07-28 tools/call as a host makes it (no tasks declared), with ``headers``."""
    world.settle()
    params = {"name": tool, "arguments": arguments or {}}
    body = envelope("tools/call", params, next(IDS), tasks=False)
    body["params"]["_meta"]["progressToken"] = "p"
    sent = {**headers_for("tools/call", params), "accept": "application/json, text/event-stream", **headers}
    reply = world.server.handle(body, sent, "anonymous")
    if reply.stream is not None:
        return [e["data"] for e in parse_sse("".join(reply.stream))]
    return reply.body


def _answer(reply: Any) -> dict[str, Any]:
    messages = reply if isinstance(reply, list) else [reply]
    [final] = [m for m in messages if m and "method" not in m]
    return final  # type: ignore[no-any-return]


def _tasks(world: World) -> list[tuple[str, TaskStatus]]:
    return [(t.tool, t.status) for t in world.store.records.values()]


# -- learning --------------------------------------------------------------------------------


def test_a_tool_never_run_is_waited_on_then_known_quick_and_run_inline() -> None:
    world = _world()
    first = _answer(_call(world, "quick"))
    # Never run: a hidden task the request waited on, answered with the result.
    assert first["result"]["content"][0]["text"] == "done"
    assert _tasks(world) == [("quick", TaskStatus.COMPLETED)]
    assert world.memory.durations.longest == {duration_key(world.tools.get("quick")): 1}  # type: ignore[arg-type]
    # Its body time is known now: the next calls run inline, no task, nothing read or written
    # (this process has it in its cache; another reads it once).
    reads = world.memory.durations.reads
    for _ in range(3):
        again = _answer(_call(world, "quick"))
        assert again["result"]["content"][0]["text"] == "done"
    assert len(world.store.records) == 1
    assert (world.memory.durations.reads, world.memory.durations.writes) == (reads, 1)


def test_a_tool_known_to_run_long_stays_out_of_the_request() -> None:
    world = _world()
    _answer(_call(world, "half_minute", **{WAIT_HEADER: "60"}))
    assert world.memory.durations.longest[duration_key(world.tools.get("half_minute"))] == 30_000  # type: ignore[arg-type]
    _call(world, "half_minute", **{WAIT_HEADER: "60"})
    assert _tasks(world) == [("half_minute", TaskStatus.COMPLETED)] * 2


def test_what_the_author_declares_wins_over_what_was_learned() -> None:
    world = _world()
    world.known_quick("declared_long", seconds=0.01)
    world.known_quick("declared_quick", seconds=300)
    caller = _caller(world.root.policy, {}, False, True)
    for name, plan in (("declared_long", Plan.HANDLE), ("declared_quick", Plan.INLINE)):
        tool = world.tools.get(name)
        assert tool is not None
        known = world.root.durations.known_seconds(tool)
        decision = decide(world.root.policy, resolve_tool(world.root, name, {}), caller, lambda k=known: k)
        assert decision.plan is plan


def test_the_worker_notes_the_longest_step_and_never_lowers_it() -> None:
    world = _world()
    task = world.tasks.create(_new(world, "half_minute"))
    world.settle()
    key = duration_key(world.tools.get("half_minute"))  # type: ignore[arg-type]
    assert world.memory.durations.longest[key] == 30_000
    # A run no longer than what is known says nothing new, and writes nothing; what another
    # instance stored (longer) stays.
    world.memory.durations.longest[key] = 45_000
    writes = world.memory.durations.writes
    world.tasks.create(_new(world, "half_minute"))
    world.settle()
    assert world.memory.durations.longest[key] == 45_000 and world.memory.durations.writes == writes
    assert world.store.records[task.task_id].status is TaskStatus.COMPLETED


def test_a_step_cut_short_by_a_cancel_teaches_nothing() -> None:
    world = _world()
    task = world.tasks.create(_new(world, "looks", {"ticks": 5}))
    world.tasks.cancel("anonymous", task.task_id)
    world.settle()
    assert world.memory.durations.writes == 0


def test_a_question_ends_a_step_and_its_time_is_learned() -> None:
    world = _world()
    task = world.tasks.create(_new(world, "asks"))
    world.settle()
    assert world.store.records[task.task_id].status is TaskStatus.INPUT_REQUIRED
    assert world.memory.durations.longest[duration_key(world.tools.get("asks"))] >= 1  # type: ignore[arg-type]


def test_learning_is_per_code_version(tmp_path: pathlib.Path) -> None:
    versions = []
    for body in ("return 'a'", "return 'b'"):
        source = tmp_path / f"tool_{len(versions)}.py"
        source.write_text(f"def ping(args, ctx):\n    {body}\n")
        spec = importlib.util.spec_from_file_location(source.stem, source)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        versions.append(code_version(module.ping))
    assert versions[0] != versions[1]
    assert code_version(_tools(NOWHERE).get("quick").fn) == code_version(_tools(NOWHERE).get("busy").fn)  # type: ignore[union-attr]


def test_a_table_that_cannot_be_read_makes_a_tool_possibly_long_never_a_failed_call() -> None:
    class Down(MemoryDurationStore):
        def longest_step_ms(self, key: str) -> int | None:
            raise ServiceUnavailable("throttled")

        def raise_longest_step(self, key: str, ms: int, now_ms: int, expires_at_ms: int) -> bool:
            raise ServiceUnavailable("throttled")

    durations = ToolDurations(Down(), FakeClock(), time.monotonic)
    tool = _tools(NOWHERE).get("quick")
    assert tool is not None
    assert durations.known_seconds(tool) is None
    durations.note(tool, 2.0)  # logged, not raised


def test_what_the_api_read_is_trusted_for_a_while_then_read_again() -> None:
    store, now = MemoryDurationStore(), [0.0]
    durations = ToolDurations(store, FakeClock(), lambda: now[0], fresh_seconds=300)
    tool = _tools(NOWHERE).get("quick")
    assert tool is not None
    store.longest[duration_key(tool)] = 200
    assert durations.known_seconds(tool) == 0.2
    store.longest[duration_key(tool)] = 40_000  # another instance learned it runs long
    now[0] = 299
    assert durations.known_seconds(tool) == 0.2 and store.reads == 1
    now[0] = 301
    assert durations.known_seconds(tool) == 40 and store.reads == 2


# -- a known-quick tool that overruns --------------------------------------------------------


def _overrun_world() -> World:
    # A front that cuts at 4.5 s: an inline run has 0.5 s (the cut less 4 s) before it is stopped.
    world = _world(front_timeout_seconds=4.5, call_piece_seconds=0.5)
    world.known_quick("looks", "busy")
    return world


def test_a_known_quick_tool_that_overruns_gets_a_clear_error_before_the_cut_and_is_possibly_long_again() -> (
    None
):
    world = _overrun_world()
    started = time.monotonic()
    error = _answer(_call(world, "looks"))["error"]
    assert time.monotonic() - started < 2  # answered at the deadline, well before the cut
    assert error["code"] == REQUEST_TIMED_OUT
    assert "Tool looks ran for" in error["message"] and "was stopped" in error["message"]
    assert "From its next call on it runs in the background" in error["message"]
    assert (
        error["data"]["tool"] == "looks"
        and error["data"]["next"] == "its next call runs as a background task"
    )
    # Told to stop, it stopped; it ran once, and nothing of it runs on or runs again.
    assert RUNS == ["looks", "looks stopped"] and world.store.records == {}
    assert world.slots.in_use == 0
    # Possibly long from now on (it ran at least as long as a request may run it): the next
    # plain call is not run inside the request.
    looks = world.tools.get("looks")
    assert looks is not None
    known = world.root.durations.known_seconds(looks)
    assert known is not None and known >= 0.5
    caller = _caller(world.root.policy, {}, False, True)
    request = resolve_tool(world.root, "looks", {})
    assert decide(world.root.policy, request, caller, lambda: known).plan is Plan.WAIT


def test_a_declared_quick_tool_that_overruns_is_told_it_stays_inside_the_request() -> None:
    world = _overrun_world()
    error = _answer(_call(world, "declared_looks"))["error"]
    assert error["code"] == REQUEST_TIMED_OUT and "Its author declared it quick" in error["message"]
    assert error["data"]["next"] == "it runs inside the request again: its expected_seconds says it is quick"
    # What its author said wins over what was learned of it: still inline.
    caller = _caller(world.root.policy, {}, False, True)
    request = resolve_tool(world.root, "declared_looks", {})
    assert decide(world.root.policy, request, caller, lambda: 30.0).plan is Plan.INLINE


def test_a_tool_that_never_looks_is_interrupted_where_it_is() -> None:
    world = _overrun_world()
    error = _answer(_call(world, "busy"))["error"]
    assert error["code"] == REQUEST_TIMED_OUT and error["data"]["tool"] == "busy"
    # The interruption ended its thread: nothing of the tool is alive after the answer.
    assert RUNS == ["busy", "busy stopped"]
    assert not [t for t in threading.enumerate() if t.name == "tool busy"]
    assert world.slots.in_use == 0


def test_a_quick_run_answers_as_before_with_its_deadline_unused() -> None:
    world = _overrun_world()
    result = _answer(_call(world, "looks", {"ticks": 3}))["result"]
    assert result["content"][0]["text"] == "looked 3 times"
    assert world.memory.durations.writes == 0  # a quick run writes nothing


# -- waiting on the row ---------------------------------------------------------------------


def test_a_plain_call_waited_on_carries_the_tools_progress_before_its_result() -> None:
    world = _world()
    reply = _call(world, "reports")
    assert isinstance(reply, list)  # an SSE reply: the notifications, then the result
    progress = [m["params"]["progress"] for m in reply if m.get("method") == "notifications/progress"]
    assert progress and progress == sorted(progress) and progress[-1] == 3
    assert _answer(reply)["result"]["content"][0]["text"] == "reported"


def test_a_caller_that_waits_for_nothing_gets_a_handle_at_once() -> None:
    world = _world()
    result = _answer(_call(world, "quick", **{WAIT_HEADER: "0"}))["result"]
    assert "taskgate_task_result" in result["content"][0]["text"]
    assert _tasks(world) == [("quick", TaskStatus.WORKING)]


def test_a_fresh_tool_that_asks_puts_its_question_to_a_caller_that_answers_in_rounds() -> None:
    world = _world()
    asked = _answer(_call(world, "asks"))["result"]
    assert asked["resultType"] == "input_required" and list(asked["inputRequests"]) == ["go"]
    # The hidden task waits on the person (issue 28): the round with the answer, carrying the
    # state that names it, picks it up where it is (test_plain_rounds.py).
    assert _tasks(world) == [("asks", TaskStatus.INPUT_REQUIRED)]
    params = {
        "name": "asks",
        "arguments": {},
        "inputResponses": {"go": {"action": "accept", "content": {"ok": True}}},
        "requestState": asked["requestState"],
    }
    body = envelope("tools/call", params, 2, tasks=False)
    sent = {**headers_for("tools/call", params), "accept": "application/json, text/event-stream"}
    reply = world.server.handle(body, sent, "anonymous")
    done = (
        reply.body if reply.stream is None else _answer([e["data"] for e in parse_sse("".join(reply.stream))])
    )
    assert done["result"]["content"][0]["text"] == "went: True"
    assert _tasks(world) == [("asks", TaskStatus.COMPLETED)]


def test_a_waiting_request_takes_one_of_its_owners_places_and_none_past_them() -> None:
    world = _world(max_held_calls_per_owner=1)
    record = world.tasks.create(_new(world, "job", owner="ann"))
    held = world.root.holds.take("ann")
    assert held is not None
    # Every place held: no wait at all (its caller gets a handle, or "ask again").
    read, waited = world.root.row_wait.wait_for("ann", record, 20)
    assert waited == 0 and read.status is TaskStatus.WORKING
    held.release()
    read, waited = world.root.row_wait.wait_for("ann", record, 20)
    assert waited >= 20 and read.status is TaskStatus.WORKING  # waited the whole budget on the job
    assert world.root.holds.take("ann") is not None  # and gave its place back


# -- handles the model drives in a few turns ------------------------------------------------


def _job_ends_at(world: World, seconds: float) -> None:
    """The Glue job a ``job`` task waits on ends once ``seconds`` of waiting have passed."""
    settle = world.memory.on_wait

    def wait() -> None:
        settle()
        for task_id in list(world.memory.jobs.running):
            if world.memory.stream_time >= seconds:
                world.finish_job(task_id, {"rows": 1})
        settle()

    world.memory.on_wait = wait


@pytest.mark.parametrize(
    ("said", "handed_at", "result_calls"),
    [
        # A host that says it waits a minute: the call itself waits 25 s (the front's cut less
        # 4 s), then one taskgate_task_result call waits for the rest.
        ("60", 25, 1),
        # A host that says nothing is taken to wait 3.5 s (OpenAI Agents gives up at 5): each
        # taskgate_task_result call waits 3.5 s.
        (None, 3.5, 12),
        # A host that says it waits 10 s.
        ("10", 10, 4),
    ],
)
def test_a_45_s_tools_handle_is_driven_to_its_result_in_as_few_calls_as_the_caller_waits_for(
    said: str | None, handed_at: float, result_calls: int
) -> None:
    world = _world()
    world.known_quick("job")  # its step (the hand-off) is quick; the job takes 45 s
    _job_ends_at(world, 45)
    headers = {WAIT_HEADER: said} if said is not None else {}
    handed = _answer(_call(world, "job", **headers))["result"]
    # (The waits count from each request's arrival, on the real clock: a few ms less.)
    assert world.memory.stream_time == pytest.approx(handed_at, abs=0.5)
    handle = handed["structuredContent"]["handle"]
    calls = 0
    while True:
        calls += 1
        got = _answer(_call(world, "taskgate_task_result", {"handle": handle}, **headers))["result"]
        if got.get("structuredContent", {}).get("status") in (None, "completed"):
            break
        assert got["structuredContent"]["askAgainInSeconds"] == 0  # "call again now: it waits"
        assert calls < 50
    assert got["content"][0]["text"] == "loaded"
    assert calls == result_calls


@pytest.mark.parametrize("asked_after", [False, True])
def test_a_handle_given_after_a_wait_must_be_asked_after_or_its_work_stops(asked_after: bool) -> None:
    # Behind a front that buffers nothing tells the function that a caller gave up during the
    # wait: the handle it would have had is then never asked after, and the work stops.
    world = _world()
    world.known_quick("job")  # its job never ends here
    handed = _answer(_call(world, "job"))["result"]
    assert handed["structuredContent"]["claimWithinSeconds"] == 90
    assert "Ask for it within 90 seconds" in handed["content"][0]["text"]
    handle = handed["structuredContent"]["handle"]
    if asked_after:
        status = _answer(_call(world, "taskgate_task_status", {"handle": handle}))["result"]
        assert status["structuredContent"]["status"] == "working"
    world.clock.advance(91_000)
    report = world.sweeper.sweep()
    if asked_after:
        # The model holds the handle: its task is the model's to drive, and nothing watches it.
        assert report.cancelled == {} and world.store.records[handle].status is TaskStatus.WORKING
    else:
        assert report.cancelled == {handle: HUNG_UP}
        assert world.memory.jobs.stopped == {handle: HUNG_UP}


def test_the_handle_tools_are_always_listed_and_the_list_never_changes_as_tools_are_learned() -> None:
    world = _world()

    def listed() -> list[str]:
        params: dict[str, Any] = {}
        body = envelope("tools/list", params, 9, tasks=False)
        reply = world.server.handle(body, headers_for("tools/list", params), "anonymous")
        return [t["name"] for t in reply.body["result"]["tools"]]

    before = listed()
    assert {"taskgate_task_status", "taskgate_task_result", "taskgate_task_cancel"} <= set(before)
    _call(world, "quick")
    _call(world, "half_minute", **{WAIT_HEADER: "60"})
    assert listed() == before


def test_the_status_of_a_task_waiting_for_an_answer_says_what_it_asks_without_a_way_to_answer() -> None:
    world = _world()
    handed = _answer(_call(world, "asks_long"))["result"]
    handle = handed["structuredContent"]["handle"]
    world.settle()
    status = _answer(_call(world, "taskgate_task_status", {"handle": handle}))["result"]
    text = status["content"][0]["text"]
    assert status["structuredContent"]["status"] == "input_required"
    assert status["structuredContent"]["asks"] == ["Ship the release to production?"]
    assert '"Ship the release to production?"' in text
    assert "Tell your user" in text and "Do not answer it for them" in text
    # taskgate_task_result does not wait on a task that waits for a person: to a host that can
    # ask its user (it declared elicitation) it hands the question in a round of the call, so
    # the host asks the person (issue 28); to one that cannot, it says the same as the status.
    result = _answer(_call(world, "taskgate_task_result", {"handle": handle}))["result"]
    assert result["resultType"] == "input_required"
    assert result["inputRequests"]["go"]["params"]["message"] == "Ship the release to production?"
    body = envelope(
        "tools/call", {"name": "taskgate_task_result", "arguments": {"handle": handle}}, 99, tasks=False
    )
    body["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"] = {}
    told = world.server.handle(body, headers_for("tools/call", body["params"]), "anonymous").body["result"]
    assert told["structuredContent"]["asks"] == ["Ship the release to production?"]
    # No tool lets the model answer: the handle tools take a handle, nothing else.
    schemas = {t["name"]: t["inputSchema"] for t in HandleTools.definitions(with_task_support=False)}
    assert all(set(s["properties"]) == {"handle"} for s in schemas.values())


def _new(world: World, tool: str, arguments: dict[str, Any] | None = None, owner: str = "anonymous") -> Any:
    from taskgate.domain.model import NewTask

    return NewTask(owner=owner, tool=tool, arguments=arguments or {}, arguments_bytes=2)
