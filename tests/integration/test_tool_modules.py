"""Which tools a deployment serves is ToolModules, in order; prod serves no test fixtures."""

from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys
import tomllib

from cfnlint.decode import decode

from taskgate.config import DEFAULT_TOOL_MODULES

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


def test_the_default_lists_the_conformance_fixtures_first_then_the_deployers_tools() -> None:
    tools = served(None)
    assert tools[0] == ("greet", "taskgate_conformance")  # the suite calls the first tool listed, with {}
    modules = [module for _, module in tools]
    fixtures = modules.count("taskgate_conformance")
    assert fixtures > 1 and modules == ["taskgate_conformance"] * fixtures + ["taskgate_tools"] * (
        len(tools) - fixtures
    )
    assert {"orders_report", "archive_orders"} <= {name for name, _ in tools}


def test_the_deployers_tools_alone_serve_no_fixture() -> None:
    ours = [tool for tool in served(None) if tool[1] == "taskgate_tools"]
    assert served("taskgate_tools") == ours


def test_template_default_and_prod_environment() -> None:
    template, matches = decode(str(ROOT / "template.yaml"))
    assert not matches and template is not None
    assert template["Parameters"]["ToolModules"]["Default"] == DEFAULT_TOOL_MODULES
    prod = tomllib.loads((ROOT / "samconfig.toml").read_text())["prod"]["deploy"]["parameters"]
    assert "ToolModules=taskgate_tools" in prod["parameter_overrides"]
