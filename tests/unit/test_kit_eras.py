"""The kit tests every way a tool is called (issue 31, item 3), as an author writes it: as a task
and plainly, in both protocol eras, behind a buffering front (API Gateway's HTTP API, the
default) or a streaming one (``StreamingApi``), and says what the deployment did with each call
(``run.delivered``). The tool is the project template's first one (rollout: a question, then
progress wave by wave) and a long job that declares how long it runs."""

from __future__ import annotations

import pytest

from taskgate.testing import ToolTester, accept, decline
from taskgate.tools import ToolContext, tool
from tests.kit_tools import rollout


@tool(description="A long report.", task_support="optional", expected_seconds=20)
def long_report(pages: int, ctx: ToolContext) -> str:
    for page in range(1, pages + 1):
        ctx.progress(f"page {page}", progress=page, total=pages)
    return f"{pages} pages"


ERAS = ["2026", "2025"]


@pytest.mark.parametrize("era", ERAS)
def test_as_a_task_it_asks_then_rolls_out_wave_by_wave(era: str) -> None:
    run = ToolTester(rollout, era=era).start(rollout, {"service": "checkout", "waves": 3})
    assert run.delivered == "task" and run.status == "input_required"
    assert run.questions["confirm"].message == "Roll checkout out in 3 waves?"
    run.answer(confirm=accept(ok=True))
    assert run.status == "completed" and run.text == "checkout rolled out in 3 waves"
    assert [(p.progress, p.total) for p in run.progress] == [(1, 3), (2, 3), (3, 3)]


@pytest.mark.parametrize("era", ERAS)
def test_a_cancel_stops_the_task_between_waves(era: str) -> None:
    run = ToolTester(rollout, era=era).start(rollout, {"service": "checkout", "waves": 10}, cancel_after=2)
    run.answer(confirm=accept(ok=True))
    assert run.status == "cancelled" and len(run.progress) == 2


def test_a_2026_plain_call_asks_in_rounds_of_the_call_itself() -> None:
    run = ToolTester(rollout, era="2026").call(rollout, {"service": "checkout", "waves": 2})
    assert run.delivered == "multi-round" and run.status == "input_required"
    run.answer(confirm=accept(ok=True))
    assert run.text == "checkout rolled out in 2 waves" and run.delivered == "multi-round"


def test_a_2025_plain_call_asks_on_its_own_stream_and_resumes_after_the_answer() -> None:
    run = ToolTester(rollout, era="2025").call(rollout, {"service": "checkout", "waves": 2})
    assert run.delivered == "stream" and run.questions["confirm"].message == "Roll checkout out in 2 waves?"
    run.answer(confirm=accept(ok=True))
    assert run.text == "checkout rolled out in 2 waves"
    assert [(p.progress, p.total) for p in run.progress] == [(1, 2), (2, 2)]


@pytest.mark.parametrize("era", ERAS)
def test_no_means_no_in_a_plain_call(era: str) -> None:
    run = ToolTester(rollout, era=era).call(rollout, {"service": "checkout"})
    run.answer(confirm=decline())
    assert run.is_error and run.text == "checkout was not rolled out: not confirmed"


@pytest.mark.parametrize(
    ("era", "front", "delivered"),
    [
        ("2026", "buffering", "handle"),  # a 2026 host that did not opt in: a handle to check on
        ("2026", "streaming", "held"),  # the call held open while the hidden task runs
        ("2025", "buffering", "stream"),  # the result on the call's stream, in pieces
        ("2025", "streaming", "stream"),
    ],
)
def test_a_long_plain_call_becomes_what_the_front_allows(era: str, front: str, delivered: str) -> None:
    run = ToolTester(long_report, era=era, front=front).call(long_report, {"pages": 3})
    assert run.delivered == delivered and run.status == "completed"
    if delivered == "handle":
        assert "is running as background task" in run.text and run.structured["tool"] == "long_report"
    else:
        assert run.text == "3 pages"
        assert [(p.progress, p.total) for p in run.progress] == [(1, 3), (2, 3), (3, 3)]


@tool(description="A quick sum.", task_support="optional", expected_seconds=0.1)
def quick_sum(a: int, b: int, ctx: ToolContext) -> str:
    return str(a + b)


@pytest.mark.parametrize("era", ERAS)
def test_a_quick_plain_call_runs_inline(era: str) -> None:
    run = ToolTester(quick_sum, era=era).call(quick_sum, {"a": 2, "b": 3})
    assert run.delivered == "inline" and run.text == "5"


def test_the_era_and_the_front_are_checked() -> None:
    with pytest.raises(ValueError, match="era='2024'"):
        ToolTester(quick_sum, era="2024")
    with pytest.raises(ValueError, match="front='rest'"):
        ToolTester(quick_sum, front="rest")
