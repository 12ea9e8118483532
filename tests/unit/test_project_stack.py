"""What a deployer's project gets from the installed taskgate (issue 17, item 6): the stack
``python -m taskgate.local.stack write`` puts in its ``.taskgate/``, and the pins that must
agree. tests/e2e/test_project_template.py builds and deploys-builds such a project for real."""

from __future__ import annotations

import json
import pathlib

import pytest
import taskgate_cli
import yaml

import taskgate
from taskgate.local import stack

ROOT = pathlib.Path(__file__).resolve().parents[2]
TEMPLATE = ROOT / "templates" / "taskgate-project"


def test_one_version_everywhere_a_project_pins_it() -> None:
    pinned = json.loads((TEMPLATE / "cookiecutter.json").read_text())["taskgate_version"]
    assert pinned == taskgate.__version__ == taskgate_cli.__version__


def test_the_stack_files_the_wheel_carries_are_there() -> None:
    # setup.py copies stack.STACK_FILES into the wheel (taskgate/_stack).
    assert "from taskgate.local.stack import STACK_FILES" in (ROOT / "setup.py").read_text()
    assert all((ROOT / name).exists() for name in stack.STACK_FILES)


def _resources(text: str) -> dict[str, dict[str, object]]:
    class Loader(yaml.SafeLoader):
        pass

    # CloudFormation's short tags (!Ref, !Sub, …): kept as plain values, enough to compare.
    Loader.add_multi_constructor("!", lambda loader, suffix, node: None)
    return yaml.load(text, Loader)["Resources"]  # type: ignore[no-any-return]


def test_the_written_template_builds_only_the_tools_layer_from_the_project() -> None:
    original = (ROOT / "template.yaml").read_text()
    nested = stack.nested_template(original, "../tools/")
    before, after = _resources(original), _resources(nested)
    assert after["ToolsLayer"]["Properties"]["ContentUri"] == "../tools/"  # type: ignore[index]
    after["ToolsLayer"]["Properties"]["ContentUri"] = "layers/"  # type: ignore[index]
    assert after == before
    with pytest.raises(ValueError, match="one ToolsLayer"):
        stack.nested_template(nested, "../tools/")


def test_write_copies_the_stack_and_the_package_and_replaces_only_its_own(tmp_path: pathlib.Path) -> None:
    target = stack.write(tmp_path / ".taskgate")
    for name in stack.STACK_FILES:
        assert (target / name).exists(), name
    package = target / "layers" / "taskgate" / "taskgate"
    assert (package / "root.py").read_text() == (stack.PACKAGE / "root.py").read_text()
    assert not list(package.rglob("__pycache__")) and not (package / "_stack").exists()
    assert (target / stack.MARKER).read_text() == f"taskgate {taskgate.__version__}\n"
    (target / "stale.txt").write_text("from an older taskgate")
    stack.write(target)
    assert not (target / "stale.txt").exists()
    mine = tmp_path / "mine"
    mine.mkdir()
    with pytest.raises(FileExistsError, match="not written by taskgate"):
        stack.write(mine)
