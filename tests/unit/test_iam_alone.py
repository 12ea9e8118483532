"""IAM alone (SignInIam without tokens): API Gateway checks SigV4 on every /mcp route, and the
function checks that it did (issue 29, N3). A front whose authorization lags behind the
deploy - a REST API stage still serving its former deployment - lets no one in as the
anonymous owner."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from starlette.testclient import TestClient
from starlette.types import ASGIApp, Receive, Scope, Send

from taskgate.auth.resource import SignIn
from taskgate.http_app import create_app
from taskgate.protocol.wire.transport_security import TransportSecurity
from tests.fakes import World
from tests.mcp_client import envelope, headers_for

USER = "arn:aws:iam::123456789012:user/alice"


class Front:
    """What API Gateway hands the function: its event, here from a test header."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        headers = dict(scope.get("headers", []))
        event = headers.get(b"x-test-event")
        if event is not None:
            scope = {**scope, "aws.event": json.loads(event)}
        await self.app(scope, receive, send)


@pytest.fixture
def http(world: World) -> Iterator[TestClient]:
    app = create_app(
        lambda: world.server,
        anonymous_owner=world.settings.anonymous_owner,
        max_body_bytes=world.settings.max_body_bytes,
        security=TransportSecurity(("taskgate.example",), ()),
        sign_in=SignIn(resource=None, iam=True),
    )
    with TestClient(Front(app), base_url="https://taskgate.example") as client:
        yield client


def _call(http: TestClient, event: dict[str, Any] | None) -> Any:
    headers = headers_for("tools/list", {})
    if event is not None:
        headers["x-test-event"] = json.dumps(event)
    return http.post("/mcp", content=json.dumps(envelope("tools/list", {}, 1)), headers=headers)


@pytest.mark.parametrize(
    "event",
    [
        None,  # no front at all
        {
            "requestContext": {"identity": {"userArn": None, "sourceIp": "192.0.2.1"}}
        },  # a REST API's NONE route
        {"requestContext": {"authorizer": {}}},  # an HTTP API's NONE route
    ],
)
def test_a_request_api_gateway_did_not_sign_is_refused(
    http: TestClient, event: dict[str, Any] | None
) -> None:
    response = _call(http, event)
    assert response.status_code == 403, response.text
    assert "SigV4" in response.json()["error"]["message"]


def test_a_signed_request_is_served_as_its_iam_caller(http: TestClient) -> None:
    for event in (
        {"requestContext": {"authorizer": {"iam": {"userArn": USER}}}},  # the HTTP API
        {"requestContext": {"identity": {"userArn": USER, "sourceIp": "192.0.2.1"}}},  # the REST API
    ):
        response = _call(http, event)
        assert response.status_code == 200, response.text
        assert "tools" in response.json()["result"]
    # /health stays open.
    assert http.get("/health").status_code == 200
