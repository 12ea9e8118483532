"""The stack's own sign-in (AuthMode USER) beside the streaming endpoint (StreamingApi), on the
fakes. The authorization server on the HTTP API issues tokens for either endpoint's /mcp, each
audience-bound to the one its client asked for (RFC 8707); the streaming endpoint serves its own
protected resource metadata (RFC 9728) under its stage, names the stack's issuer there, and
accepts the stack's tokens for its /mcp only, as the HTTP API accepts those for its own only.

The choice, both ways: a token is good at the endpoint it was issued for and refused at the
other. The spec asks a server to accept only tokens issued for it (MCP authorization, "Token
Handling"; RFC 8707 §2), and a client keys its tokens by the server URL it connects to, so
signing in once per endpoint is what hosts do anyway; the person is the same on both (the owner
is the upstream ``iss#sub``), and the consent per client is asked once.
tests/sign_in_stack.py puts both endpoints, the provider and the person in one process."""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

from taskgate.config import ConfigurationError, Settings
from taskgate.testing.memory import MemorySignInStore
from tests.fakes import World
from tests.sign_in_stack import (
    RESOURCE,
    SCOPE,
    STACK,
    STREAM,
    STREAM_RESOURCE,
    SignInStack,
    build_stack,
    sign_in_env,
    stream_env,
)

STREAM_METADATA = f"{STREAM}/.well-known/oauth-protected-resource/mcp"


@pytest.fixture
def stack(world: World) -> SignInStack:
    return build_stack(lambda: world.server, MemorySignInStore(), streaming=True)


def _claims(token: str) -> dict[str, Any]:
    import base64

    payload = token.split(".")[1]
    return json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))  # type: ignore[no-any-return]


def _query(url: str) -> dict[str, str]:
    return {k: v[0] for k, v in parse_qs(urlsplit(url).query).items()}


# ---- settings ---------------------------------------------------------------------------------


def test_the_authorization_server_issues_for_both_endpoints_and_each_serves_its_own() -> None:
    home = Settings.from_env({**sign_in_env(), "STREAM_PUBLIC_URL": STREAM})
    assert home.sign_in.sign_in_resources == (RESOURCE, STREAM_RESOURCE)
    assert not home.sign_in.is_streaming_endpoint and home.sign_in.resource_url == RESOURCE
    stream = Settings.from_env(stream_env(sign_in_env()))
    assert stream.sign_in.is_streaming_endpoint and stream.sign_in.resource_url == STREAM_RESOURCE
    assert stream.sign_in.issuer_url == home.sign_in.issuer_url == STACK
    assert "stream.taskgate.example" in stream.served_hosts
    # Without StreamingApi: one resource, as before.
    assert Settings.from_env(sign_in_env()).sign_in.sign_in_resources == (RESOURCE,)


def test_the_streaming_endpoint_with_user_needs_the_stacks_issuer() -> None:
    env = stream_env(sign_in_env())
    del env["PUBLIC_URL"]
    with pytest.raises(ConfigurationError, match="PUBLIC_URL"):
        Settings.from_env(env)
    with pytest.raises(ConfigurationError, match="STREAM_PUBLIC_URL"):
        Settings.from_env({**sign_in_env(), "STREAM_PUBLIC_URL": "https://s.example/stream/"})


# ---- the streaming endpoint as a protected resource -----------------------------------------


def test_the_streaming_endpoints_401_points_at_its_own_metadata_naming_the_stacks_issuer(
    stack: SignInStack,
) -> None:
    challenge = stack.mcp(None, "tools/list", {}, at=STREAM)
    assert challenge.status_code == 401
    assert f'resource_metadata="{STREAM_METADATA}"' in challenge.headers["www-authenticate"]
    assert f'scope="{SCOPE}"' in challenge.headers["www-authenticate"]
    document = stack.http.get(STREAM_METADATA)
    assert document.status_code == 200
    assert document.json()["resource"] == STREAM_RESOURCE
    assert document.json()["authorization_servers"] == [STACK, stack.idp.issuer]  # the stack's first
    # The authorization server is the issuer's, on the HTTP API; it is not served here.
    for path in ("/.well-known/oauth-authorization-server", "/oauth/register", "/oauth/token"):
        assert stack.http.post(f"{STREAM}{path}").status_code in (404, 405), path
    assert stack.http.get(f"{STACK}/.well-known/oauth-authorization-server").json()["issuer"] == STACK


def test_the_stream_app_protects_the_mcp_path_its_front_hands_it() -> None:
    """The REST API hands the app ``/mcp`` for ``…/stream/mcp``: that is what must need a
    token, under CLIENT alone too (before, the app guarded ``/stream/mcp``, a path no request
    has, and let ``/mcp`` through as the anonymous owner)."""
    world = World()
    env = {**stream_env(sign_in_env()), "AUTH_MODE": "CLIENT"}
    stack = build_stack(lambda: world.server, MemorySignInStore(), env=env)  # the app alone, no stage
    reply = stack.mcp(None, "tools/list", {})
    assert reply.status_code == 401, reply.text
    assert f'resource_metadata="{STREAM_METADATA}"' in reply.headers["www-authenticate"]
    assert stack.sign_in.resource is not None and stack.sign_in.resource.path == "/mcp"


# ---- tokens for each endpoint -----------------------------------------------------------------


def test_a_person_signs_in_for_the_streaming_endpoint_and_its_token_is_good_there_only(
    stack: SignInStack, world: World
) -> None:
    client_id = stack.register()
    authorization = stack.sign_in_as_person(stack.authorization(client_id, resource=STREAM_RESOURCE))
    consent = authorization.person.steps[-2]
    assert STREAM_RESOURCE in consent.text  # the consent page names the endpoint asked for
    reply = stack.exchange(authorization)
    assert reply.status_code == 200, reply.text
    streaming = reply.json()["access_token"]
    claims = _claims(streaming)
    assert claims["aud"] == STREAM_RESOURCE and claims["iss"] == STACK and claims["client_id"] == client_id
    listed = stack.mcp(streaming, "tools/list", {}, at=STREAM)
    assert listed.status_code == 200 and listed.json()["result"]["tools"]
    # Not at the HTTP API's /mcp …
    refused = stack.mcp(streaming, "tools/list", {})
    assert refused.status_code == 401
    assert "token not issued for this resource (audience)" in refused.headers["www-authenticate"]
    # … nor is the HTTP API's token good at the streaming endpoint.
    home = stack.tokens(client_id)["access_token"]
    assert _claims(home)["aud"] == RESOURCE
    assert stack.mcp(home, "tools/list", {}).status_code == 200
    refused = stack.mcp(home, "tools/list", {}, at=STREAM)
    assert refused.status_code == 401
    assert f'resource_metadata="{STREAM_METADATA}"' in refused.headers["www-authenticate"]
    assert "token not issued for this resource (audience)" in refused.headers["www-authenticate"]


def test_the_person_is_the_same_on_both_endpoints(stack: SignInStack, world: World) -> None:
    client_id = stack.register()
    streaming = stack.tokens(client_id, resource=STREAM_RESOURCE)["access_token"]
    created = stack.mcp(
        streaming,
        "tools/call",
        {"name": "slow_compute", "arguments": {"seconds": 0.01, "label": "both"}, "task": {"ttl": 60_000}},
        at=STREAM,
    )
    assert created.status_code == 200, created.text
    task_id = created.json()["result"]["taskId"]
    world.settle()
    home = stack.tokens(client_id)["access_token"]  # consent was given: asked once per client
    mine = stack.mcp(home, "tasks/get", {"taskId": task_id})
    assert mine.json()["result"]["status"] == "completed", mine.text
    agent = stack.mcp(stack.agent_token(), "tasks/get", {"taskId": task_id}, at=STREAM)
    assert agent.json()["error"]["code"] == -32602  # the agent is someone else, here too


def test_the_issuers_own_tokens_and_iam_keep_working_on_the_streaming_endpoint(stack: SignInStack) -> None:
    # CLIENT: a Cognito-style client-credentials token (no aud, a known client_id).
    assert stack.mcp(stack.agent_token(), "tools/list", {}, at=STREAM).status_code == 200
    # IAM beside tokens: /iam/mcp takes only requests API Gateway signed and named.
    assert stack.mcp(None, "tools/list", {}, path="/iam/mcp", at=STREAM).status_code == 403


# ---- what the authorization server issues -------------------------------------------------------


def test_a_resource_is_one_of_the_stacks_endpoints_and_one_only(stack: SignInStack) -> None:
    client_id = stack.register()
    for bad in ("https://other.example/mcp", f"{STREAM}/other", f"{STACK}/stream/mcp"):
        refused = stack.sign_in_as_person(stack.authorization(client_id, resource=bad))
        # Told at once on a page, never sent to sign in nor redirected (red team M1).
        assert [s.status for s in refused.person.steps] == [400], bad
        assert refused.person.saw("invalid_target"), bad
    both = stack.authorization(client_id)
    both.url += "&" + "resource=" + STREAM_RESOURCE  # a second resource parameter
    refused = stack.sign_in_as_person(both)
    assert refused.person.saw("invalid_target") and [s.status for s in refused.person.steps] == [400]
    # No resource at all: the HTTP API's /mcp, as before.
    plain = stack.sign_in_as_person(stack.authorization(client_id, resource=""))
    token = stack.exchange(plain, resource="").json()["access_token"]
    assert _claims(token)["aud"] == RESOURCE


def test_a_code_and_its_refresh_tokens_stay_with_the_resource_it_was_given_for(stack: SignInStack) -> None:
    client_id = stack.register()
    authorization = stack.sign_in_as_person(stack.authorization(client_id, resource=STREAM_RESOURCE))
    switched = stack.exchange(authorization, resource=RESOURCE)
    assert switched.status_code == 400 and switched.json()["error"] == "invalid_target"
    authorization = stack.sign_in_as_person(stack.authorization(client_id, resource=STREAM_RESOURCE))
    tokens = stack.exchange(authorization, resource="").json()  # absent: the code's own
    assert _claims(tokens["access_token"])["aud"] == STREAM_RESOURCE

    def refresh(token: str, **extra: str) -> Any:
        form = {"grant_type": "refresh_token", "refresh_token": token, "client_id": client_id, **extra}
        return stack.http.post(f"{STACK}/oauth/token", data=form)

    elsewhere = refresh(tokens["refresh_token"], resource=RESOURCE)
    assert elsewhere.status_code == 400 and elsewhere.json()["error"] == "invalid_target"
    again = refresh(tokens["refresh_token"])
    assert again.status_code == 200, again.text
    assert _claims(again.json()["access_token"])["aud"] == STREAM_RESOURCE
    assert stack.mcp(again.json()["access_token"], "tools/list", {}, at=STREAM).status_code == 200
