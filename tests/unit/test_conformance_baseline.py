"""scripts/conformance.py's reading of the expected-failures baseline and its verdict:
an entry needs an upstream link and a reason; failures, warnings and stale entries are
judged as the suite judges them."""

from __future__ import annotations

import importlib.util
import pathlib
import sys
from types import ModuleType

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]


def _script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("conformance_script", ROOT / "scripts" / "conformance.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules["conformance_script"] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def test_the_repository_baseline_is_valid_and_empty() -> None:
    assert _script().load_baseline(ROOT / "conformance-baseline.yml") == []


def test_an_entry_needs_an_upstream_link_and_a_reason(tmp_path: pathlib.Path) -> None:
    script = _script()
    good = tmp_path / "good.yml"
    good.write_text(
        "server:\n"
        "  # https://github.com/modelcontextprotocol/conformance/issues/440: sends the key 'undefined'\n"
        "  - input-required-result-multi-round:sep-2322-multi-round-r2\n"
        "  # https://github.com/modelcontextprotocol/conformance/issues/516 - fails undeclared features\n"
        '  - "server-stateless"\n'
    )
    entries = script.load_baseline(good)
    assert [e.key for e in entries] == [
        "input-required-result-multi-round:sep-2322-multi-round-r2",
        "server-stateless",
    ]
    assert entries[0].reason == "sends the key 'undefined'"
    assert entries[1].link.endswith("/issues/516")
    for text in (
        "server:\n  - tools-call-audio\n",  # no comment at all
        "server:\n  # not implemented yet\n  - tools-call-audio\n",  # a reason, no link
        "server:\n  # https://github.com/modelcontextprotocol/conformance/issues/1\n  - tools-call-audio\n",
    ):
        bad = tmp_path / "bad.yml"
        bad.write_text(text)
        with pytest.raises(script.SetupError, match="upstream issue"):
            script.load_baseline(bad)


def test_the_verdict_counts_warnings_and_stale_entries() -> None:
    script = _script()
    scenarios = {name: script.Scenario(name, None) for name in ("a", "b", "c")}
    checks = {
        "a": [{"id": "a1", "status": "FAILURE"}, {"id": "a2", "status": "SUCCESS"}],
        "b": [{"id": "b1", "status": "WARNING"}],
        "c": [{"id": "c1", "status": "SUCCESS"}],
    }
    baseline = [script.BaselineEntry("a", "a1", "r", "l"), script.BaselineEntry("c", "c1", "r", "l")]
    unexpected, expected, stale = script.judge(scenarios, checks, baseline)
    assert (unexpected, expected, stale) == (["b:b1"], ["a:a1"], ["c:c1"])
