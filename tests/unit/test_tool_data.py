"""Tools that keep data keep it per owner, and a run's working files go when its step
ends (issue 12, item 8). ``archive_orders`` run by bob emptied alice's
``orders_report`` (one SQLite file shared by every caller), and each report left up
to 28 MB in /tmp. The tool context now tells a tool who called (``ctx.owner``) and
gives each run a scratch directory removed when the step ends.

Issue 21 (N10): ``archive_orders`` still left a sample database per owner, year and
size in /tmp, forever, even when never confirmed. The sample tools now build every
sample in the run's scratch directory, and a directory a killed run left behind is
removed by the next run that makes one."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from taskgate.domain.model import TaskStatus
from taskgate.tools import Elicit, ToolContext, ToolError, ToolRegistry
from taskgate.tools.registry import Tool
from tests.fakes import World

ORDERS = 300
CONFIRM = {"action": "accept", "content": {"confirm": True}}


@pytest.fixture
def dirs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    data, scratch = tmp_path / "data", tmp_path / "tmp"
    data.mkdir()
    scratch.mkdir()
    # Where the sample tools kept owners' databases before issue 21: nothing may land there.
    monkeypatch.setenv("TASKGATE_DATA_DIR", str(data))
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    return {"data": data, "tmp": scratch}


def _report(world: World, owner: str) -> dict[str, Any]:
    task_id = world.tasks.create(
        owner=owner, tool="orders_report", arguments={"year": 2025, "orders": ORDERS}
    ).task_id
    world.settle()
    row = world.store.records[task_id]
    assert row.status is TaskStatus.COMPLETED and row.result is not None, row.status_message
    structured: dict[str, Any] = row.result["structuredContent"]
    return structured


def _archive(world: World, owner: str) -> str:
    arguments = {"year": 2025, "orders": ORDERS, "before": "2025-04-01", "batch_size": 100}
    task_id = world.tasks.create(owner=owner, tool="archive_orders", arguments=arguments).task_id
    world.settle()
    (key,) = world.store.records[task_id].input_requests
    world.tasks.submit_input(owner, task_id, {key: CONFIRM})
    world.settle()
    row = world.store.records[task_id]
    assert row.status is TaskStatus.COMPLETED and row.result is not None
    text: str = row.result["content"][0]["text"]
    return text


def test_one_owners_archive_never_touches_another_owners_report(world: World, dirs: dict[str, Path]) -> None:
    full = _report(world, "alice")
    assert full["orders"] == ORDERS
    assert _archive(world, "bob").startswith("Archived ")
    # The archive moved rows in its own copy: nobody's report changes, alice's or bob's.
    assert _report(world, "alice") == full
    assert _report(world, "bob") == full


def _leftovers(dirs: dict[str, Path]) -> list[Path]:
    return [p for p in dirs["tmp"].rglob("*")] + [p for p in dirs["data"].rglob("*")]


def _archive_task(world: World, owner: str) -> str:
    arguments = {"year": 2025, "orders": ORDERS, "before": "2025-04-01", "batch_size": 100}
    task_id = world.tasks.create(owner=owner, tool="archive_orders", arguments=arguments).task_id
    world.settle()
    assert world.store.records[task_id].status is TaskStatus.INPUT_REQUIRED
    return task_id


def test_an_archive_leaves_nothing_behind_however_its_task_ends(world: World, dirs: dict[str, Path]) -> None:
    # Never answered: it asked, parked, and its TTL ran out.
    asked = _archive_task(world, "alice")
    assert _leftovers(dirs) == []
    world.clock.advance(2 * 3_600_000)
    world.sweeper.sweep()
    assert world.store.records[asked].expired(world.clock())
    assert _leftovers(dirs) == []
    # Declined: a ToolError.
    declined = _archive_task(world, "bob")
    world.tasks.submit_input(
        "bob", declined, {next(iter(world.store.records[declined].input_requests)): {"action": "decline"}}
    )
    world.settle()
    assert world.store.records[declined].outcome is not None
    assert _leftovers(dirs) == []
    # Cancelled while it waits for the answer.
    cancelled = _archive_task(world, "carol")
    world.tasks.cancel("carol", cancelled)
    assert world.store.records[cancelled].status is TaskStatus.CANCELLED
    assert _leftovers(dirs) == []
    # Cancelled while it moves rows: the tool stops at its next progress report.
    moving = _archive_task(world, "dana")
    original = world.store.report_progress
    calls = 0

    def cancel_during_the_run(*args: Any, **kwargs: Any) -> None:
        nonlocal calls
        calls += 1
        if calls == 1:
            world.tasks.cancel("dana", moving)
        original(*args, **kwargs)

    world.store.report_progress = cancel_during_the_run  # type: ignore[method-assign]
    key = next(iter(world.store.records[moving].input_requests))
    world.tasks.submit_input("dana", moving, {key: CONFIRM})
    world.settle()
    world.store.report_progress = original  # type: ignore[method-assign]
    assert world.store.records[moving].status is TaskStatus.CANCELLED and calls == 1
    assert _leftovers(dirs) == []
    # Confirmed and completed.
    assert _archive(world, "erin").startswith("Archived ")
    assert _leftovers(dirs) == []


def test_a_killed_runs_scratch_is_removed_by_the_next_run(world: World, dirs: dict[str, Path]) -> None:
    """A step killed before it could clean up (a Lambda timeout, a crash) leaves its scratch
    directory: nothing holds its lock any more, and the next run removes it."""
    killed = dirs["tmp"] / "taskgate-scratch-killedrun"
    killed.mkdir()
    (killed / ".in-use").write_text("")  # its lock went with its process
    (killed / "orders.db").write_bytes(b"x" * 1000)
    _report(world, "alice")
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


def test_a_report_leaves_nothing_behind(world: World, dirs: dict[str, Path]) -> None:
    _report(world, "alice")
    _report(world, "carol")
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
    tools = ToolRegistry()
    tools.add(Tool("scratchy", "writes working files", NoInput, _uses_scratch))
    world = World(tools)
    first = world.tasks.create(owner="dana", tool="scratchy", arguments={}).task_id
    second = world.tasks.create(owner="erin", tool="scratchy", arguments={}).task_id
    world.settle()  # both ask and park: their steps ended
    assert len(set(seen["dirs"])) == 2 and not any(d.exists() for d in seen["dirs"])
    world.tasks.submit_input("dana", first, {"go": {"action": "accept"}})
    world.tasks.submit_input("erin", second, {"go": {"action": "decline"}})  # ends in a ToolError
    world.settle()
    assert seen["owner"] in ("dana", "erin")
    assert len(set(seen["dirs"])) == 4 and not any(d.exists() for d in seen["dirs"])
    assert list(dirs["tmp"].iterdir()) == []


def test_a_plain_call_knows_its_caller_and_its_scratch_goes_too(dirs: dict[str, Path]) -> None:
    seen.clear()

    def plain(args: Any, ctx: ToolContext) -> str:
        (ctx.scratch_dir / "f").write_text("x")
        seen["dir"], seen["owner"] = ctx.scratch_dir, ctx.owner
        return "done"

    tools = ToolRegistry()
    tools.add(Tool("plain", "inline only", NoInput, plain, task_support="forbidden"))
    world = World(tools)
    assert world.mcp("frank").call("plain", tasks=False)["content"][0]["text"] == "done"
    assert seen["owner"] == "frank" and not seen["dir"].exists()
    assert os.listdir(dirs["tmp"]) == []
