"""The MCP conformance suite in its four selections against fresh local servers, via
scripts/conformance.py (`make conformance`).

Needs npm and the npm registry on the first run (the script installs Node 22 and the suite into
.tools/conformance/); later runs reuse that install and take about a minute.

Every check of every selection must pass (and the script exit 0). ``OWNED_ELSEWHERE`` is where a
check may be excused while the feature it tests is being built on another branch; it is empty.
A defect of the suite itself goes in conformance-baseline.yml instead, with its upstream issue.
"""

from __future__ import annotations

import json
import pathlib
import subprocess
import sys
from collections.abc import Callable
from typing import Any

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]

# Scenarios each selection runs in @modelcontextprotocol/conformance@0.2.0-alpha.12.
SCENARIO_COUNTS = {"default": 31, "2025-11-25": 33, "2026-07-28": 50, "all": 65}

# scenario -> check ids that may still fail or warn while a feature is being built elsewhere.
# Empty: every check of every selection must pass.
OWNED_ELSEWHERE: dict[str, set[str]] = {}

# This branch's scenarios (resources, prompts, completion, caching hints, SEP-2164): each must run
# in every selection that has it, and pass whole. Listed so a scenario the suite stopped running
# fails the test instead of passing by absence.
RESOURCES_PROMPTS = {
    "resources-list": ("default", "2025-11-25", "2026-07-28", "all"),
    "resources-read-text": ("default", "2025-11-25", "2026-07-28", "all"),
    "resources-read-binary": ("default", "2025-11-25", "2026-07-28", "all"),
    "resources-templates-read": ("default", "2025-11-25", "2026-07-28", "all"),
    "resources-subscribe": ("default", "2025-11-25", "all"),
    "resources-unsubscribe": ("default", "2025-11-25", "all"),
    "prompts-list": ("default", "2025-11-25", "2026-07-28", "all"),
    "prompts-get-simple": ("default", "2025-11-25", "2026-07-28", "all"),
    "prompts-get-with-args": ("default", "2025-11-25", "2026-07-28", "all"),
    "prompts-get-embedded-resource": ("default", "2025-11-25", "2026-07-28", "all"),
    "prompts-get-with-image": ("default", "2025-11-25", "2026-07-28", "all"),
    "completion-complete": ("default", "2025-11-25", "2026-07-28", "all"),
    "caching": ("2026-07-28", "all"),
    "sep-2164-resource-not-found": ("2026-07-28", "all"),
    "input-required-result-non-tool-request": ("2026-07-28", "all"),
}

# The tasks-* scenarios (the pending suite's, run by --requirements 2026-07-28 and --suite all).
TASKS_SCENARIOS = (
    "tasks-lifecycle",
    "tasks-capability-negotiation",
    "tasks-wire-fields",
    "tasks-request-state-removal",
    "tasks-mrtr-input",
    "tasks-request-headers",
    "tasks-dispatch-and-envelope",
    "tasks-status-notifications",
    "tasks-required-task-error",
    "tasks-mrtr-composition",
)
# Every SUCCESS check those scenarios have in alpha.12 (tasks-status-notifications is a single SKIPPED one).
TASKS_PASSED = 44

# Above the script's own per-selection timeouts, so the script reports a slow suite itself.
TIMEOUT_S = 40 * 60


@pytest.fixture(scope="module")
def run(
    tmp_path_factory: pytest.TempPathFactory, say: Callable[[str], None]
) -> tuple[int, dict[str, Any], str]:
    out = tmp_path_factory.mktemp("conformance")
    proc = subprocess.Popen(
        [sys.executable, "scripts/conformance.py", "--out", str(out)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        output, _ = proc.communicate(timeout=TIMEOUT_S)
    except subprocess.TimeoutExpired:
        # SIGTERM, not subprocess.run's SIGKILL: the script then stops the servers and the suite it started.
        proc.terminate()
        output, _ = proc.communicate(timeout=60)
        pytest.fail(f"scripts/conformance.py ran past {TIMEOUT_S} s:\n{output}")
    # The per-scenario table and the four summary lines, in the CI log on a passing run too.
    say(output)
    summary: dict[str, Any] = json.loads((out / "summary.json").read_text())
    return proc.returncode, summary, output


def _bad_checks(selection: dict[str, Any]) -> dict[str, set[str]]:
    bad: dict[str, set[str]] = {}
    for name, scenario in selection["scenarios"].items():
        for problem in scenario["problems"]:
            bad.setdefault(name, set()).add(problem["id"])
    return bad


@pytest.mark.slow
def test_four_selections_run_with_the_summary_lines_and_the_table(
    run: tuple[int, dict[str, Any], str],
) -> None:
    code, summary, output = run
    selections = summary["selections"]
    assert list(selections) == ["default", "2025-11-25", "2026-07-28", "all"]
    for name, count in SCENARIO_COUNTS.items():
        assert len(selections[name]["scenarios"]) == count, name
        assert selections[name]["reasons"] == [], (name, selections[name]["reasons"])
        assert f"{selections[name]['label']:<26} {count:>3} scenarios" in output
    # The per-scenario table: a header with the four selections, a row per scenario.
    header = next(line for line in output.splitlines() if line.startswith("scenario "))
    assert [c.strip() for c in header.split("|")][1:] == ["default", "2025-11-25", "2026-07-28", "all"]
    row = next(line for line in output.splitlines() if line.startswith("resources-list "))
    assert [c.strip().split()[0] for c in row.split("|")][1:] == ["ok"] * 4
    # The baseline lists nothing: no suite defect stands between taskgate and a clean run.
    assert summary["baseline"] == []
    if not OWNED_ELSEWHERE:
        assert code == 0, "scripts/conformance.py reported unexpected failures"
        assert "PASS: no unexpected failure in any selection" in output


@pytest.mark.slow
def test_no_failure_outside_the_features_another_branch_builds(run: tuple[int, dict[str, Any], str]) -> None:
    _, summary, _ = run
    for name, selection in summary["selections"].items():
        unowned = {
            scenario: ids - OWNED_ELSEWHERE.get(scenario, set())
            for scenario, ids in _bad_checks(selection).items()
            if ids - OWNED_ELSEWHERE.get(scenario, set())
        }
        assert unowned == {}, f"{name}: unexpected failures {unowned}"
        assert selection["stale"] == []


@pytest.mark.slow
def test_resources_prompts_completion_and_caching_pass_everywhere(
    run: tuple[int, dict[str, Any], str],
) -> None:
    _, summary, _ = run
    for scenario, where in RESOURCES_PROMPTS.items():
        for name in where:
            counts = summary["selections"][name]["scenarios"].get(scenario)
            assert counts is not None, f"{scenario} did not run in {name}"
            assert counts["failed"] == counts["warnings"] == 0 and counts["passed"] > 0, (
                name,
                scenario,
                counts,
            )
    # Discover declares prompts now that prompts/list answers (a server-stateless check of SEP-2575).
    for name in ("2026-07-28", "all"):
        problems = summary["selections"][name]["scenarios"]["server-stateless"]["problems"]
        assert "sep-2575-server-declares-prompts-in-discover" not in {p["id"] for p in problems}


@pytest.mark.slow
def test_the_tasks_scenarios_keep_passing(run: tuple[int, dict[str, Any], str]) -> None:
    _, summary, _ = run
    for name in ("2026-07-28", "all"):
        scenarios = summary["selections"][name]["scenarios"]
        missing = [s for s in TASKS_SCENARIOS if s not in scenarios]
        assert not missing, f"tasks scenarios that did not run in {name}: {missing}"
        failing = {s: c["failed"] for s, c in scenarios.items() if s.startswith("tasks-") and c["failed"]}
        assert not failing, (name, failing)
        assert summary["selections"][name]["tasks_totals"]["passed"] == TASKS_PASSED
