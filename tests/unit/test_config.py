"""Settings are validated when a function starts: a misconfigured deployment fails
its cold start saying what is wrong, instead of answering "please retry" later."""

from __future__ import annotations

import importlib.util
import pathlib
import sys

import pytest

from taskgate import wiring
from taskgate.config import DEFAULT_TOOL_MODULES, ConfigurationError, Settings

ROOT = pathlib.Path(__file__).resolve().parents[2]
REQUIRED = {"TASK_TABLE": "tasks", "STATE_MACHINE_ARN": "arn:aws:states:us-east-1:1:stateMachine:t"}


def test_the_table_and_the_state_machine_are_required() -> None:
    with pytest.raises(ConfigurationError, match="TASK_TABLE"):
        Settings.from_env({})
    # The worker is given no state machine (template.yaml: the reference would be
    # circular); the API and the sweeper require one.
    worker = Settings.from_env({"TASK_TABLE": "tasks"})
    with pytest.raises(ConfigurationError, match="STATE_MACHINE_ARN"):
        worker.require("state_machine_arn")
    assert (
        Settings.from_env(REQUIRED).require("state_machine_arn").state_machine_arn
        == REQUIRED["STATE_MACHINE_ARN"]
    )


def test_defaults_live_in_one_place_and_empty_means_unset() -> None:
    s = Settings.from_env({**REQUIRED, "DEFAULT_TTL_MS": "", "RESULT_BUCKET": ""})
    assert s.limits.default_ttl_ms == 3_600_000 and s.result_bucket == ""
    assert s.tool_modules == tuple(DEFAULT_TOOL_MODULES.split(","))
    assert s.session_ttl_ms == 86_400_000 and s.stream_log_ttl_ms == 3_600_000


def test_values_are_parsed_and_checked() -> None:
    s = Settings.from_env({**REQUIRED, "TOOL_MODULES": " a, b ,,", "STREAM_MAX_SECONDS": "1.5"})
    assert s.tool_modules == ("a", "b") and s.stream_max_seconds == 1.5
    with pytest.raises(ConfigurationError, match="MAX_TTL_MS"):
        Settings.from_env({**REQUIRED, "MAX_TTL_MS": "soon"})
    with pytest.raises(ConfigurationError, match="POLL_INTERVAL_MS"):
        Settings.from_env({**REQUIRED, "POLL_INTERVAL_MS": "0"})
    # A stream longer than API Gateway's 29 s would be cut by the gateway.
    with pytest.raises(ConfigurationError, match="STREAM_MAX_SECONDS"):
        Settings.from_env({**REQUIRED, "STREAM_MAX_SECONDS": "60"})


@pytest.mark.parametrize("function", ["api", "worker", "sweeper"])
def test_a_misconfigured_function_fails_its_cold_start(
    function: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in REQUIRED:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("POWERTOOLS_TRACE_DISABLED", "true")
    wiring.reset()
    path = ROOT / "functions" / function / f"{function}_handler.py"
    spec = importlib.util.spec_from_file_location(f"cold_{function}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    with pytest.raises(ConfigurationError, match="TASK_TABLE"):
        spec.loader.exec_module(module)
    sys.modules.pop(f"cold_{function}", None)
    wiring.reset()


@pytest.mark.parametrize(("function", "starts"), [("api", False), ("worker", True), ("sweeper", False)])
def test_only_the_worker_starts_without_a_state_machine(
    function: str, starts: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The environment template.yaml gives each function: the worker has no STATE_MACHINE_ARN."""
    monkeypatch.setenv("TASK_TABLE", "tasks")
    monkeypatch.delenv("STATE_MACHINE_ARN", raising=False)
    monkeypatch.setenv("POWERTOOLS_TRACE_DISABLED", "true")
    # What Lambda gives every function (the worker builds its client at init).
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN"):
        monkeypatch.setenv(name, "testing")
    monkeypatch.setenv("AWS_REGION", "us-east-1")
    wiring.reset()
    path = ROOT / "functions" / function / f"{function}_handler.py"
    spec = importlib.util.spec_from_file_location(f"cold_{function}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    try:
        if starts:
            spec.loader.exec_module(module)
        else:
            with pytest.raises(ConfigurationError, match="STATE_MACHINE_ARN"):
                spec.loader.exec_module(module)
    finally:
        sys.modules.pop(f"cold_{function}", None)
        wiring.reset()
