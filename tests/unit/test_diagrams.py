"""The state machine diagram in docs/architecture.md is generated from the ASL and must not drift."""

from __future__ import annotations

import copy
import importlib.util
import json
import pathlib
from types import ModuleType

ROOT = pathlib.Path(__file__).resolve().parents[2]


def _diagrams() -> ModuleType:
    spec = importlib.util.spec_from_file_location("diagrams", ROOT / "scripts" / "diagrams.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_documented_diagram_matches_the_state_machine() -> None:
    # What `python scripts/diagrams.py --check` compares.
    assert _diagrams().block() in (ROOT / "docs" / "architecture.md").read_text()


def test_the_check_notices_a_changed_state_machine() -> None:
    diagrams = _diagrams()
    asl = json.loads((ROOT / "statemachines" / "task.asl.json").read_text())
    changed = copy.deepcopy(asl)
    changed["States"]["RunTool"]["Catch"].insert(0, {"ErrorEquals": ["NewError"], "Next": "Done"})
    page = (ROOT / "docs" / "architecture.md").read_text()
    assert diagrams.mermaid(asl) in page
    assert diagrams.mermaid(changed) not in page
    assert "RunTool --> Done : NewError" in diagrams.mermaid(changed)


def test_every_state_and_transition_is_drawn() -> None:
    diagrams = _diagrams()
    asl = json.loads((ROOT / "statemachines" / "task.asl.json").read_text())
    drawn = diagrams.mermaid(asl)
    for name in asl["States"]:
        assert f"    {name} : " in drawn
    assert "RunTool --> AwaitInput : TaskgateInputRequired" in drawn
    assert "RunTool --> RunTool : TaskgateContinue" in drawn
    assert "RunTool --> [*] : finished" in drawn
