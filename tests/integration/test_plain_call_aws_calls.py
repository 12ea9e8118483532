"""The AWS calls a plain call makes, as the IAM check's recorder counts them (issue 27): a tool
known to be quick makes exactly the calls a tool that can never be a task makes (on the main of
before issue 27, where every undeclared tool ran inline, both made none); the first call of a
tool in a new API environment reads its figure once; the first run of a tool makes the hidden
task's. scripts/plain_call_aws_calls.py prints the same on any revision."""

from __future__ import annotations

import json
import os
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

from taskgate import wiring
from taskgate.local import aws_calls
from taskgate.local.runtime import EmbeddedAws
from tests.mcp_client import envelope, headers_for


@pytest.fixture
def recorded(aws: EmbeddedAws, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    monkeypatch.setenv("TOOL_MODULES", "taskgate_conformance,taskgate_tools,tests.fixture_tools")
    wiring.reset()
    if aws_calls._installed is None:  # this file run alone, outside the recorded tiers
        aws_calls.install(tmp_path)
    assert aws_calls._installed is not None
    return aws_calls._installed


def _recorded(directory: Path) -> list[dict[str, str]]:
    """What this process recorded (other processes of the run, servers started by other
    tests, record into files of their own in the same folder)."""
    mine = directory / f"calls-{os.getpid()}.jsonl"
    return (
        [json.loads(line) for line in mine.read_text().splitlines() if line.strip()] if mine.exists() else []
    )


def _calls(http: TestClient, directory: Path, name: str, arguments: dict[str, Any]) -> Counter[str]:
    """The ApiFunction's AWS calls of one plain 2026-07-28 call, by operation."""
    seen = len(_recorded(directory))
    params = {"name": name, "arguments": arguments}
    resp = http.post(
        "/mcp", json=envelope("tools/call", params, 1, tasks=False), headers=headers_for("tools/call", params)
    )
    assert resp.status_code == 200 and "error" not in resp.text[:200], resp.text[:300]
    made = [c for c in _recorded(directory)[seen:] if c["function"] == "ApiFunction"]
    return Counter(c["operation"] for c in made)


def test_a_known_quick_tools_plain_call_makes_the_calls_an_always_inline_one_makes(
    recorded: Path, http: TestClient
) -> None:
    quick = {"kilobytes": 1, "seconds": 0}
    inline = _calls(http, recorded, "greet", {"name": "a"})
    first = _calls(http, recorded, "unicode_result", quick)
    assert first["stepfunctions:StartExecution"] == 1  # a hidden task, the first time
    # Known quick from then on. An API environment that has not read what is known of the tool
    # reads it once (the worker that learned it is another process deployed; here it may share
    # this one's cache), and from then on makes the calls greet makes, which are none.
    assert _calls(http, recorded, "unicode_result", quick) in (Counter({"dynamodb:GetItem": 1}), inline)
    assert _calls(http, recorded, "unicode_result", quick) == inline == Counter()
    wiring.reset()  # a new API environment
    assert _calls(http, recorded, "unicode_result", quick) == Counter({"dynamodb:GetItem": 1})
    assert _calls(http, recorded, "unicode_result", quick) == inline
