"""A hidden task's questions and waits reach a 2026-07-28 plain caller in rounds of its own
call (issue 28): a held call whose task asks ends with ``input_required`` (the question and a
sealed ``requestState`` naming the task), and the next call with the answer picks the task up
where it is; a long tool with an outputSchema goes on round by round behind a front that
buffers; a state is taken once (replayed, answered twice, moved to another owner or call:
refused, the task unharmed); a client that cannot take rounds is told what it lacks; a person
thinking is not a hang-up. On the in-memory fakes, with the real era, flow, worker and sweeper."""

from __future__ import annotations

import dataclasses
from typing import Any

from taskgate_cli import protocol

from taskgate.domain.ending import HUNG_UP
from taskgate.domain.model import TaskRecord, TaskStatus
from taskgate.protocol.calls.plan import longest_in_rounds
from taskgate.protocol.calls.policy import CLIENT_MAX_ROUNDS
from taskgate.protocol.calls.rounds import THINK_GRACE_MS
from tests.fakes import World
from tests.mcp_client import CLIENT_INFO, parse_sse

STREAMING = {"front_streaming": True, "front_timeout_seconds": 900}
GO_ON = {"go": {"action": "accept", "content": {"ok": True}}}
REFUSED = {"code": -32602, "message": "Invalid or expired requestState"}
# What each kind of 2026-07-28 plain caller declares (none opted in to tasks).
ELICITS = {"elicitation": {"form": {}, "url": {}}}  # mcp's Client, Strands, PydanticAI with a handler
NOTHING: dict[str, Any] = {}  # OpenAI Agents: no elicitation hook, and it raises on input_required


class Call:
    """What one round of a plain call answered: the events it streamed, then its response."""

    def __init__(self, reply: Any) -> None:
        self.status = reply.status
        if reply.stream is None:
            self.events: list[dict[str, Any]] = []
            self.response: dict[str, Any] = reply.body
            return
        self.events = [e["data"] for e in parse_sse("".join(reply.stream)) if e["data"]]
        self.response = self.events[-1]

    @property
    def result(self) -> dict[str, Any]:
        assert "result" in self.response, self.response
        return self.response["result"]  # type: ignore[no-any-return]

    @property
    def error(self) -> dict[str, Any]:
        assert "error" in self.response, self.response
        return self.response["error"]  # type: ignore[no-any-return]

    @property
    def progress(self) -> list[float]:
        return [e["params"]["progress"] for e in self.events if e.get("method") == "notifications/progress"]


def plain(
    world: World,
    name: str,
    arguments: dict[str, Any],
    msg_id: int = 1,
    *,
    state: str | None = None,
    answers: dict[str, Any] | None = None,
    capabilities: dict[str, Any] = ELICITS,
    owner: str = "anonymous",
) -> Call:
    """One round of a 2026-07-28 plain tools/call (no tasks extension), as the SDKs send it."""
    params: dict[str, Any] = {"name": name, "arguments": arguments}
    if state is not None:
        params["requestState"] = state
    if answers is not None:
        params["inputResponses"] = answers
    meta = {
        "io.modelcontextprotocol/protocolVersion": protocol.PROTOCOL_2026,
        "io.modelcontextprotocol/clientCapabilities": capabilities,
        "io.modelcontextprotocol/clientInfo": CLIENT_INFO,
        "progressToken": f"p{msg_id}",
    }
    body = protocol.envelope("tools/call", params, msg_id, meta)
    return Call(world.handle(body, protocol.headers_2026("tools/call", params), owner=owner))


def only_task(world: World) -> TaskRecord:
    (record,) = world.store.records.values()
    return record


# -- a held call's question --------------------------------------------------------------------


def test_a_held_call_whose_tool_asks_ends_with_the_question_and_the_answer_finishes_it() -> None:
    world = World(**STREAMING)
    asked = plain(world, "long_job", {"minutes": 0.5, "steps": 3, "ask": True})
    assert asked.status == 200
    result = asked.result
    assert result["resultType"] == "input_required"
    assert result["inputRequests"]["go"]["method"] == "elicitation/create"
    assert result["inputRequests"]["go"]["params"]["message"] == "Go on?"
    assert result["requestState"].startswith("tg1.")
    task = only_task(world)
    assert task.status is TaskStatus.INPUT_REQUIRED  # parked, waiting on the person

    done = plain(
        world,
        "long_job",
        {"minutes": 0.5, "steps": 3, "ask": True},
        2,
        state=result["requestState"],
        answers=GO_ON,
    )
    assert done.result["resultType"] == "complete"
    assert done.result["content"][0]["text"] == "long job done after 3 steps"
    assert done.progress[-1] == 3
    assert world.store.records[task.task_id].input_responses == GO_ON  # the answer reached the tool
    assert len(world.store.records) == 1  # the same task, picked up where it was


def test_a_question_is_never_sent_to_a_client_that_did_not_declare_it_can_answer() -> None:
    """OpenAI Agents declares nothing: its tool's question fails the task with -32021 naming
    what the client lacks, never an input_required result it would raise on."""
    world = World(**STREAMING)
    call = plain(world, "long_job", {"minutes": 0.5, "ask": True}, capabilities=NOTHING)
    assert call.error["code"] == -32021
    assert "elicitation (form mode)" in call.error["message"]
    assert "did not declare" in call.error["message"]
    assert not any(
        "resultType" in (e.get("result") or {}) and e["result"]["resultType"] == "input_required"
        for e in call.events
    )


# -- an outputSchema tool behind a front that buffers --------------------------------------------


def test_a_long_structured_call_behind_a_buffering_front_goes_on_round_by_round() -> None:
    world = World()  # the HTTP API's front: buffers, cuts at 29 s; a round is a 20 s piece
    arguments = {"seconds": 120, "run": "r", "quick": True}
    world.memory.on_wait = lambda: None  # the tool is still working when the first round's time is up
    first = plain(world, "long_report", arguments)
    assert first.result["resultType"] == "input_required"
    assert "inputRequests" not in first.result  # asks nothing: it only carries the call on
    task = only_task(world)
    assert task.status is TaskStatus.WORKING and task.watched_until_ms is not None

    world.memory.on_wait = world.settle
    done = plain(world, "long_report", arguments, 2, state=first.result["requestState"])
    assert done.result["structuredContent"] == {"run": "r", "seconds": 120.0, "ticks": 480, "went_on": False}
    assert done.progress[-1] == 480


def test_a_client_that_takes_no_rounds_is_told_what_it_lacks_and_nothing_runs() -> None:
    world = World()
    call = plain(world, "long_report", {"seconds": 120, "quick": True}, capabilities=NOTHING)
    assert call.status == 400 and call.error["code"] == -32021
    message = call.error["message"]
    assert "outputSchema" in message and "declared none of elicitation, sampling or roots" in message
    assert "io.modelcontextprotocol/tasks" in message
    assert "streaming endpoint" not in message  # this deployment has none: only what can work
    assert world.store.records == {}


def test_a_tool_longer_than_its_rounds_can_carry_is_refused_before_it_runs() -> None:
    world = World()
    longest = longest_in_rounds(world.root.policy.front)
    assert longest == 25 * 11  # behind the HTTP API: 11 requests of 25 s (its 29 s cut, less a margin)
    call = plain(world, "long_report", {"seconds": longest + 60, "quick": True})
    assert call.error["code"] == -32021
    assert f"lasts at most {longest:.0f} s here" in call.error["message"]
    assert world.store.records == {}


def test_the_streaming_endpoint_is_named_only_where_the_deployment_has_one() -> None:
    world = World(stream_public_url="https://abc.execute-api.us-east-1.amazonaws.com/stream")
    call = plain(world, "long_report", {"seconds": 600, "quick": True})
    assert "https://abc.execute-api.us-east-1.amazonaws.com/stream/mcp" in call.error["message"]


def test_the_call_ends_with_a_clear_error_when_the_clients_rounds_run_out() -> None:
    world = World()
    arguments = {"seconds": 250, "run": "r", "quick": True}
    world.memory.on_wait = lambda: None  # it never finishes
    call = plain(world, "long_report", arguments)
    for n in range(CLIENT_MAX_ROUNDS):
        assert call.result["resultType"] == "input_required", n
        call = plain(world, "long_report", arguments, n + 2, state=call.result["requestState"])
    # The client takes no 11th input_required: the call ends, and its work with it.
    assert call.error["code"] == -32021
    assert "ran longer than a plain call can last here, about 275 s" in call.error["message"]
    assert "io.modelcontextprotocol/tasks" in call.error["message"]
    assert only_task(world).status is TaskStatus.CANCELLED


# -- a state is taken once ---------------------------------------------------------------------


def _parked(world: World) -> tuple[dict[str, Any], str]:
    arguments = {"minutes": 0.5, "steps": 3, "ask": True}
    asked = plain(world, "long_job", arguments)
    return arguments, asked.result["requestState"]


def test_a_replayed_or_twice_answered_state_is_refused_and_the_task_goes_on() -> None:
    world = World(**STREAMING)
    arguments, state = _parked(world)
    done = plain(world, "long_job", arguments, 2, state=state, answers=GO_ON)
    assert done.result["content"][0]["text"] == "long job done after 3 steps"
    task = only_task(world)
    again = plain(world, "long_job", arguments, 3, state=state, answers={"go": {"action": "decline"}})
    assert again.status == 400 and again.error == REFUSED
    after = world.store.records[task.task_id]
    assert after.status is TaskStatus.COMPLETED and after.input_responses == GO_ON  # unharmed


def test_a_state_answered_twice_while_the_task_runs_is_refused_and_changes_nothing() -> None:
    world = World(**STREAMING)
    arguments, state = _parked(world)
    task = only_task(world)
    world.memory.on_wait = lambda: None
    # The first answer is taken (the stream is not read on: the task is resumed, not run yet).
    first = world.handle(*_round(arguments, state, GO_ON, 2))
    assert first.status == 200
    resumed = world.store.records[task.task_id]
    assert resumed.status is TaskStatus.WORKING and resumed.input_responses == GO_ON
    second = plain(world, "long_job", arguments, 3, state=state, answers={"go": {"action": "decline"}})
    assert second.error == REFUSED
    assert world.store.records[task.task_id].input_responses == GO_ON


def _round(arguments: dict[str, Any], state: str, answers: dict[str, Any], msg_id: int) -> tuple[Any, Any]:
    params = {"name": "long_job", "arguments": arguments, "requestState": state, "inputResponses": answers}
    meta = {
        "io.modelcontextprotocol/protocolVersion": protocol.PROTOCOL_2026,
        "io.modelcontextprotocol/clientCapabilities": ELICITS,
        "io.modelcontextprotocol/clientInfo": CLIENT_INFO,
    }
    return protocol.envelope("tools/call", params, msg_id, meta), protocol.headers_2026("tools/call", params)


def test_a_state_moved_to_another_owner_or_call_is_refused_and_the_task_is_unharmed() -> None:
    world = World(**STREAMING)
    arguments, state = _parked(world)
    task = only_task(world)
    stolen = plain(world, "long_job", arguments, 2, state=state, answers=GO_ON, owner="mallory")
    other_call = plain(world, "long_job", {**arguments, "steps": 4}, 3, state=state, answers=GO_ON)
    other_tool = plain(world, "long_report", {"seconds": 60, "quick": True}, 4, state=state, answers=GO_ON)
    assert stolen.error == REFUSED and other_call.error == REFUSED and other_tool.error == REFUSED
    parked = world.store.records[task.task_id]
    assert parked.status is TaskStatus.INPUT_REQUIRED and parked.input_responses == {}
    # Its own caller still answers it.
    done = plain(world, "long_job", arguments, 5, state=state, answers=GO_ON)
    assert done.result["content"][0]["text"] == "long job done after 3 steps"


def test_an_old_answer_never_answers_a_newer_question_with_the_same_key() -> None:
    world = World(**STREAMING)
    arguments, state = _parked(world)
    task = only_task(world)
    record = world.store.records[task.task_id]
    # The task moved on and asks again under the same key (a new parking, a new token).
    world.store.records[task.task_id] = dataclasses.replace(record, task_token="another-parking")
    plain(world, "long_job", arguments, 2, state=state, answers=GO_ON)
    assert world.store.records[task.task_id].input_responses == {}


# -- think time and hang-ups ---------------------------------------------------------------------


def test_a_person_thinking_is_not_a_hang_up_until_the_questions_state_expires() -> None:
    world = World(**STREAMING)
    _parked(world)
    task = only_task(world)
    ttl_ms = world.settings.request_state_ttl_seconds * 1000
    assert world.store.records[task.task_id].watched_until_ms == world.clock() + ttl_ms + THINK_GRACE_MS
    world.clock.advance(world.settings.calls.hang_up_seconds * 1000 * 5)  # far past the hang-up window
    world.sweeper.sweep()
    assert world.store.records[task.task_id].status is TaskStatus.INPUT_REQUIRED
    world.clock.advance(ttl_ms + THINK_GRACE_MS)  # the question's state has expired: nobody will answer
    world.sweeper.sweep()
    gone = world.store.records[task.task_id]
    assert gone.status is TaskStatus.CANCELLED and gone.status_message == HUNG_UP


def test_a_person_may_answer_after_the_key_ring_was_read_again() -> None:
    """The key ring is read again every 15 minutes; a question's state lives 30: a local
    server's own key must be the same key when it is read again."""
    world = World(**STREAMING)
    arguments, state = _parked(world)
    world.clock.advance(20 * 60_000)
    done = plain(world, "long_job", arguments, 2, state=state, answers=GO_ON)
    assert done.result["content"][0]["text"] == "long job done after 3 steps"


def test_the_question_state_lasts_half_an_hour_by_default() -> None:
    assert World().settings.request_state_ttl_seconds == 1800


# -- a handle's taskgate_task_result -------------------------------------------------------------


def _handle_result(world: World, handle: str, msg_id: int, **round_: Any) -> Call:
    return plain(world, "taskgate_task_result", {"handle": handle}, msg_id, **round_)


def test_a_handles_result_asks_the_tasks_question_of_the_host_not_the_model() -> None:
    world = World()  # behind the HTTP API a long tool that asks is handed over at once
    handed = plain(world, "long_job", {"minutes": 0.5, "steps": 2, "ask": True})
    handle = handed.result["structuredContent"]["handle"]
    world.settle()  # it runs, asks, and parks
    asked = _handle_result(world, handle, 2)
    assert asked.result["resultType"] == "input_required"
    assert asked.result["inputRequests"]["go"]["params"]["message"] == "Go on?"
    answered = _handle_result(world, handle, 3, state=asked.result["requestState"], answers=GO_ON)
    assert answered.result["resultType"] == "complete"
    world.settle()
    done = _handle_result(world, handle, 4)
    assert done.result["content"][0]["text"] == "long job done after 2 steps"
    # The same state again: refused, and the task's answer stays the first one.
    replay = _handle_result(
        world, handle, 5, state=asked.result["requestState"], answers={"go": {"action": "decline"}}
    )
    assert replay.error == REFUSED
    assert world.store.records[handle].input_responses == GO_ON


def test_a_handles_result_tells_a_client_that_cannot_be_asked_what_it_lacks() -> None:
    world = World()
    handed = plain(world, "long_job", {"minutes": 0.5, "ask": True})
    handle = handed.result["structuredContent"]["handle"]
    world.settle()
    told = _handle_result(world, handle, 2, capabilities=NOTHING)
    text = told.result["content"][0]["text"]
    assert 'waiting for an answer to: "Go on?"' in text
    assert "did not declare elicitation (form mode)" in text
    assert world.store.records[handle].status is TaskStatus.INPUT_REQUIRED
