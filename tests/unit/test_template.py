"""template.yaml agrees with the code that reads it (parsed here; the sam and
cfn-lint tools run in tests/integration/test_template_tools.py)."""

from __future__ import annotations

import json
import pathlib
import sys

from cfnlint.decode import decode

from taskgate.local.runtime import TABLE_DEFINITION, TTL_ATTRIBUTE

ROOT = pathlib.Path(__file__).resolve().parents[2]


def _template() -> dict:
    template, matches = decode(str(ROOT / "template.yaml"))
    assert not matches and template is not None
    return template


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
