"""Items of the RFC 9700 / MCP security best-practices checklist (docs/deploying/security-checklist.md)
that no other test showed: each test names its item."""

from __future__ import annotations

import pytest

from taskgate.testing.memory import MemorySignInStore
from tests.fakes import World
from tests.sign_in_stack import CLIENT_REDIRECT, STACK, Clock, SignInStack, build_stack


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def stack(world: World, clock: Clock) -> SignInStack:
    return build_stack(lambda: world.server, MemorySignInStore(), clock=clock)


def test_rfc9700_2_4_the_password_grant_is_not_offered(stack: SignInStack) -> None:
    client_id = stack.register()
    reply = stack.http.post(
        f"{STACK}/oauth/token",
        data={
            "grant_type": "password",
            "username": "dev@example.com",
            "password": "x",
            "client_id": client_id,
        },
    )
    assert reply.status_code == 400 and reply.json()["error"] == "unsupported_grant_type"
    metadata = stack.http.get(f"{STACK}/.well-known/oauth-authorization-server").json()
    assert "password" not in metadata["grant_types_supported"] and metadata["response_types_supported"] == [
        "code"
    ]


def test_rfc9700_4_5_a_code_is_bound_to_its_client_and_redirect_uri(stack: SignInStack) -> None:
    authorization = stack.sign_in_as_person(stack.authorization(stack.register()))
    other_client = stack.exchange(authorization, client_id=stack.register())
    assert other_client.status_code == 400 and other_client.json()["error"] == "invalid_grant"
    authorization = stack.sign_in_as_person(stack.authorization(stack.register()))
    other_uri = stack.exchange(authorization, redirect_uri="http://127.0.0.1:1/other")
    assert other_uri.status_code == 400 and other_uri.json()["error"] in ("invalid_grant", "invalid_request")


def test_rfc9700_4_2_the_consent_page_leaks_nothing_through_the_referrer(stack: SignInStack) -> None:
    stopped = stack.sign_in_as_person(stack.authorization(stack.register()), consent="")
    page = stopped.person.steps[-1]
    assert page.headers["referrer-policy"] == "same-origin" and page.headers["cache-control"] == "no-store"


def test_rfc9700_4_14_a_refresh_token_expires(stack: SignInStack, clock: Clock) -> None:
    client_id = stack.register()
    tokens = stack.tokens(client_id)
    clock.advance(31 * 86_400)  # OAUTH_REFRESH_TOKEN_TTL_DAYS: 30
    reply = stack.http.post(
        f"{STACK}/oauth/token",
        data={
            "grant_type": "refresh_token",
            "refresh_token": tokens["refresh_token"],
            "client_id": client_id,
        },
    )
    # The family is gone, and so is the client it kept alive (a client lives as long as its
    # refresh tokens do): either way the refresh token is refused.
    assert reply.status_code == 400 and reply.json()["error"] in ("invalid_grant", "invalid_client")


def test_rfc9700_2_1_a_redirect_uri_over_plain_http_is_loopback_only(stack: SignInStack) -> None:
    for uri in ("http://app.example/cb", "http://10.0.0.1/cb", CLIENT_REDIRECT):
        reply = stack.http.post(f"{STACK}/oauth/register", json={"redirect_uris": [uri]})
        assert reply.status_code == (201 if uri == CLIENT_REDIRECT else 400), uri
