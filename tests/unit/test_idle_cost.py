"""docs/deploying/costs.md's idle-cost table counts what the default stack has (issue 29, n3):
every Secrets Manager secret, KMS key, dashboard and alarm metric a stack deployed with the
defaults creates is billed idle, and the table's total is its rows' sum."""

from __future__ import annotations

import pathlib
import re

from tests.cfn_eval import Evaluator
from tests.sam_translate import translate

ROOT = pathlib.Path(__file__).resolve().parents[2]


def _table() -> dict[str, float]:
    text = (ROOT / "docs" / "deploying" / "costs.md").read_text()
    section = text.split("## What an idle stack costs", 1)[1].split("\n## ", 1)[0]
    rows = {}
    for item, price in re.findall(r"^\| \**([^|*]+?)\** \| \**(?:about )?\$(\d+\.\d+)\** \|", section, re.M):
        rows[item.strip()] = float(price)
    return rows


def _default_stack() -> dict[str, dict[str, object]]:
    translated = translate()
    evaluator = Evaluator(translated)
    return {
        name: r
        for name, r in translated["Resources"].items()
        if "Condition" not in r or evaluator.condition(r["Condition"])
    }


def test_the_idle_cost_table_counts_what_the_default_stack_has() -> None:
    rows, stack = _table(), _default_stack()

    def count(kind: str) -> int:
        return sum(1 for r in stack.values() if r["Type"] == kind)

    alarm_metrics = sum(
        len(r["Properties"].get("Metrics", []))
        - sum(1 for m in r["Properties"].get("Metrics", []) if "Expression" in m)
        or 1
        for r in stack.values()
        if r["Type"] == "AWS::CloudWatch::Alarm"
    )
    assert rows["Secrets Manager secrets"] == round(0.40 * count("AWS::SecretsManager::Secret"), 2)
    assert rows["KMS key of the alarm topic"] == 1.00 * count("AWS::KMS::Key")
    assert rows["CloudWatch dashboard"] == 3.00 * count("AWS::CloudWatch::Dashboard")
    assert rows["CloudWatch alarms"] == round(0.10 * alarm_metrics, 2)
    total = rows.pop("total")
    assert abs(total - sum(rows.values())) < 0.005, (total, rows)
