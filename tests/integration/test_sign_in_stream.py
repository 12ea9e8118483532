"""The streaming endpoint under the stack's own sign-in, on moto, as StreamFunction gets its
requests: REST API events (the path below the stage, ``/mcp``; the stage in
``requestContext``) run through taskgate's streaming runtime's ASGI bridge
(taskgate.lambda_stream.asgi), the app built from StreamFunction's settings over the real state
machine. A person signed in at the HTTP API's authorization server for the streaming endpoint
gets a held 2026-07-28 plain call there, its progress leaving before its result; without a
token, or with the HTTP API's, the function answers 401 pointing at its metadata under the
stage."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

import boto3
import pytest

from taskgate.adapters.dynamodb_signin import DynamoDBSignInStore
from taskgate.adapters.secrets import SecretsManagerSecret
from taskgate.config import Settings
from taskgate.lambda_stream.asgi import DELIMITER, stream_app
from taskgate.local.runtime import EmbeddedAws
from taskgate.root import Taskgate
from taskgate.wiring import aws_ports
from tests.mcp_client import envelope, headers_for
from tests.runtime_api_emulator import rest_api_event
from tests.sign_in_stack import (
    STREAM,
    STREAM_HOST,
    STREAM_RESOURCE,
    SignInStack,
    build_stack,
    sign_in_env,
    stream_env,
)


@pytest.fixture
def stack(aws: EmbeddedAws) -> Iterator[SignInStack]:
    ddb = boto3.client("dynamodb", region_name="us-east-1")
    secrets = SecretsManagerSecret(
        lambda: boto3.client("secretsmanager", region_name="us-east-1"), aws.sign_in_key_secret_arn
    )
    # A tool past INLINE_CALL_MAX_SECONDS runs as a hidden task: the call is held, not run inline.
    env = sign_in_env(
        TASK_TABLE=aws.table_name, STATE_MACHINE_ARN=aws.state_machine_arn, INLINE_CALL_MAX_SECONDS="2"
    )
    streaming = Settings.from_env({**stream_env(env), "TOOL_MODULES": "taskgate_conformance,taskgate_tools"})
    root = Taskgate(streaming, aws_ports(streaming))
    yield build_stack(
        lambda: root.server,
        DynamoDBSignInStore(lambda: ddb, aws.table_name),
        env=env,
        keys=secrets.versions,
        streaming=True,
        stream_server=lambda: root.server,
    )


def _event(body: dict[str, Any], headers: dict[str, str]) -> dict[str, Any]:
    """What the REST API hands StreamFunction for a POST to <STREAM>/mcp."""
    event = rest_api_event(body, {**headers, "host": STREAM_HOST}, path="/mcp")
    event["requestContext"].update(path="/stream/mcp", stage="stream", domainName=STREAM_HOST)
    return event


def _through_the_stream_function(
    stack: SignInStack, event: dict[str, Any]
) -> tuple[dict[str, Any], list[Any]]:
    """The prelude, and each chunk of the body with the second it left the function."""
    assert stack.stream_app is not None
    started = time.monotonic()
    chunks = [(time.monotonic() - started, chunk) for chunk in stream_app(stack.stream_app, event, None)]
    prelude = json.loads(chunks[0][1].removesuffix(DELIMITER))
    return prelude, chunks[1:]


def test_a_person_signed_in_for_the_streaming_endpoint_gets_a_held_call(stack: SignInStack) -> None:
    token = stack.tokens(resource=STREAM_RESOURCE)["access_token"]
    params = {"name": "slow_compute", "arguments": {"seconds": 6, "label": "held"}}
    body = envelope("tools/call", params, 7, tasks=False)
    body["params"]["_meta"]["progressToken"] = "held"
    headers = {**headers_for("tools/call", params), "authorization": f"Bearer {token}"}
    prelude, chunks = _through_the_stream_function(stack, _event(body, headers))
    assert prelude["statusCode"] == 200, chunks
    assert prelude["headers"]["content-type"].startswith("text/event-stream")
    messages = [
        (at, json.loads(line[6:]))
        for at, chunk in chunks
        for line in chunk.decode().splitlines()
        if line.startswith("data: ") and line.strip() != "data:"
    ]
    progress = [at for at, m in messages if m.get("method") == "notifications/progress"]
    at, final = messages[-1]
    assert final["result"]["content"][0]["text"] == "held finished after 6 seconds"
    assert len(progress) >= 3 and progress[0] < at - 3, (progress, at)


def test_the_stream_function_asks_for_its_own_token(stack: SignInStack) -> None:
    params: dict[str, Any] = {}
    home = stack.tokens()["access_token"]  # the HTTP API's
    for token in (None, home):
        headers = headers_for("tools/list", params)
        if token is not None:
            headers["authorization"] = f"Bearer {token}"
        prelude, chunks = _through_the_stream_function(
            stack, _event(envelope("tools/list", params, 1), headers)
        )
        assert prelude["statusCode"] == 401, chunks
        challenge = prelude["headers"]["www-authenticate"]
        assert f'resource_metadata="{STREAM}/.well-known/oauth-protected-resource/mcp"' in challenge
        assert ("(audience)" in challenge) is (token is not None)
