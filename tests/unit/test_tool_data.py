"""Tools that keep data keep it per owner, and a run's working files go when its step
ends (issue 12, item 8). ``archive_orders`` run by bob emptied alice's
``orders_report`` (one SQLite file shared by every caller), and each report left up
to 28 MB in /tmp. The tool context now tells a tool who called (``ctx.owner``) and
gives each run a scratch directory removed when the step ends."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from taskgate.testing import ToolTester, accept
from taskgate.tools import Elicit, ToolContext, ToolError
from taskgate.tools.registry import Tool

ORDERS = 300


@pytest.fixture
def dirs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    data, scratch = tmp_path / "data", tmp_path / "tmp"
    data.mkdir()
    scratch.mkdir()
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
    # Alice's orders are her own: bob's archive left them (and her report) whole.
    assert _report(tester, "alice") == full
    # Bob's report shows his archive: the first quarter is gone from his live orders.
    mine = _report(tester, "bob")
    assert mine["orders"] < ORDERS
    assert [m["orders"] for m in mine["months"][:3]] == [0, 0, 0]
    assert mine["months"][3:] == full["months"][3:]


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
