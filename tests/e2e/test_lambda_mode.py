"""The local server's Lambda mode (taskgate/local/lambda_mode.py) behind the API Gateway
stand-in, as a deployment's clients meet it (issue 27 item 2), with the function's timeout
scaled down to 6 s (the front's cut at 7 s, as API Gateway's 30 s is above ApiFunction's 29 s):

- a thread a request leaves running after its answer is frozen with the request's
  environment (it beats no more until that environment's next invocation) and reported;
  threads that end before the answer (an async tool's loop) are not;
- a request still working at the function's timeout is cut there: the caller gets API
  Gateway's 500 for a failed invocation, its work stops at once (the environment is killed),
  and the next request gets a fresh environment.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest

from tests.e2e.lambda_stack import LambdaStack, lambda_stack

pytestmark = pytest.mark.slow

FUNCTION_TIMEOUT = 6.0


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LambdaStack]:
    # This module leaves threads running on purpose: it checks the report itself.
    work = tmp_path_factory.mktemp("lambda-mode")
    # The app takes its front to cut at 29 s (it stops an inline run at 25 s, answering before
    # the cut), while the function is cut at 6 s: the function's timeout is what a request
    # meets first, as in a stack whose Timeout is below what its settings say.
    with lambda_stack(
        work,
        function_timeout=FUNCTION_TIMEOUT,
        check_left_running=False,
        FRONT_TIMEOUT_SECONDS="29",
        TASKGATE_LAMBDA_TIMEOUT_SECONDS=f"{FUNCTION_TIMEOUT:g}",
    ) as stack:
        yield stack


def _text(message: Any) -> str:
    content = message["result"]["content"]
    return "".join(block.get("text", "") for block in content)


def test_threads_that_end_before_the_answer_are_not_reported(stack: LambdaStack) -> None:
    status, message, _ = stack.call_2026("greet", {"name": "Lambda"})
    assert status == 200 and _text(message) == "Hello, Lambda!"
    # An async def tool runs on a loop of its own in a pool thread, joined before the answer.
    arguments = {"service": "checkout", "waves": 2, "confirm": False}
    status, message, _ = stack.call_2026("async_rollout", arguments)
    assert status == 200 and _text(message) == "checkout rolled out in 2 waves", message
    assert stack.report()["left_running"] == []


def test_a_thread_left_running_is_frozen_until_the_next_invocation_and_reported(stack: LambdaStack) -> None:
    status, message, _ = stack.call_2026("leave_running", {"run": "left", "seconds": 30})
    assert status == 200 and _text(message) == "answered; a thread works on"
    at_answer = stack.run_state("left")
    time.sleep(1.5)
    later = stack.run_state("left")
    # Frozen with its environment: not one beat (every 0.05 s when it runs) since the answer.
    assert at_answer is not None and later == at_answer, (at_answer, later)
    report = stack.report()
    left = [r for r in report["left_running"] if r["thread"] == "beat-left"]
    assert left and left[0]["rpc"] == "tools/call" and left[0]["method"] == "POST", report
    assert any("_beat" in line for line in left[0]["stack"]), left[0]
    # The environment's next invocation thaws it: it beats while that one runs (1 s), and
    # is frozen again after it.
    status, message, _ = stack.call_2026("inline_work", {"run": "thaw", "seconds": 1})
    assert status == 200, message
    after_next = stack.run_state("left")
    assert after_next is not None and after_next["beats"] > at_answer["beats"], (at_answer, after_next)
    time.sleep(1.0)
    assert stack.run_state("left") == after_next


def test_the_functions_timeout_cuts_the_request_and_stops_its_work(stack: LambdaStack) -> None:
    before = stack.report()
    status, message, took = stack.call_2026("inline_work", {"run": "cut", "seconds": 9})
    # API Gateway's answer for a failed invocation (Lambda's timeout), not its own 30 s cut.
    assert status == 500 and message == {"message": "Internal Server Error"}, (status, message)
    assert FUNCTION_TIMEOUT - 0.5 <= took < FUNCTION_TIMEOUT + 1, took
    record = next(r for r in reversed(stack.front.records) if r.rpc == "tools/call")
    assert record.function_error == "Unhandled" and not record.cut
    at_cut = stack.run_state("cut")
    time.sleep(1.5)
    # Nothing of it ran past the timeout: the environment was killed, not frozen.
    assert at_cut is not None and at_cut["state"] == "running"
    assert stack.run_state("cut") == at_cut
    report = stack.report()
    assert report["timeouts"] == before["timeouts"] + 1
    # The next request is served by a fresh environment (a cold start).
    status, message, _ = stack.call_2026("greet", {"name": "again"})
    assert status == 200 and _text(message) == "Hello, again!"
    assert stack.report()["cold_starts"] == report["cold_starts"] + 1


@pytest.fixture(scope="module")
def as_set(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LambdaStack]:
    """The function's timeout as its settings say (6 s): an inline run is stopped at its
    deadline (the cut less 4 s) and answered before the function's timeout."""
    work = tmp_path_factory.mktemp("lambda-mode-as-set")
    with lambda_stack(
        work, function_timeout=FUNCTION_TIMEOUT, check_left_running=False, CALL_PIECE_SECONDS="2"
    ) as stack:
        yield stack


def test_a_run_stopped_at_its_deadline_but_blocked_is_reported_left_running(as_set: LambdaStack) -> None:
    """A tool blocked in one call (no check a stop reaches) is answered for at its deadline,
    but its thread lives on in the environment: frozen there deployed, and resumed by that
    environment's next invocation. The mode reports it."""
    status, message, took = as_set.call_2026("blocking_sleep", {"run": "blocked", "seconds": 8})
    assert status == 200 and message["error"]["code"] == -32001, message
    assert took < FUNCTION_TIMEOUT
    left = [r for r in as_set.report()["left_running"] if r["thread"] == "tool blocking_sleep"]
    assert left and any("time.sleep" in line or "blocking_sleep" in line for line in left[0]["stack"]), left
