"""Issue 27 end to end, through the API Gateway stand-in over the local server in its Lambda
mode (tests/e2e/lambda_stack.py): the API function's timeout scaled down to 6 s (the front
cuts at 7 s), pieces of a 2025 call's stream 2 s long, every request's work frozen once it has
answered, and the test failing if any request left a thread running after its answer.

- Progress only goes forward (item 4): ``half_way_question`` reports 18 steps and asks at
  step 9 without a checkpoint, so it runs again from the top once answered. Called plainly by
  mcp 1.30.0 (a hidden task on the call's stream, resumed piece by piece) and as a task, the
  values its client receives strictly increase, none repeated.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from tests.e2e.lambda_stack import LambdaStack, lambda_stack
from tests.e2e.local_server import run_setup
from tests.e2e.test_tool_features import CLIENTS2025, py2025

pytestmark = pytest.mark.slow

FUNCTION_TIMEOUT = 6.0
Say = Callable[[str], None]


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory, say: Say) -> Iterator[LambdaStack]:
    run_setup(CLIENTS2025 / "setup.sh", "clients2025")
    work = tmp_path_factory.mktemp("right-by-default")
    with lambda_stack(work, function_timeout=FUNCTION_TIMEOUT, CALL_PIECE_SECONDS="2") as stack:
        yield stack
        say(f"\n[issue 27] {stack.summary()}")


def _rising(values: list[Any]) -> bool:
    return values == sorted(set(values))


def test_mcp_1_30_plain_call_that_asks_mid_loop_gets_progress_only_forward(
    stack: LambdaStack, say: Say
) -> None:
    out = py2025(stack.front_url, "half_way_plain")
    say(f"[issue 27 item 4] mcp 1.30.0 plain call, progress_callback got {out['progress']}")
    assert out["texts"] == ["done after 18 steps"] and out["asked"] == ["Half way: carry on?"]
    assert out["progress"] and _rising(out["progress"]), out["progress"]
    assert out["progress"][-1] == 18
    # It came in pieces, each inside the function's timeout: several GETs resumed the stream.
    resumed = [r for r in stack.front.records if r.method == "GET"]
    assert len(resumed) >= 2 and not any(r.cut or r.function_error for r in stack.front.records)


def test_mcp_1_30_task_that_asks_mid_loop_gets_progress_only_forward(stack: LambdaStack, say: Say) -> None:
    out = py2025(stack.front_url, "half_way_task")
    say(f"[issue 27 item 4] mcp 1.30.0 task, progress notifications {out['progress']}")
    assert out["texts"] == ["done after 18 steps"] and out["asked"] == ["Half way: carry on?"]
    assert out["progress"] and _rising(out["progress"]), out["progress"]
    assert out["progress"][-1] == 18
