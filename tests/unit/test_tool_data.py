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
    # Alice's orders are her own: bob's archive left them (and her report) whole.
    assert _report(world, "alice") == full
    # Bob's report shows his archive: the first quarter is gone from his live orders.
    mine = _report(world, "bob")
    assert mine["orders"] < ORDERS
    assert [m["orders"] for m in mine["months"][:3]] == [0, 0, 0]
    assert mine["months"][3:] == full["months"][3:]


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
