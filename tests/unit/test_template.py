"""template.yaml is valid, lint-clean, buildable, and agrees with the code that reads it."""

from __future__ import annotations

import json
import os
import pathlib
import shutil
import subprocess
import sys

import pytest
from cfnlint.decode import decode

from taskgate.local.runtime import TABLE_DEFINITION, TTL_ATTRIBUTE

ROOT = pathlib.Path(__file__).resolve().parents[2]
BIN = pathlib.Path(sys.executable).parent


def _template() -> dict:
    template, matches = decode(str(ROOT / "template.yaml"))
    assert not matches and template is not None
    return template


def _run(*args: str, **kwargs: object) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}", "SAM_CLI_TELEMETRY": "0"}
    return subprocess.run(args, cwd=ROOT, env=env, capture_output=True, text=True, timeout=600, **kwargs)  # type: ignore[call-overload]


def test_sam_validate_lint_is_clean() -> None:
    done = _run(str(BIN / "sam"), "validate", "--lint")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "is a valid SAM Template" in done.stdout + done.stderr


def test_cfn_lint_is_clean() -> None:
    done = _run(str(BIN / "cfn-lint"), "template.yaml")
    assert done.returncode == 0 and done.stdout.strip() == "", done.stdout + done.stderr


def test_sam_build_succeeds(tmp_path: pathlib.Path) -> None:
    build = tmp_path / "build"
    done = _run(str(BIN / "sam"), "build", "--no-cached", "--build-dir", str(build))
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    layer = build / "TaskgateLayer" / "python"
    assert (layer / "taskgate" / "protocol" / "server.py").exists()
    assert any(p.name.endswith("aarch64-linux-gnu.so") for p in (layer / "pydantic_core").iterdir())
    assert (build / "ToolsLayer" / "python" / "taskgate_conformance.py").exists()
    assert (build / "ApiFunction" / "api_handler.py").exists()
    _assert_ships_bytecode(layer)
    _assert_ships_bytecode(build / "ToolsLayer" / "python")
    # Python takes the shipped bytecode even when the source looks newer, as the
    # zip round trip may leave it: nothing is compiled at a cold start.
    (layer / "taskgate" / "clock.py").touch()
    loaded = subprocess.run(
        [sys.executable, "-v", "-c", "import taskgate.clock"],
        env={"PYTHONPATH": str(layer), "PYTHONDONTWRITEBYTECODE": "1", "PATH": os.environ["PATH"]},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert (
        f"code object from '{layer / 'taskgate' / '__pycache__' / 'clock.cpython-313.pyc'}'" in loaded.stderr
    )
    shutil.rmtree(ROOT / ".aws-sam", ignore_errors=True)


def _assert_ships_bytecode(site: pathlib.Path) -> None:
    """Every module in a built layer has unchecked-hash bytecode for the runtime's
    Python, naming its /opt/python path (so tracebacks point where Lambda has it)."""
    import importlib.util
    import marshal

    sources = list(site.rglob("*.py"))
    assert sources
    tag = sys.implementation.cache_tag
    for source in sources:
        pyc = source.parent / "__pycache__" / f"{source.stem}.{tag}.pyc"
        assert pyc.exists(), f"no bytecode shipped for {source.relative_to(site)}"
        data = pyc.read_bytes()
        assert data[:4] == importlib.util.MAGIC_NUMBER
        assert int.from_bytes(data[4:8], "little") == 0b01, f"{pyc} is not unchecked-hash"
    sample = next(s for s in sources if s.name != "__init__.py")
    code = marshal.loads((sample.parent / "__pycache__" / f"{sample.stem}.{tag}.pyc").read_bytes()[16:])
    assert code.co_filename == f"/opt/python/{sample.relative_to(site)}"


def test_local_table_matches_the_template() -> None:
    props = _template()["Resources"]["TaskTable"]["Properties"]
    assert props["KeySchema"] == TABLE_DEFINITION["KeySchema"]
    assert sorted(props["AttributeDefinitions"], key=str) == sorted(
        TABLE_DEFINITION["AttributeDefinitions"], key=str
    )
    assert props["GlobalSecondaryIndexes"] == TABLE_DEFINITION["GlobalSecondaryIndexes"]
    assert props["TimeToLiveSpecification"] == {"AttributeName": TTL_ATTRIBUTE, "Enabled": True}
    assert props["BillingMode"] == "PAY_PER_REQUEST"
    assert props["PointInTimeRecoverySpecification"]["PointInTimeRecoveryEnabled"] is True
    assert props["SSESpecification"]["SSEEnabled"] is True


def test_state_machine_substitutions_cover_the_definition() -> None:
    machine = _template()["Resources"]["TaskStateMachine"]["Properties"]
    definition = (ROOT / machine["DefinitionUri"]).read_text()
    json.loads(definition)
    import re

    used = set(re.findall(r"\$\{(\w+)\}", definition))
    assert used == set(machine["DefinitionSubstitutions"])
    assert machine["Type"] == "STANDARD"


def test_functions_use_the_handlers_and_runtime_we_test() -> None:
    resources = _template()["Resources"]
    globals_ = _template()["Globals"]["Function"]
    assert globals_["Runtime"] == f"python{sys.version_info.major}.{sys.version_info.minor}"
    assert resources["ApiFunction"]["Properties"]["Handler"] == "api_handler.handler"
    assert resources["WorkerFunction"]["Properties"]["Handler"] == "worker_handler.handler"


def test_no_policy_grants_every_action() -> None:
    text = (ROOT / "template.yaml").read_text()
    template = _template()

    def walk(node: object) -> None:
        if isinstance(node, dict):
            # A Deny (e.g. "no non-TLS access to the bucket") grants nothing.
            action = node.get("Action") if node.get("Effect") != "Deny" else None
            actions = action if isinstance(action, list) else [action]
            assert "*" not in actions and not any(isinstance(a, str) and a.endswith(":*") for a in actions), (
                node
            )
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(template["Resources"])
    assert "Action: '*'" not in text and 'Action: "*"' not in text


@pytest.mark.parametrize("env", ["default", "dev", "prod"])
def test_samconfig_environments_validate(env: str) -> None:
    done = _run(str(BIN / "sam"), "validate", "--lint", "--config-env", env)
    assert done.returncode == 0, done.stdout + done.stderr


def test_alarms_and_dashboard_use_metrics_the_code_emits() -> None:
    import re

    from taskgate.observability import EMITTED_METRICS

    resources = _template()["Resources"]
    monitoring = {k: v for k, v in resources.items() if v.get("Condition") == "MonitoringEnabled"}
    assert {
        "FailedTaskRateAlarm",
        "StuckTasksAlarm",
        "ThrottlesAlarm",
        "StateMachineFailuresAlarm",
        "Dashboard",
    } <= set(monitoring)
    ours: set[str] = set()
    for name, res in monitoring.items():
        props = res["Properties"]
        if props.get("Namespace") == "taskgate":
            ours.add(props["MetricName"])
        for metric in props.get("Metrics", []):
            stat = metric.get("MetricStat", {}).get("Metric", {})
            if stat.get("Namespace") == "taskgate":
                ours.add(stat["MetricName"])
        if name == "Dashboard":
            body = props["DashboardBody"]["Fn::Sub"]
            ours |= set(re.findall(r'\["taskgate", "(\w+)"', body))
            ours |= set(re.findall(r'\[".", "(\w+)", ".", "."\]', body.split("AWS/Lambda")[0]))
    assert ours and ours <= EMITTED_METRICS, ours - EMITTED_METRICS
    assert {"TasksFailed", "TasksCompleted", "TasksSwept", "TimeToTerminal", "TasksCancelled"} <= ours
