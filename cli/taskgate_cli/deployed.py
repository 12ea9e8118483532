"""A deployed stack, read with your AWS credentials: ``python -m taskgate_cli.deployed``.

    python -m taskgate_cli.deployed --stack NAME outputs             what a deployer needs, one per line
    python -m taskgate_cli.deployed --stack NAME add-user EMAIL      the first person who may sign in

A project's stack nests taskgate's (``Taskgate``, an ``AWS::Serverless::Application``); its
outputs are read together with the nested stack's, the project's own first, so both commands
(and ``make smoke``) work on a project's stack and on taskgate's own alike. boto3 is imported
here only (the rest of taskgate_cli is the standard library).
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

# What a deployer needs first, in this order (others follow, sorted).
FIRST = (
    "McpEndpoint",
    "ProtectedResourceMetadataUrl",
    "AuthorizationServer",
    "UserPoolId",
    "AgentClientId",
    "AgentTokenEndpoint",
    "IamEndpoint",
    "AlarmTopicArn",
)
NESTED_STACK = "AWS::CloudFormation::Stack"


class StackError(Exception):
    pass


def _own_outputs(stack: str, cloudformation: Any) -> dict[str, str]:
    try:
        described = cloudformation.describe_stacks(StackName=stack)["Stacks"][0]
    except Exception as exc:  # botocore's ClientError: no such stack, no credentials
        raise StackError(f"cannot read stack {stack!r}: {exc}") from None
    return {o["OutputKey"]: o["OutputValue"] for o in described.get("Outputs", [])}


def outputs(stack: str, cloudformation: Any) -> dict[str, str]:
    """The stack's outputs, then those of the stacks nested in it that it does not output
    itself (a project forwards the ones a deployer needs; the rest stay in taskgate's)."""
    found = _own_outputs(stack, cloudformation)
    resources = cloudformation.describe_stack_resources(StackName=stack)["StackResources"]
    for resource in resources:
        if resource["ResourceType"] == NESTED_STACK and resource.get("PhysicalResourceId"):
            for key, value in _own_outputs(resource["PhysicalResourceId"], cloudformation).items():
                found.setdefault(key, value)
    return found


def given(found: dict[str, str], key: str) -> str | None:
    """An output's value, or None when the stack has none or says "none: why" (taskgate's
    outputs that a project forwards exist in every configuration, so they say it)."""
    value = found.get(key, "").strip()
    return value if value and not value.startswith("none:") else None


def ordered(found: dict[str, str]) -> list[tuple[str, str]]:
    first = [(key, found[key]) for key in FIRST if key in found]
    return first + sorted((k, v) for k, v in found.items() if k not in FIRST)


def add_user(stack: str, email: str, cloudformation: Any, cognito: Any) -> str:
    """Create ``email`` in the stack's user pool; Cognito emails them a temporary password,
    which the first sign-in (in any MCP host) asks them to change."""
    pool = given(outputs(stack, cloudformation), "UserPoolId")
    if pool is None:
        raise StackError(
            f"stack {stack} has no user pool of its own (JwtIssuer names another issuer): add people there"
        )
    try:
        cognito.admin_create_user(
            UserPoolId=pool,
            Username=email,
            UserAttributes=[{"Name": "email", "Value": email}, {"Name": "email_verified", "Value": "true"}],
            DesiredDeliveryMediums=["EMAIL"],
        )
    except cognito.exceptions.UsernameExistsException:
        return f"{email} is already a user of {pool}"
    return f"{email} added to {pool}: Cognito emails a temporary password, changed at the first sign-in"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m taskgate_cli.deployed", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("--stack", required=True, help="the stack's name (samconfig.toml's stack_name)")
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("outputs", help="the stack's outputs, its nested taskgate stack's included")
    user = commands.add_parser("add-user", help="add a person to the stack's user pool")
    user.add_argument("email")
    args = parser.parse_args(argv)
    import boto3

    cloudformation = boto3.client("cloudformation")
    try:
        if args.command == "outputs":
            for key, value in ordered(outputs(args.stack, cloudformation)):
                print(f"{key:32} {value}")
        else:
            print(add_user(args.stack, args.email, cloudformation, boto3.client("cognito-idp")))
    except StackError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
