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
FIXTURES = {
    "greet",
    "slow_compute",
    "failing_job",
    "protocol_error_job",
    "confirm_delete",
    "multi_input",
    "test_tool_with_task",
    "echo_region",
    "json_schema_2020_12_tool",
    "test_reconnection",
}


def served(tool_modules: str | None) -> list[str]:
    """tools/list order for a TOOL_MODULES value, in a fresh process (registration is global)."""
    env = {k: v for k, v in os.environ.items() if k != "TOOL_MODULES"}
    if tool_modules is not None:
        env["TOOL_MODULES"] = tool_modules
    env["PYTHONPATH"] = os.pathsep.join(str(ROOT / p) for p in ("layers/taskgate", "layers/tools"))
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            "import json; from taskgate import wiring; print(json.dumps([t.name for t in wiring.tools()]))",
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    return list(json.loads(done.stdout))


def test_the_default_lists_the_conformance_fixtures_first_then_the_deployers_tools() -> None:
    names = served(None)
    assert names[0] == "greet"  # the suite calls the first tool listed, with {}
    assert set(names) >= FIXTURES
    assert {"orders_report", "archive_orders"} <= set(names)
    assert names.index("orders_report") > max(names.index(n) for n in FIXTURES)


def test_the_deployers_tools_alone_serve_no_fixture() -> None:
    assert set(served("taskgate_tools")) == {"orders_report", "archive_orders"}


def test_template_default_and_prod_environment() -> None:
    template, matches = decode(str(ROOT / "template.yaml"))
    assert not matches and template is not None
    assert template["Parameters"]["ToolModules"]["Default"] == DEFAULT_TOOL_MODULES
    prod = tomllib.loads((ROOT / "samconfig.toml").read_text())["prod"]["deploy"]["parameters"]
    assert "ToolModules=taskgate_tools" in prod["parameter_overrides"]
