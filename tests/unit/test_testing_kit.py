"""``taskgate.testing`` (issue 17, item 2): a tool author's test in a few lines, seeing every
progress update and log line a tool reports, answering its questions, cancelling it, as a
task and as a plain call. On the old main a test had to build ``World(poll_interval_ms=0)``
to see more than the first progress update of a task: the row keeps at most one write per
poll interval, and that was all a test could read."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel

from taskgate.testing import LogLine, Progress, ToolTester, accept, decline, dismiss, roots, sampled
from taskgate.tools import Callback, Elicit, ProtocolError, StepFunctionsExecution, ToolContext
from taskgate.tools.registry import Tool
from tests import fixture_tools


class Steps(BaseModel):
    steps: int = 50


def counting(args: Steps, ctx: ToolContext) -> str:
    for step in range(1, args.steps + 1):
        ctx.progress(f"step {step}", progress=step, total=args.steps)
        if step % 10 == 0:
            ctx.log("debug", "ten more", {"step": step})
    return f"counted {args.steps}"


COUNTING = Tool("counting", "count, reporting each step", Steps, counting)


def test_every_progress_update_of_a_task_is_seen_whatever_the_poll_interval() -> None:
    tester = ToolTester(COUNTING)  # the deployment's default pollInterval: 1 s
    run = tester.start(COUNTING, {"steps": 50})
    assert run.status == "completed" and run.text == "counted 50"
    assert len(run.progress) == 50
    assert run.progress[-1] == Progress(50, 50, "step 50")
    # Every log line too, at every level: what a client hears depends on the level it asked for.
    assert run.logs == [LogLine("debug", "ten more", {"step": n}) for n in (10, 20, 30, 40, 50)]
    # What a polling client could have read: far fewer writes than reports.
    assert tester.memory.store.records[str(run.task_id)].status_message != "step 25"


def test_the_same_tool_as_a_plain_call_reports_the_same() -> None:
    run = ToolTester(COUNTING).call("counting", {"steps": 5})
    assert run.task_id is None and run.status == "completed"
    assert [p.progress for p in run.progress] == [1, 2, 3, 4, 5]


def test_a_cancelled_task_stops_at_the_tools_next_report() -> None:
    run = ToolTester(COUNTING).start(COUNTING, {"steps": 50}, cancel_after=3)
    assert run.status == "cancelled" and run.result is None
    assert [p.progress for p in run.progress] == [1, 2, 3]
    assert run.status_message == "The task was cancelled by the client."


def test_a_question_parks_the_task_and_the_tool_runs_again_from_the_top() -> None:
    tester = ToolTester(fixture_tools.async_rollout)
    run = tester.start("async_rollout", {"service": "web", "waves": 2})
    assert run.status == "input_required" and run.runs == 1
    assert run.questions["confirm"].method == "elicitation/create"
    run.answer(confirm=accept(ok=True))
    assert run.status == "completed" and run.runs == 2
    # The log line before the question was made by both runs.
    assert [line.message for line in run.logs].count("planning web") == 2


def test_a_parked_task_can_be_cancelled() -> None:
    run = ToolTester(fixture_tools.async_rollout).start("async_rollout", {"service": "web"})
    assert run.cancel().status == "cancelled"
    with pytest.raises(AssertionError, match="nothing to answer"):
        run.answer(confirm=accept(ok=True))


@pytest.mark.parametrize(
    ("answer", "text"), [(decline(), "web: not confirmed"), (dismiss(), "web: not confirmed")]
)
def test_a_declined_question_is_the_tools_to_handle(answer: dict[str, Any], text: str) -> None:
    run = ToolTester(fixture_tools.async_rollout).start("async_rollout", {"service": "web"})
    assert run.answer(confirm=answer).is_error and run.text == text


def test_a_plain_call_carries_earlier_answers_in_its_request_state() -> None:
    # two_samples asks three times, one question per round; the tester echoes requestState.
    run = ToolTester(fixture_tools.two_samples).call("two_samples")
    assert list(run.questions) == ["sampling-1"]
    run.answer({"sampling-1": sampled("Paris")})
    assert list(run.questions) == ["sampling-2"]
    run.answer({"sampling-2": sampled("Rome")})
    run.answer({"roots-1": roots("file:///work", "file:///home")})
    assert run.text == "Paris+Rome in 2 roots"


def test_an_answer_to_no_open_question_is_a_mistake_in_the_test() -> None:
    run = ToolTester(fixture_tools.async_rollout).start("async_rollout", {"service": "web"})
    with pytest.raises(AssertionError, match=r"no open question \['confrim'\]"):
        run.answer(confrim=accept(ok=True))


def test_the_owner_is_the_testers_or_the_calls() -> None:
    def whoami(args: BaseModel, ctx: ToolContext) -> str:
        return str(ctx.owner)

    tester = ToolTester(Tool("whoami", "", Steps, whoami), owner="alice")
    assert tester.call("whoami").text == "alice"
    assert tester.start("whoami", owner="bob").text == "bob"


def test_a_protocol_error_fails_the_task_and_the_plain_call() -> None:
    def refuses(args: BaseModel, ctx: ToolContext) -> str:
        raise ProtocolError(-32001, "refused", {"why": "policy"})

    tester = ToolTester(Tool("refuses", "", Steps, refuses))
    task = tester.start("refuses")
    assert task.status == "failed" and task.error == {
        "code": -32001,
        "message": "refused",
        "data": {"why": "policy"},
    }
    plain = tester.call("refuses")
    assert plain.status == "failed" and plain.error is not None and plain.error["code"] == -32001


def test_what_the_client_declares_limits_what_a_tool_may_ask() -> None:
    tester = ToolTester(fixture_tools.sign_in, capabilities={"elicitation": {"form": {}}})
    refused = tester.call("sign_in")
    assert refused.status == "failed" and refused.error is not None
    assert refused.error["data"] == {"requiredCapabilities": {"elicitation": {"url": {}}}}
    url = tester.call("sign_in", capabilities={"elicitation": {"url": {}}})
    assert url.questions["sign_in"].params["url"] == "https://example.com/sign-in"


def test_tools_come_from_functions_modules_and_names() -> None:
    tester = ToolTester("taskgate_tools", fixture_tools.forecast)
    names = {t.name for t in tester.tools}
    assert {"orders_report", "archive_orders", "forecast"} <= names
    assert tester.call(fixture_tools.forecast, {"city": "Oslo"}).structured == {
        "city": "Oslo",
        "celsius": 21.5,
    }
    with pytest.raises(TypeError, match="is not a tool: decorate it with @tool"):
        ToolTester(counting)
    with pytest.raises(AssertionError, match="not one of this tester's tools"):
        tester.call("counting")


def test_arguments_the_model_refuses_are_the_callers_error() -> None:
    run = ToolTester(COUNTING).start("counting", {"steps": "many"})
    assert run.status == "failed" and run.error is not None and run.error["code"] == -32602


def test_questions_asked_before_the_task_exists_are_answered_the_same_way() -> None:
    # test_tool_with_task asks in its prepare step, before any task exists, then again inside it.
    ask = Elicit(message="?", properties={"name": {"type": "string"}})
    assert ask.to_request()["method"] == "elicitation/create"
    from taskgate_conformance import tools as conformance

    run = ToolTester(conformance.test_tool_with_task).start("test_tool_with_task")
    assert run.status == "input_required" and run.task_id is None
    run.answer(user_name=accept(name="Ada"))
    assert run.task_id is not None and run.status == "completed" and run.text == "Hello, Ada!"


class Day(BaseModel):
    day: str


SENT: list[str] = []


def load_and_confirm(args: Day, ctx: ToolContext) -> str:
    loaded = ctx.hand_off(
        "load", StepFunctionsExecution("arn:aws:states:r:1:stateMachine:etl", {"day": args.day})
    )
    confirmed = ctx.hand_off("confirm", Callback(send=SENT.append))
    return f"{loaded.output['rows']} rows, confirmed by {confirmed.output['by']}"


LOAD_AND_CONFIRM = Tool("load_and_confirm", "load a day, then wait for the partner", Day, load_and_confirm)


def test_a_tool_that_hands_a_job_off_is_tested_by_ending_the_job() -> None:
    tester = ToolTester(LOAD_AND_CONFIRM)
    run = tester.start("load_and_confirm", {"day": "2027-01-15"})
    assert run.status == "working" and run.job is not None and run.job.key == "load"
    run.finish_job({"rows": 3})
    assert run.job is not None and run.job.key == "confirm" and len(SENT) == 1
    assert tester.deliver(SENT[0], {"status": "succeeded", "output": {"by": "ann"}}) == (
        200,
        {"status": "accepted"},
    )
    assert run.status == "completed" and run.text == "3 rows, confirmed by ann"
    failed = tester.start("load_and_confirm", {"day": "2027-01-16"})
    failed.finish_job(error="States.TaskFailed", cause="no file")
    assert failed.is_error and failed.text == "The state machine etl failed (States.TaskFailed): no file"
