"""What a tool author imports keeps working while the rooms behind it move: every name of
``taskgate.tools`` and ``taskgate.testing``; and ``secret()`` reads through the port the
composition root installs (the toolkit imports no adapter: make lint's import contracts)."""

from __future__ import annotations

import importlib

import pytest
from pydantic import BaseModel

from taskgate.testing import ToolTester
from taskgate.tools import ToolContext, secret, tool

TOOLS = [
    "Answer",
    "BatchJob",
    "Callback",
    "CheckpointTooLarge",
    "EcsTask",
    "Elicit",
    "ElicitUrl",
    "GlueJobRun",
    "InputRefused",
    "JobFailed",
    "JobResult",
    "ListRoots",
    "MissingCapability",
    "ProtocolError",
    "Root",
    "Sample",
    "Sampled",
    "StepFunctionsExecution",
    "Tool",
    "ToolContext",
    "ToolError",
    "ToolRegistry",
    "registry",
    "secret",
    "tool",
]
TESTING = [
    "LogLine",
    "Progress",
    "ProgressWentBack",
    "Question",
    "Run",
    "ToolTester",
    "accept",
    "decline",
    "dismiss",
    "roots",
    "sampled",
]


@pytest.mark.parametrize(("module", "names"), [("taskgate.tools", TOOLS), ("taskgate.testing", TESTING)])
def test_every_public_name_imports(module: str, names: list[str]) -> None:
    found = importlib.import_module(module)
    assert sorted(found.__all__) == sorted(names)
    for name in names:
        namespace: dict[str, object] = {}
        exec(f"from {module} import {name}", namespace)  # as a tool author writes it
        assert namespace[name] is getattr(found, name)


class ReportIn(BaseModel):
    arn: str


@tool(description="Reads its API key, as a deployed tool does.")
def reads_key(args: ReportIn, ctx: ToolContext) -> str:
    return f"key ends {secret(args.arn)[-4:]}"


ARN = "arn:aws:secretsmanager:us-east-1:123456789012:secret:reports-AbCdEf"


def test_a_tool_reads_its_secret_through_the_roots_port() -> None:
    tester = ToolTester(reads_key)
    tester.memory.secrets[ARN] = "key-1234"
    assert tester.call(reads_key, {"arn": ARN}).text == "key ends 1234"
    run = tester.call(reads_key, {"arn": ARN + "-other"})
    assert run.is_error and "is it in ToolSecretArns?" in run.text
