"""What one task costs in billable steps: pinned so a change that adds some is seen."""

from __future__ import annotations

import importlib.util
import pathlib
from typing import Any

ROOT = pathlib.Path(__file__).resolve().parents[2]


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
