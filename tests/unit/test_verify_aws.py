"""`make verify-aws` (scripts/verify_aws.py, issue 29 item 3): what each check concludes from
what AWS answers, and the report it writes. The checks run against a real account; here a
stand-in answers as AWS would in a good and in a bad case."""

from __future__ import annotations

import importlib.util
import json
import pathlib
import sys
from types import ModuleType
from typing import Any

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def verify() -> ModuleType:
    spec = importlib.util.spec_from_file_location("verify_aws", ROOT / "scripts" / "verify_aws.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules["verify_aws"] = module
    spec.loader.exec_module(module)
    return module


class Gone(Exception):
    pass


class FakeStack:
    """A stack as CloudFormation, Lambda, DynamoDB and Cognito answer for it."""

    def __init__(
        self, *, republish: bool = False, rollback: str = "ROLLBACK_COMPLETE", leftover: bool = False
    ):
        self.name, self.region = "taskgate", "us-east-1"
        self.params = {"WorkerReservedConcurrency": "0", "SignInPeople": "true"}
        self.version = 7
        self.republish, self.rollback, self.leftover = republish, rollback, leftover
        self.updates: list[dict[str, str]] = []
        stack = self

        class Cfn:
            def describe_stack_events(self, StackName: str) -> dict[str, Any]:
                return {
                    "StackEvents": [
                        {
                            "LogicalResourceId": "TaskTable",
                            "ResourceStatus": "CREATE_COMPLETE",
                            "PhysicalResourceId": "t-1",
                        },
                        {
                            "LogicalResourceId": "UserPool",
                            "ResourceStatus": "CREATE_COMPLETE",
                            "PhysicalResourceId": "p-1",
                        },
                    ]
                }

            def delete_stack(self, StackName: str) -> None:
                stack.deleted = StackName

        class Missing:
            class exceptions:
                ResourceNotFoundException = Gone

            def describe_table(self, TableName: str) -> dict[str, Any]:
                if stack.leftover:
                    return {"Table": {}}
                raise Gone

            def describe_user_pool(self, UserPoolId: str) -> dict[str, Any]:
                raise Gone

        self.cfn, self.dynamodb, self.cognito = Cfn(), Missing(), Missing()

    def parameters(self) -> dict[str, str]:
        return dict(self.params)

    def outputs(self) -> dict[str, str]:
        return {"WorkerFunctionName": "taskgate-worker", "McpEndpoint": "https://x.example/mcp"}

    def update(self, changes: dict[str, str]) -> str:
        self.updates.append(changes)
        self.params.update(changes)
        if self.republish:
            self.version += 1
        return "UPDATE_COMPLETE"

    def wait(self, name: str | None = None) -> str:
        return self.rollback

    def alias_version(self, function: str) -> str:
        return str(self.version)


def test_a_reservation_alone_keeps_the_version(verify: ModuleType) -> None:
    good = verify.reservation(FakeStack())
    assert good.result == "PASS" and good.evidence["version_before"] == good.evidence["version_after"] == "7"
    assert "WorkerReservedConcurrency 0 -> 1 -> 0" in good.seen
    assert verify.reservation(FakeStack(republish=True)).result == "FAIL"


def test_a_failed_first_create_must_finish_its_rollback_and_leave_nothing(verify: ModuleType) -> None:
    commands: list[list[str]] = []
    stack = FakeStack()
    good = verify.failed_create(stack, account="123456789012", deploy=lambda c: commands.append(c) or 1)
    assert good.result == "PASS", good.seen
    assert stack.deleted == "taskgate-verify-create"
    assert any(a.startswith("WorkerPolicyArns=arn:aws:iam::123456789012:policy/") for a in commands[0])
    assert (
        verify.failed_create(FakeStack(rollback="ROLLBACK_FAILED"), account="1", deploy=lambda c: 1).result
        == "FAIL"
    )
    left = verify.failed_create(FakeStack(leftover=True), account="1", deploy=lambda c: 1)
    assert left.result == "FAIL" and "table t-1" in left.seen


def test_the_report_is_a_table_and_json(verify: ModuleType, tmp_path: pathlib.Path) -> None:
    checks = [verify.reservation(FakeStack()), verify.Check("host-sign-in", seen="interactive")]
    path = verify.write_report(tmp_path, "taskgate", "us-east-1", checks)
    table = path.read_text()
    assert "| check | result | what was seen | seconds |" in table
    assert "| reservation | PASS |" in table and "| host-sign-in | SKIPPED |" in table
    document = json.loads((tmp_path / "verify-aws.json").read_text())
    assert [c["name"] for c in document["checks"]] == ["reservation", "host-sign-in"]
    assert set(verify.CHECKS) == {
        "reservation",
        "failed-create",
        "streaming-sign-in",
        "stream-disconnect",
        "pinned-version",
        "host-sign-in",
    }
