"""What a deployer's project gets from the installed taskgate (issue 17, item 6): the stack
``python -m taskgate.local.stack write`` puts in its ``.taskgate/``, and the pins that must
agree. tests/e2e/test_project_template.py builds and deploys-builds such a project for real."""

from __future__ import annotations

import json
import pathlib
import re
from typing import Any

import pytest
import taskgate_cli
import yaml

import taskgate
from taskgate.local import stack

ROOT = pathlib.Path(__file__).resolve().parents[2]
TEMPLATE = ROOT / "templates" / "taskgate-project"


def test_one_version_everywhere_a_project_pins_it() -> None:
    pinned = json.loads((TEMPLATE / "cookiecutter.json").read_text())["_taskgate_version"]
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


# -- what a project's stack tells its deployer (issue 31, item 4) ---------------------------


def _project(name: str, *, rendered: bool = False) -> str:
    text = (TEMPLATE / "{{cookiecutter.project_name}}" / name).read_text()
    return re.sub(r"\{\{ *cookiecutter\.(\w+) *\}\}", r"\1", text) if rendered else text


def _load(text: str) -> dict[str, Any]:
    class Loader(yaml.SafeLoader):
        pass

    # A tag kept as {"!Tag": value}, so that a GetAtt's target can be read.
    def tagged(loader: yaml.SafeLoader, suffix: str, node: yaml.Node) -> dict[str, Any]:
        if isinstance(node, yaml.ScalarNode):
            value: Any = loader.construct_scalar(node)
        elif isinstance(node, yaml.SequenceNode):
            value = loader.construct_sequence(node, deep=True)
        else:
            value = loader.construct_mapping(node, deep=True)  # type: ignore[arg-type]
        return {suffix: value}

    Loader.add_multi_constructor("!", tagged)
    return yaml.load(text, Loader)  # type: ignore[no-any-return]


def test_the_project_forwards_what_a_deployer_needs_and_taskgate_always_outputs_it() -> None:
    project = _load(_project("template.yaml", rendered=True))
    ours = _load((ROOT / "template.yaml").read_text())["Outputs"]
    forwarded = {name: out["Value"]["GetAtt"] for name, out in project["Outputs"].items()}
    assert set(forwarded) == {
        "McpEndpoint",
        "ProtectedResourceMetadataUrl",
        "UserPoolId",
        "AgentClientId",
        "AgentTokenEndpoint",
        "IamEndpoint",
    }
    for name, target in forwarded.items():
        assert target == f"Taskgate.Outputs.{name}"
        # A parent's GetAtt of an output its nested stack lacks fails the deploy: each one is
        # there in every configuration (a value saying "none: why" where there is nothing).
        assert "Condition" not in ours[name], name


def test_the_package_is_named_once_in_the_project() -> None:
    from taskgate.local.cold_import import tool_modules

    assert tool_modules(_project("template.yaml", rendered=True)) == ["package"]
    # The Makefile reads it from template.yaml; tools/Makefile copies every package there.
    assert "{{cookiecutter.package}}" not in _project("Makefile")
    assert "{{cookiecutter.package}}" not in _project("tools/Makefile")
    assert "sed -n 's/^ *ToolModules:" in _project("Makefile")


def test_tool_modules_are_read_from_a_nested_application_or_a_parameter_default() -> None:
    from taskgate.local.cold_import import tool_modules

    nested = "Resources:\n  T:\n    Properties:\n      Parameters:\n        ToolModules: a_tools, b_tools  # mine\n"
    assert tool_modules(nested) == ["a_tools", "b_tools"]
    parameter = "Parameters:\n  ToolModules:\n    Type: String\n    Default: taskgate_tools\n  Other:\n    Default: x\n"
    assert tool_modules(parameter) == ["taskgate_tools"]
    assert tool_modules((ROOT / "template.yaml").read_text()) == ["taskgate_tools"]
    assert tool_modules("      ToolModules: !Ref Mine\n") == []


def test_one_repository_address() -> None:
    import tomllib

    urls = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["urls"]
    assert json.loads((TEMPLATE / "cookiecutter.json").read_text())["_repository"] == urls["Repository"]
    assert urls["Changelog"].startswith(urls["Repository"] + "/")
    assert "<org>" not in _project("requirements-dev.txt") and "<org>" not in _project("README.md")
