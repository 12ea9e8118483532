"""Which tools a deployment serves is ToolModules, in order; by default no test fixture."""

from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys

from cfnlint.decode import decode

from taskgate.config import DEFAULT_TOOL_MODULES, EXAMPLE_TOOL_MODULES

ROOT = pathlib.Path(__file__).resolve().parents[2]


def served(tool_modules: str | None) -> list[tuple[str, str]]:
    """(tool, module that registered it) in tools/list order for a TOOL_MODULES value,
    in a fresh process (registration is process-global)."""
    env = {k: v for k, v in os.environ.items() if k != "TOOL_MODULES"}
    if tool_modules is not None:
        env["TOOL_MODULES"] = tool_modules
    # Settings are validated as a function starts; these two have no default.
    env.update(TASK_TABLE="taskgate-tasks", STATE_MACHINE_ARN="arn:aws:states:us-east-1:1:stateMachine:t")
    env["PYTHONPATH"] = os.pathsep.join(str(ROOT / p) for p in ("layers/taskgate", "layers/tools"))
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            "import json; from taskgate import wiring;"
            "print(json.dumps([(t.name, t.fn.__module__.split('.')[0]) for t in wiring.root().tools]))",
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    return [(name, module) for name, module in json.loads(done.stdout)]


def test_the_default_serves_the_deployers_tools_and_no_fixture() -> None:
    tools = served(None)
    assert {module for _, module in tools} == {"taskgate_tools"}
    assert {"orders_report", "archive_orders"} <= {name for name, _ in tools}


def test_the_examples_list_the_conformance_fixtures_first_then_the_deployers_tools() -> None:
    tools = served(EXAMPLE_TOOL_MODULES)
    assert tools[0] == ("greet", "taskgate_conformance")  # the suite calls the first tool listed, with {}
    modules = [module for _, module in tools]
    fixtures = modules.count("taskgate_conformance")
    assert fixtures > 1 and modules == ["taskgate_conformance"] * fixtures + ["taskgate_tools"] * (
        len(tools) - fixtures
    )
    assert [tool for tool in tools if tool[1] == "taskgate_tools"] == served(None)


def test_template_default_is_the_settings_default() -> None:
    template, matches = decode(str(ROOT / "template.yaml"))
    assert not matches and template is not None
    assert template["Parameters"]["ToolModules"]["Default"] == DEFAULT_TOOL_MODULES


def test_the_deployed_tool_modules_import_with_the_layers_packages_only() -> None:
    # What a project's make test runs (taskgate.local.cold_import), on this checkout's template:
    # taskgate_tools imports nothing its layers do not ship.
    from taskgate.local.cold_import import check_sources, tool_modules

    modules = tool_modules((ROOT / "template.yaml").read_text())
    ok, out = check_sources(modules, ROOT / "layers" / "tools")
    assert modules == [DEFAULT_TOOL_MODULES] and ok, out
    tools = json.loads(out.splitlines()[-1])["tools"]
    assert {"orders_report", "archive_orders"} <= set(tools)


def test_a_tool_module_importing_what_no_layer_ships_is_caught(tmp_path: pathlib.Path) -> None:
    from taskgate.local.cold_import import check_sources

    (tmp_path / "leaky").mkdir()
    (tmp_path / "leaky" / "__init__.py").write_text("import pytest  # only in the developer's venv\n")
    ok, out = check_sources(["leaky"], tmp_path)
    assert not ok
    assert "FAIL leaky: ModuleNotFoundError: No module named 'pytest' in the layers" in out
    assert "leaky/__init__.py, line 1: import pytest" in out
