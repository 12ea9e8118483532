"""Three kinds of caller side by side on moto (AuthMode USER,CLIENT,IAM): a person signed in
through the stack's authorization server, an agent with a client-credentials token from the
(Cognito-shaped) user pool, and an IAM role whose SigV4 request API Gateway checked. Each
creates and reads its own task and cannot see the others'. The authorization server keeps its
state in the task table (DynamoDB adapter), where its items never reach the owner index.

The person and the agent reach the app as a host would; the IAM caller as API Gateway hands
a request to the function (an HTTP API v2 event through Mangum, the identity in
``requestContext.authorizer.iam``): a signature only API Gateway can check.
"""

from __future__ import annotations

import copy
import json
import pathlib
import time
from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from mangum import Mangum

from taskgate import wiring
from taskgate.adapters.dynamodb_signin import DynamoDBSignInStore
from taskgate.adapters.secrets import SecretsManagerSecret
from taskgate.local.runtime import EmbeddedAws
from tests.mcp_client import envelope, headers_for
from tests.sign_in_stack import STACK, SignInStack, build_stack, sign_in_env

ROOT = pathlib.Path(__file__).resolve().parents[2]
ROLE = "arn:aws:sts::123456789012:assumed-role/ReportAgent/lambda-session-7"


@pytest.fixture
def stack(aws: EmbeddedAws) -> Iterator[SignInStack]:
    ddb = boto3.client("dynamodb", region_name="us-east-1")
    secrets = SecretsManagerSecret(
        lambda: boto3.client("secretsmanager", region_name="us-east-1"), aws.sign_in_key_secret_arn
    )
    yield build_stack(
        lambda: wiring.root().server,
        DynamoDBSignInStore(lambda: ddb, aws.table_name),
        env=sign_in_env(TASK_TABLE=aws.table_name, STATE_MACHINE_ARN=aws.state_machine_arn),
        keys=secrets.versions,
    )


class _Context:
    function_name = "api"
    memory_limit_in_mb = 512
    invoked_function_arn = "arn:aws:lambda:us-east-1:123456789012:function:api"
    aws_request_id = "r"

    def get_remaining_time_in_millis(self) -> int:
        return 29_000


def _through_api_gateway(
    stack: SignInStack, path: str, method: str, params: dict[str, Any], iam: str | None
) -> Any:
    event = copy.deepcopy(json.loads((ROOT / "events" / "api_tools_call_task.json").read_text()))
    event["rawPath"] = path
    event["routeKey"] = event["requestContext"]["routeKey"] = f"POST {path}"
    event["requestContext"]["http"]["path"] = path
    event["headers"] = {**headers_for(method, params), "host": "taskgate.example"}
    event["requestContext"]["domainName"] = "taskgate.example"
    event["requestContext"]["authorizer"] = (
        {"iam": {"accessKey": "AKIA…", "accountId": "123456789012", "userArn": iam, "userId": "AROA:s"}}
        if iam
        else {}
    )
    event["body"] = json.dumps(envelope(method, params, 1))
    reply = Mangum(stack.app, lifespan="off")(event, _Context())  # type: ignore[arg-type]
    return reply["statusCode"], json.loads(reply["body"])


def _task(reply: Any) -> str:
    body = reply.json() if hasattr(reply, "json") else reply
    return str(body["result"]["taskId"])


def test_a_person_an_agent_and_an_iam_role_each_own_their_tasks(stack: SignInStack, aws: EmbeddedAws) -> None:
    call = {"name": "slow_compute", "arguments": {"seconds": 0.1}}
    person = stack.tokens()["access_token"]
    agent = stack.agent_token()
    person_task = _task(stack.mcp(person, "tools/call", call))
    agent_task = _task(stack.mcp(agent, "tools/call", call))
    status, created = _through_api_gateway(stack, "/iam/mcp", "tools/call", call, ROLE)
    assert status == 200, created
    iam_task = _task(created)

    def get(caller: str, task_id: str) -> dict[str, Any]:
        params = {"taskId": task_id}
        if caller == "iam":
            return dict(_through_api_gateway(stack, "/iam/mcp", "tasks/get", params, ROLE)[1])
        return dict(stack.mcp(person if caller == "person" else agent, "tasks/get", params).json())

    mine = {"person": person_task, "agent": agent_task, "iam": iam_task}
    for caller, own in mine.items():
        assert get(caller, own)["result"]["taskId"] == own, caller
        for other, task_id in mine.items():
            if other != caller:
                assert get(caller, task_id)["error"]["code"] == -32602, (caller, other)
    items = {
        i["taskId"]["S"]: i
        for i in boto3.client("dynamodb", region_name="us-east-1").scan(TableName=aws.table_name)["Items"]
    }
    issuer = stack.idp.issuer
    assert items[person_task]["ownerId"]["S"] == f"{issuer}#{stack.idp.subject_of('dev@example.com')}"
    assert items[agent_task]["ownerId"]["S"] == f"{issuer}#local-agent"
    assert items[iam_task]["ownerId"]["S"] == "iam#arn:aws:iam::123456789012:role/ReportAgent"


def test_iam_requests_come_only_through_api_gateways_check(stack: SignInStack) -> None:
    # /iam/mcp without an IAM identity (not through an AWS_IAM route): refused.
    status, body = _through_api_gateway(stack, "/iam/mcp", "tools/list", {}, None)
    assert status == 403 and "SigV4" in body["error"]["message"]
    assert stack.mcp(stack.agent_token(), "tools/list", {}, path="/iam/mcp").status_code == 403
    # An IAM identity is no bearer token: /mcp still asks for one.
    status, body = _through_api_gateway(stack, "/mcp", "tools/list", {}, ROLE)
    assert status == 401


def test_the_authorization_servers_state_is_in_the_task_table_with_a_ttl(
    stack: SignInStack, aws: EmbeddedAws
) -> None:
    client_id = stack.register()
    authorization = stack.sign_in_as_person(stack.authorization(client_id))
    first = stack.exchange(authorization)
    assert first.status_code == 200
    # DynamoDB decides once: the code again (a replay) is refused, and revokes its refresh token.
    assert stack.exchange(authorization).json()["error"] == "invalid_grant"
    refreshed = stack.http.post(
        f"{STACK}/oauth/token",
        data={
            "grant_type": "refresh_token",
            "refresh_token": first.json()["refresh_token"],
            "client_id": client_id,
        },
    )
    assert refreshed.status_code == 400
    second = stack.tokens(client_id)  # no consent page the second time: it is kept
    rotated = stack.http.post(
        f"{STACK}/oauth/token",
        data={
            "grant_type": "refresh_token",
            "refresh_token": second["refresh_token"],
            "client_id": client_id,
        },
    )
    assert rotated.status_code == 200
    items = boto3.client("dynamodb", region_name="us-east-1").scan(TableName=aws.table_name)["Items"]
    kinds: dict[str, int] = {}
    now = time.time()
    for item in items:
        key = item["taskId"]["S"]
        prefix = key.split("#", 1)[0]
        if prefix in ("client", "pending", "code", "grant", "consent", "limit", "cimd"):
            kinds[prefix] = kinds.get(prefix, 0) + 1
            assert "ownerId" not in item and "activeOwner" not in item, key  # never in an owner index
            assert float(item["expiresAt"]["N"]) > now, key  # the table's TTL attribute, in seconds
            assert not any(secret in json.dumps(item) for secret in (second["refresh_token"].split(".")[1],))
    assert {"client", "pending", "code", "grant", "consent", "limit"} <= set(kinds), kinds
