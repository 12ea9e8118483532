"""Reading a deployed stack (taskgate_cli.deployed): a project's stack with taskgate's nested in
it, its outputs and its first user, and the smoke test's tool arguments (issue 31, item 4)."""

from __future__ import annotations

import argparse
from typing import Any

import pytest
from taskgate_cli import deployed, smoke

NESTED_ID = "arn:aws:cloudformation:us-east-1:1:stack/rollouts-Taskgate-X/1"


class FakeCloudFormation:
    """Two stacks as CloudFormation describes them: a project's, which forwards some outputs
    of the taskgate stack nested in it."""

    def __init__(self, nested_outputs: dict[str, str]) -> None:
        self.stacks = {
            "rollouts": {
                "McpEndpoint": "https://project.example/mcp",
                "UserPoolId": nested_outputs["UserPoolId"],
            },
            NESTED_ID: {**nested_outputs, "McpEndpoint": "https://nested.example/mcp"},
        }

    def describe_stacks(self, StackName: str) -> dict[str, Any]:
        outputs = [{"OutputKey": k, "OutputValue": v} for k, v in self.stacks[StackName].items()]
        return {"Stacks": [{"Outputs": outputs}]}

    def describe_stack_resources(self, StackName: str) -> dict[str, Any]:
        nested = [{"ResourceType": deployed.NESTED_STACK, "PhysicalResourceId": NESTED_ID}]
        return {"StackResources": nested if StackName == "rollouts" else []}


class FakeCognito:
    class exceptions:
        class UsernameExistsException(Exception):
            pass

    def __init__(self) -> None:
        self.users: dict[str, list[str]] = {}

    def admin_create_user(self, *, UserPoolId: str, Username: str, **_: Any) -> None:
        if Username in self.users.setdefault(UserPoolId, []):
            raise self.exceptions.UsernameExistsException()
        self.users[UserPoolId].append(Username)


def test_a_projects_outputs_include_its_nested_stacks_its_own_first() -> None:
    cfn = FakeCloudFormation(
        {"UserPoolId": "us-east-1_abc", "AgentClientId": "agent", "AlarmTopicArn": "arn:topic"}
    )
    found = deployed.outputs("rollouts", cfn)
    assert found["McpEndpoint"] == "https://project.example/mcp"
    assert found["AgentClientId"] == "agent" and found["AlarmTopicArn"] == "arn:topic"
    assert [key for key, _ in deployed.ordered(found)][:3] == ["McpEndpoint", "UserPoolId", "AgentClientId"]


def test_the_first_user_goes_to_the_stacks_user_pool() -> None:
    cognito = FakeCognito()
    cfn = FakeCloudFormation({"UserPoolId": "us-east-1_abc"})
    said = deployed.add_user("rollouts", "ada@example.com", cfn, cognito)
    assert cognito.users == {"us-east-1_abc": ["ada@example.com"]}
    assert "emails a temporary password" in said
    assert "already a user" in deployed.add_user("rollouts", "ada@example.com", cfn, cognito)


def test_a_stack_signing_in_elsewhere_has_no_user_pool_to_add_to() -> None:
    cfn = FakeCloudFormation({"UserPoolId": "none: JwtIssuer names your own issuer"})
    assert deployed.given(deployed.outputs("rollouts", cfn), "UserPoolId") is None
    with pytest.raises(deployed.StackError, match="no user pool of its own"):
        deployed.add_user("rollouts", "ada@example.com", cfn, FakeCognito())


def test_smoke_takes_a_tool_and_its_json_arguments() -> None:
    assert smoke.parse_call('rollout {"service": "smoke", "waves": 1}') == (
        "rollout",
        {"service": "smoke", "waves": 1},
    )
    assert smoke.parse_call("greet") == ("greet", {})
    with pytest.raises(argparse.ArgumentTypeError, match="not JSON"):
        smoke.parse_call("rollout {service: smoke}")
