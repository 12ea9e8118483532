"""What one task costs in billable steps: pinned so a change that adds some is seen."""

from __future__ import annotations

import importlib.util
import pathlib
from typing import Any

import pytest

from taskgate.config import EXAMPLE_TOOL_MODULES

ROOT = pathlib.Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def _example_tools(monkeypatch: pytest.MonkeyPatch) -> None:
    # The traced tools are the examples' (greet, confirm_delete): without this the worker
    # knew them only when an earlier test in the run had imported them.
    monkeypatch.setenv("TOOL_MODULES", EXAMPLE_TOOL_MODULES)


def _trace(*args: Any) -> dict[str, Any]:
    spec = importlib.util.spec_from_file_location("task_trace", ROOT / "scripts" / "task_trace.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.trace(*args)  # type: ignore[no-any-return]


def test_simple_task_is_one_state_and_two_writes() -> None:
    out = _trace("greet", {"name": "cost"}, None)
    assert out["status"] == "completed"
    assert out["states"] == ["RunTool"]
    assert out["lambda_invocations"] == 1
    assert [w.split()[0] for w in out["dynamodb_writes"]] == ["put_item", "update_item"]


def test_one_input_round_is_three_states_and_five_writes() -> None:
    answer = {"confirm_delete": {"action": "accept", "content": {"confirm": True}}}
    out = _trace("confirm_delete", {"filename": "a"}, answer)
    assert out["states"] == ["RunTool", "AwaitInput", "RunTool"]
    # put, the questions, the park (state machine), the answer, the result
    assert len(out["dynamodb_writes"]) == 5


def test_waiting_on_a_2025_stream_costs_what_polling_costs() -> None:
    """Issue 13.5: a client waiting on tasks/result held an API Lambda 20 s at a time
    (3,520 s of every hour); now each reconnect is one poll: the same requests, the
    same read units, no held Lambda time. scripts/cost_per_task.py prints the hour."""
    spec = importlib.util.spec_from_file_location("cost_per_task", ROOT / "scripts" / "cost_per_task.py")
    assert spec and spec.loader
    cost = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(cost)
    cost.HOUR = 300.0  # five virtual minutes: the same per-poll costs, sooner
    cost._register_hour_tool()
    from taskgate.local.runtime import EmbeddedAws

    rows = {}
    for scenario in cost.HOUR_SCENARIOS:
        runtime = EmbeddedAws().start()
        try:
            rows[scenario] = cost.run_scenario(scenario, runtime)
        finally:
            runtime.stop()
    polls, waits = rows["polls tasks/get for an hour"], rows["waits on tasks/result for an hour"]
    assert waits["api_held_seconds"] == 0
    assert waits["api_requests"] == polls["api_requests"]
    # Once per wait, not per poll: the stream's log item (written once) and the first
    # stream's look at the session's resource subscriptions.
    assert waits["rcu"] <= polls["rcu"] + 1
    assert waits["wcu"] <= polls["wcu"] + 2
    extra = sum(cost.price(waits).values()) - sum(cost.price(polls).values())
    once = 2 * cost.PRICES["ddb_wru"] + cost.PRICES["ddb_rru"]
    assert extra <= once * 1_000_000 + 1e-9  # $ per million tasks


def test_an_hours_wait_handed_off_costs_under_a_hundredth_of_a_held_worker() -> None:
    """Issue 22: a job handed off is waited for natively. Its cost is six states, two short
    worker steps and a few writes whatever the wait; a worker that holds its Lambda for the
    hour costs three hundred times that."""
    spec = importlib.util.spec_from_file_location("cost_per_task", ROOT / "scripts" / "cost_per_task.py")
    assert spec and spec.loader
    cost = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(cost)
    from taskgate.local.runtime import EmbeddedAws

    runtime = EmbeddedAws().start()
    try:
        row = cost.run_scenario(cost.HANDED_OFF, runtime)
    finally:
        runtime.stop()
    assert row["status"] == "completed"
    assert row["states"] == ["RunTool", "LoadJob", "StartJob", "RunExecution", "RecordJobOutcome", "RunTool"]
    assert row["worker_invocations"] == 2
    mine = sum(cost.price(row).values())
    held, polled = (sum(cost.price(r).values()) for r in cost.worker_rows(row))
    assert mine * 100 <= held
    assert mine < polled


def test_a_listen_stream_watching_two_tasks_costs_no_more_a_task_hour_than_polling(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Issue 30: a listen stream holds its function for its whole length, so one stream watching
    one task costs about what polling does; from two tasks on, a watched task-hour costs less
    (the function sized for waiting, LISTEN_MB). Two virtual minutes of one-minute streams: the
    per-stream costs (the request, the place) weigh fourteen times what they do at 840 s."""
    spec = importlib.util.spec_from_file_location("cost_per_task", ROOT / "scripts" / "cost_per_task.py")
    assert spec and spec.loader
    cost = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(cost)
    cost.HOUR = 120.0
    # At the memory the template gives the function that holds listen streams.
    from cfnlint.decode import decode

    template, _ = decode(str(ROOT / "template.yaml"))
    assert template is not None
    cost.LISTEN_MB = template["Resources"]["StreamFunction"]["Properties"]["MemorySize"]
    cost._register_hour_tool()
    from taskgate.local.runtime import EmbeddedAws

    def per_task_hour(scenario: str) -> float:
        runtime = EmbeddedAws().start()
        try:
            row = cost.run_scenario(scenario, runtime)
        finally:
            runtime.stop()
        assert row["api_held_seconds"] == (cost.HOUR if scenario in cost.LISTEN_SCENARIOS else 0)
        hours = row["api_held_seconds"] / 3600 if scenario in cost.LISTEN_SCENARIOS else cost.HOUR / 3600
        return float(sum(cost.price(row).values())) / hours / row["watched_tasks"]

    polled = per_task_hour(cost.POLL_2026)
    monkeypatch.setenv("FRONT_STREAMING", "true")
    monkeypatch.setenv("FRONT_TIMEOUT_SECONDS", "900")
    monkeypatch.setenv("LISTEN_SECONDS", "60")
    one, two = (per_task_hour(cost.LISTEN_SCENARIOS[i]) for i in (0, 1))
    assert two <= polled < one
