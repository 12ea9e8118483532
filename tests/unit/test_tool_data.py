"""Tools that keep data keep it per owner, and a run's working files go when its step
ends (issue 12, item 8). ``archive_orders`` run by bob emptied alice's
``orders_report`` (one SQLite file shared by every caller), and each report left up
to 28 MB in /tmp. The tool context now tells a tool who called (``ctx.owner``) and
gives each run a scratch directory removed when the step ends.

Issue 21 (N10): ``archive_orders`` still left a sample database per owner, year and
size in /tmp, forever, even when never confirmed. The sample tools now build every
sample in the run's scratch directory, and a directory a killed run left behind is
removed by the next run that makes one.

The tools run through taskgate.testing's ToolTester, as a tool author's tests run theirs."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from taskgate.testing import Run, ToolTester, accept, decline
from taskgate.tools import Elicit, ToolContext, ToolError
from taskgate.tools.registry import Tool

ORDERS = 300


@pytest.fixture
def dirs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    data, scratch = tmp_path / "data", tmp_path / "tmp"
    data.mkdir()
    scratch.mkdir()
    # Where the sample tools kept owners' databases before issue 21: nothing may land there.
    monkeypatch.setenv("TASKGATE_DATA_DIR", str(data))
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    return {"data": data, "tmp": scratch}


@pytest.fixture
def tester() -> ToolTester:
    return ToolTester("taskgate_tools")


def _report(tester: ToolTester, owner: str) -> dict[str, Any]:
    run = tester.start("orders_report", {"year": 2025, "orders": ORDERS}, owner=owner)
    assert run.status == "completed", run
    structured: dict[str, Any] = run.structured
    return structured


def _archive(tester: ToolTester, owner: str) -> str:
    arguments = {"year": 2025, "orders": ORDERS, "before": "2025-04-01", "batch_size": 100}
    run = tester.start("archive_orders", arguments, owner=owner)
    (key,) = run.questions
    run.answer({key: accept(confirm=True)})
    assert run.status == "completed", run
    return run.text


def test_one_owners_archive_never_touches_another_owners_report(
    tester: ToolTester, dirs: dict[str, Path]
) -> None:
    full = _report(tester, "alice")
    assert full["orders"] == ORDERS
    assert _archive(tester, "bob").startswith("Archived ")
    # The archive moved rows in its own copy: nobody's report changes, alice's or bob's.
    assert _report(tester, "alice") == full
    assert _report(tester, "bob") == full


def _leftovers(dirs: dict[str, Path]) -> list[Path]:
    return [p for p in dirs["tmp"].rglob("*")] + [p for p in dirs["data"].rglob("*")]


def _archive_task(tester: ToolTester, owner: str, cancel_after: int | None = None) -> Run:
    arguments = {"year": 2025, "orders": ORDERS, "before": "2025-04-01", "batch_size": 100}
    run = tester.start("archive_orders", arguments, owner=owner, cancel_after=cancel_after)
    assert run.status == "input_required", run
    return run


def test_an_archive_leaves_nothing_behind_however_its_task_ends(
    tester: ToolTester, dirs: dict[str, Path]
) -> None:
    # Never answered: it asked, parked, and its TTL ran out.
    asked = _archive_task(tester, "alice")
    assert _leftovers(dirs) == []
    tester.clock.advance(2 * 3_600_000)
    tester.root.sweeper.sweep()
    assert tester.memory.store.records[str(asked.task_id)].expired(tester.clock())
    assert _leftovers(dirs) == []
    # Declined: a ToolError.
    declined = _archive_task(tester, "bob")
    (key,) = declined.questions
    assert declined.answer({key: decline()}).is_error
    assert _leftovers(dirs) == []
    # Cancelled while it waits for the answer.
    assert _archive_task(tester, "carol").cancel().status == "cancelled"
    assert _leftovers(dirs) == []
    # Cancelled while it moves rows: the tool stops at its next progress report.
    moving = _archive_task(tester, "dana", cancel_after=1)
    moving.answer({key: accept(confirm=True)})
    assert moving.status == "cancelled" and len(moving.progress) == 1
    assert _leftovers(dirs) == []
    # Confirmed and completed.
    assert _archive(tester, "erin").startswith("Archived ")
    assert _leftovers(dirs) == []


def test_a_killed_runs_scratch_is_removed_by_the_next_run(tester: ToolTester, dirs: dict[str, Path]) -> None:
    """A step killed before it could clean up (a Lambda timeout, a crash) leaves its scratch
    directory: nothing holds its lock any more, and the next run removes it."""
    killed = dirs["tmp"] / "taskgate-scratch-killedrun"
    killed.mkdir()
    (killed / ".in-use").write_text("")  # its lock went with its process
    (killed / "orders.db").write_bytes(b"x" * 1000)
    _report(tester, "alice")
    assert not killed.exists()
    assert list(dirs["tmp"].iterdir()) == []


def test_a_live_runs_scratch_is_never_taken_for_a_killed_ones(dirs: dict[str, Path]) -> None:
    from taskgate.tools.context import remove_abandoned_scratch

    running = ToolContext(owner="alice")
    (running.scratch_dir / "work").write_text("busy")
    making = dirs["tmp"] / "taskgate-scratch-beingmade"  # its lock file not there yet
    making.mkdir()
    assert remove_abandoned_scratch() == []
    making.rmdir()
    assert (running.scratch_dir / "work").exists()
    running.close()
    assert list(dirs["tmp"].iterdir()) == []


def test_a_report_leaves_nothing_behind(tester: ToolTester, dirs: dict[str, Path]) -> None:
    _report(tester, "alice")
    _report(tester, "carol")
    leftovers = [p for p in dirs["tmp"].rglob("*")] + [p for p in dirs["data"].rglob("*")]
    assert leftovers == []


class NoInput(BaseModel):
    pass


seen: dict[str, Any] = {}


def _uses_scratch(args: Any, ctx: ToolContext) -> str:
    (ctx.scratch_dir / "work.bin").write_bytes(b"x" * 1000)
    seen.setdefault("dirs", []).append(ctx.scratch_dir)
    seen["owner"] = ctx.owner
    step = (ctx.state or {}).get("step", 0)
    if step == 0:
        ctx.checkpoint({"step": 1})
    answer = ctx.ask("go", Elicit("Go on?", {"ok": {"type": "boolean"}}))
    if answer.action != "accept":
        raise ToolError("stopped")
    return "ok"


def test_the_scratch_directory_is_the_runs_own_and_goes_when_the_step_ends(
    dirs: dict[str, Path],
) -> None:
    seen.clear()
    tester = ToolTester(Tool("scratchy", "writes working files", NoInput, _uses_scratch))
    first = tester.start("scratchy", owner="dana")
    second = tester.start("scratchy", owner="erin")
    # Both ask and park: their steps ended.
    assert first.status == second.status == "input_required"
    assert len(set(seen["dirs"])) == 2 and not any(d.exists() for d in seen["dirs"])
    first.answer(go={"action": "accept"})
    second.answer(go={"action": "decline"})  # ends in a ToolError
    assert (first.text, second.text) == ("ok", "stopped")
    assert seen["owner"] == "erin"
    assert len(set(seen["dirs"])) == 4 and not any(d.exists() for d in seen["dirs"])
    assert list(dirs["tmp"].iterdir()) == []


def test_a_plain_call_knows_its_caller_and_its_scratch_goes_too(dirs: dict[str, Path]) -> None:
    seen.clear()

    def plain(args: Any, ctx: ToolContext) -> str:
        (ctx.scratch_dir / "f").write_text("x")
        seen["dir"], seen["owner"] = ctx.scratch_dir, ctx.owner
        return "done"

    tester = ToolTester(Tool("plain", "inline only", NoInput, plain, task_support="forbidden"))
    assert tester.call("plain", owner="frank").text == "done"
    assert seen["owner"] == "frank" and not seen["dir"].exists()
    assert os.listdir(dirs["tmp"]) == []
