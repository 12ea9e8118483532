"""`make smoke` (taskgate_cli/smoke.py, issue 20 item 11) against the local server signed in with a
local authorization server, as a deployer runs it against a stack; and its alarm-topic step
against a stack in moto's CloudFormation."""

from __future__ import annotations

import contextlib
import io
import os
import pathlib
import subprocess
from collections.abc import Iterator
from typing import Any

import pytest
from taskgate_cli import smoke

from tests.e2e.local_server import free_port, running_server
from tests.oauth_server import LocalAuthorizationServer, serve_in_thread

ROOT = pathlib.Path(__file__).resolve().parents[2]
SCOPE = "taskgate/tasks"


@pytest.fixture(scope="module")
def signed_in(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[LocalAuthorizationServer, str]]:
    auth = LocalAuthorizationServer(subject="smoke-user", scopes_supported=[SCOPE])
    with serve_in_thread(auth.app_for):
        port = free_port()
        resource = f"http://127.0.0.1:{port}/mcp"
        env = {
            "AUTH_MODE": "JWT",
            "OAUTH_RESOURCE": resource,
            "OAUTH_ISSUER": auth.issuer,
            "OAUTH_SCOPES": SCOPE,
        }
        with running_server(tmp_path_factory.mktemp("smoke") / "server.log", port=port, **env) as url:
            yield auth, url


# What the checkout's Makefile passes (SMOKE_TASKS): the example tools a default deploy serves.
SMOKE_TASKS = [
    "--task",
    'orders_report {"year": 2025, "orders": 200}',
    "--task",
    'archive_orders {"year": 2025, "orders": 200}',
    "--cancel",
    'orders_report {"year": 2025, "orders": 200, "pause_seconds": 30}',
]


def _make_smoke(url: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["make", "-s", "smoke", f"URL={url}"],
        cwd=ROOT,
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=600,
    )


def test_make_smoke_passes_against_a_signed_in_server(
    signed_in: tuple[LocalAuthorizationServer, str], say: Any
) -> None:
    auth, url = signed_in
    token = auth.mint_token(aud=url)
    done = _make_smoke(url, TASKGATE_SMOKE_TOKEN=token)
    say("\n[make smoke]\n" + done.stdout)
    assert done.returncode == 0, done.stdout + done.stderr
    for step in ("sign-in metadata", "task orders_report", "task archive_orders", "cancel orders_report"):
        assert f"ok   {step}" in done.stdout, step
    assert "1 question(s) declined: isError: Archive declined" in done.stdout
    assert "4 passed, 0 failed" in done.stdout


def test_make_smoke_fails_without_a_signed_in_caller(signed_in: tuple[LocalAuthorizationServer, str]) -> None:
    auth, url = signed_in
    done = _make_smoke(url, TASKGATE_SMOKE_TOKEN=auth.mint_token(aud="https://elsewhere.example/mcp"))
    assert done.returncode != 0 and "FAIL task orders_report" in done.stdout, done.stdout + done.stderr


# The stack's monitoring as far as the step reads it: the topic, named by an output.
TEMPLATE = """
Resources:
  AlarmTopic:
    Type: AWS::SNS::Topic
Outputs:
  AlarmTopicArn:
    Value: !Ref AlarmTopic
"""


def test_the_alarm_topic_step_needs_a_confirmed_subscription(monkeypatch: pytest.MonkeyPatch) -> None:
    import boto3
    from moto import mock_aws

    for key in ("AWS_ENDPOINT_URL", "AWS_PROFILE"):
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    with mock_aws():
        cfn, sns = boto3.client("cloudformation"), boto3.client("sns")
        for name in ("subscribed", "nobody"):
            cfn.create_stack(StackName=name, TemplateBody=TEMPLATE)
        outputs = cfn.describe_stacks(StackName="subscribed")["Stacks"][0]["Outputs"]
        sns.subscribe(
            TopicArn=outputs[0]["OutputValue"],
            Protocol="sqs",
            Endpoint="arn:aws:sqs:us-east-1:123456789012:ops",
        )
        assert "1 confirmed subscription(s) (sqs)" in smoke.alarm_topic("subscribed", cfn, sns)
        with pytest.raises(smoke.SmokeFailure, match="nobody is subscribed"):
            smoke.alarm_topic("nobody", cfn, sns)


# The stack as far as --stack's sign-in reads it: its agent client in the user pool, and the
# outputs that name it (here the token endpoint is the test's Cognito-shaped server).
AGENT_TEMPLATE = """
Parameters:
  ClientId: {Type: String}
  PoolId: {Type: String}
  TokenEndpoint: {Type: String}
Resources:
  AlarmTopic:
    Type: AWS::SNS::Topic
Outputs:
  AgentClientId: {Value: !Ref ClientId}
  UserPoolId: {Value: !Ref PoolId}
  AgentTokenEndpoint: {Value: !Ref TokenEndpoint}
  OAuthScope: {Value: taskgate/tasks}
  AlarmTopicArn: {Value: !Ref AlarmTopic}
"""


def test_with_a_stack_the_smoke_test_signs_in_as_the_stacks_agent(
    tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch, say: Any
) -> None:
    """`make smoke URL=… STACK=…` with nothing else: the AgentClient's secret from Cognito (your
    AWS credentials), a client-credentials grant at AgentTokenEndpoint, then every step."""
    import boto3
    from moto import mock_aws

    from tests.oauth_server import RegisteredClient

    for key in ("AWS_ENDPOINT_URL", "AWS_PROFILE"):
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.delenv("TASKGATE_SMOKE_TOKEN", raising=False)
    auth = LocalAuthorizationServer(subject="unused", scopes_supported=[SCOPE], cognito_style=True)
    with mock_aws(), serve_in_thread(auth.app_for):
        cognito = boto3.client("cognito-idp")
        pool = cognito.create_user_pool(PoolName="taskgate")["UserPool"]["Id"]
        client = cognito.create_user_pool_client(
            UserPoolId=pool,
            ClientName="agent",
            GenerateSecret=True,
            AllowedOAuthFlows=["client_credentials"],
            AllowedOAuthScopes=[SCOPE],
        )["UserPoolClient"]
        auth.clients[client["ClientId"]] = RegisteredClient(
            client_id=client["ClientId"],
            redirect_uris=[],
            client_secret=client["ClientSecret"],
            token_endpoint_auth_method="client_secret_basic",
            grant_types=["client_credentials"],
        )
        cfn, sns = boto3.client("cloudformation"), boto3.client("sns")
        parameters = {
            "ClientId": client["ClientId"],
            "PoolId": pool,
            "TokenEndpoint": auth.base_url + "/oauth2/token",
        }
        cfn.create_stack(
            StackName="prod",
            TemplateBody=AGENT_TEMPLATE,
            Parameters=[{"ParameterKey": k, "ParameterValue": v} for k, v in parameters.items()],
        )
        topic = next(
            o
            for o in cfn.describe_stacks(StackName="prod")["Stacks"][0]["Outputs"]
            if o["OutputKey"] == "AlarmTopicArn"
        )
        sns.subscribe(
            TopicArn=topic["OutputValue"], Protocol="sqs", Endpoint="arn:aws:sqs:us-east-1:123456789012:ops"
        )
        env = {
            "AUTH_MODE": "CLIENT",
            "OAUTH_ISSUER": auth.issuer,
            "OAUTH_CLIENT_IDS": client["ClientId"],
            "OAUTH_SCOPES": SCOPE,
        }
        port = free_port()
        with running_server(
            tmp_path / "server.log", port=port, OAUTH_RESOURCE=f"http://127.0.0.1:{port}/mcp", **env
        ) as url:
            out = io.StringIO()
            with contextlib.redirect_stdout(out):
                code = smoke.main(["--url", url, "--stack", "prod", *SMOKE_TASKS])
    say("\n[smoke --stack]\n" + out.getvalue())
    assert code == 0, out.getvalue()
    assert "5 passed, 0 failed" in out.getvalue()
    (issued,) = auth.issued_tokens
    assert issued["client_id"] == client["ClientId"] and issued["scope"] == SCOPE


def test_the_first_user_is_added_to_the_stacks_user_pool(monkeypatch: pytest.MonkeyPatch) -> None:
    """`make user STACK=… EMAIL=…` (taskgate_cli.deployed add-user) against a stack in moto whose
    user pool is named by its UserPoolId output, as a project's stack forwards it."""
    import boto3
    from moto import mock_aws
    from taskgate_cli import deployed

    for key in ("AWS_ENDPOINT_URL", "AWS_PROFILE"):
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    with mock_aws():
        cognito, cfn = boto3.client("cognito-idp"), boto3.client("cloudformation")
        pool = cognito.create_user_pool(PoolName="rollouts", UsernameAttributes=["email"])["UserPool"]["Id"]
        cfn.create_stack(
            StackName="rollouts",
            TemplateBody=AGENT_TEMPLATE,
            Parameters=[
                {"ParameterKey": "ClientId", "ParameterValue": "unused"},
                {"ParameterKey": "PoolId", "ParameterValue": pool},
                {"ParameterKey": "TokenEndpoint", "ParameterValue": "https://unused.example/oauth2/token"},
            ],
        )
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            assert deployed.main(["--stack", "rollouts", "add-user", "ada@example.com"]) == 0
        [user] = cognito.list_users(UserPoolId=pool)["Users"]
    attributes = {a["Name"]: a["Value"] for a in user["Attributes"]}
    assert attributes["email"] == "ada@example.com" and user["UserStatus"] == "FORCE_CHANGE_PASSWORD"
    assert f"ada@example.com added to {pool}" in out.getvalue()
