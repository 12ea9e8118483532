"""Your tools' own environment and secrets (issue 20, item 7): ToolEnvironment's pairs are in
os.environ before the tool modules load; a secret is read with taskgate.tools.secret."""

from __future__ import annotations

from typing import Any

import pytest

from taskgate import wiring
from taskgate.config import ConfigurationError, Settings, parse_tool_environment
from taskgate.root import Taskgate, apply_tool_environment
from taskgate.tools import ToolError, secret
from taskgate.tools.needs import forget_secrets
from taskgate.tools.registry import ToolRegistry


def test_tool_environment_is_set_before_the_tools_load(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TASK_TABLE", "t")
    monkeypatch.setenv("TOOL_ENVIRONMENT", "REPORTS_BUCKET=reports-example,REGION_HINT=eu-west-1,EMPTY=")
    monkeypatch.delenv("REPORTS_BUCKET", raising=False)
    monkeypatch.delenv("REGION_HINT", raising=False)
    monkeypatch.setenv("EMPTY", "mine")  # a developer's own value wins
    wiring.reset()
    try:
        wiring.root().tools  # noqa: B018 - loading them is the point
        import os

        assert os.environ["REPORTS_BUCKET"] == "reports-example"
        assert os.environ["REGION_HINT"] == "eu-west-1"
        assert os.environ["EMPTY"] == "mine"
    finally:
        monkeypatch.delenv("REPORTS_BUCKET", raising=False)
        monkeypatch.delenv("REGION_HINT", raising=False)
        wiring.reset()


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        ("TASK_TABLE=other", "TASK_TABLE is a name taskgate or Lambda sets"),
        ("AWS_REGION=eu-west-1", "AWS_REGION is a name"),
        ("lower=x", "is not NAME=value"),
        ("NOVALUE", "is not NAME=value"),
    ],
)
def test_a_tool_environment_that_would_break_taskgate_fails_the_start(value: str, problem: str) -> None:
    with pytest.raises(ConfigurationError, match="TOOL_ENVIRONMENT") as caught:
        Settings.from_env({"TASK_TABLE": "t", "TOOL_ENVIRONMENT": value})
    assert problem in str(caught.value)


def test_pairs_apply_to_a_given_environment() -> None:
    env: dict[str, str] = {"B": "kept"}
    apply_tool_environment(parse_tool_environment("A=1, B=2"), env)
    assert env == {"A": "1", "B": "kept"}


def test_a_tool_reads_its_secret_once(monkeypatch: pytest.MonkeyPatch) -> None:
    from taskgate.adapters import aws_clients

    calls: list[str] = []

    class _Client:
        def get_secret_value(self, SecretId: str) -> dict[str, Any]:
            calls.append(SecretId)
            if SecretId.endswith("missing"):
                from botocore.exceptions import ClientError

                raise ClientError(
                    {"Error": {"Code": "AccessDeniedException", "Message": "no"}}, "GetSecretValue"
                )
            return {"SecretString": "s3cr3t"}

    monkeypatch.setattr(aws_clients, "client", lambda service: _Client())
    # The composition root installs the reader behind secret() (deployed: Secrets Manager's).
    settings = Settings.from_env(
        {"TASK_TABLE": "t", "STATE_MACHINE_ARN": "arn:aws:states:us-east-1:1:stateMachine:m"}
    )
    Taskgate(settings, wiring.aws_ports(settings), tools=ToolRegistry()).tools  # noqa: B018
    arn = "arn:aws:secretsmanager:us-east-1:123456789012:secret:reports-AbCdEf"
    assert secret(arn) == "s3cr3t" and secret(arn) == "s3cr3t"
    assert calls == [arn]
    with pytest.raises(ToolError, match="is it in ToolSecretArns"):
        secret("arn:aws:secretsmanager:us-east-1:123456789012:secret:missing")
    forget_secrets()
