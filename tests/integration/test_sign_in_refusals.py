"""Two findings of the red team, checked the way they were found: the app configured through
its environment as the template configures it, served over a real socket, sent tokens.

- With "your own issuer" and ``JwtAudience`` naming the app client (the template passed it as
  both accepted audiences and client ids, with no scope required), an OpenID Connect ID token
  passed as an access token. Now it is refused in every configuration: one that gives a client
  id as an audience too is refused at start, and the token itself is refused otherwise.
- While the issuer's key endpoint failed, every request carrying a token (even unsigned junk)
  made an outbound fetch, and the fetch held up the local server's other requests. Now junk
  never fetches, the rest fetch at most once per interval, and nothing waits on the fetch.

Only environment variables, the app and tests/oauth_server.py are used, so this file runs
unchanged against earlier revisions too.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import httpx
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from taskgate import wiring
from taskgate.config import ConfigurationError
from taskgate.http_app import create_app
from taskgate.protocol.wire.transport_security import TransportSecurity
from tests.fakes import World
from tests.mcp_client import envelope, headers_for
from tests.oauth_server import LocalAuthorizationServer, serve_in_thread

SCOPE = "taskgate/tasks"
APP_CLIENT = "app-client"


@contextmanager
def _served(monkeypatch: pytest.MonkeyPatch, env: dict[str, str]) -> Iterator[str]:
    """The app as ApiFunction builds it from this environment, on a loopback port."""
    for name in list(env):
        monkeypatch.setenv(name, env[name])
    monkeypatch.setenv("TASK_TABLE", "tasks")
    wiring.reset()
    world = World()
    try:

        def app_for(base_url: str) -> Any:
            return create_app(
                lambda: world.server,
                anonymous_owner="anonymous",
                max_body_bytes=1_048_576,
                security=TransportSecurity(("127.0.0.1",), ()),
                sign_in=wiring.root().sign_in,
            )

        with serve_in_thread(app_for) as base_url:
            yield base_url
    finally:
        wiring.reset()


def _call(base_url: str, token: str) -> httpx.Response:
    params: dict[str, Any] = {}
    headers = {**headers_for("tools/list", params), "authorization": f"Bearer {token}"}
    return httpx.post(
        f"{base_url}/mcp", content=json.dumps(envelope("tools/list", params, 1)), headers=headers, timeout=30
    )


@pytest.fixture(scope="module")
def issuer() -> Iterator[LocalAuthorizationServer]:
    auth = LocalAuthorizationServer(subject="alice", scopes_supported=[SCOPE])
    with serve_in_thread(auth.app_for):
        yield auth


@pytest.mark.parametrize(
    "configuration",
    [
        {"OAUTH_AUDIENCES": APP_CLIENT},  # the client id given as an audience
        {"OAUTH_AUDIENCES": APP_CLIENT, "OAUTH_CLIENT_IDS": APP_CLIENT},  # the former template's mapping
        {"OAUTH_CLIENT_IDS": APP_CLIENT},
    ],
    ids=["audience", "audience-and-client", "client"],
)
def test_an_id_token_is_not_an_access_token(
    monkeypatch: pytest.MonkeyPatch, issuer: LocalAuthorizationServer, configuration: dict[str, str]
) -> None:
    # An OpenID Connect ID token of the app client, as any issuer mints one: aud is the client.
    id_token = issuer.mint_token(aud=APP_CLIENT, azp=APP_CLIENT, nonce="n-0S6", client_id=None, scope=None)
    env = {
        "AUTH_MODE": "JWT",
        "OAUTH_ISSUER": issuer.issuer,
        "OAUTH_RESOURCE": "http://127.0.0.1/mcp",
        "OAUTH_JWKS_URI": issuer.jwks_uri,
        **configuration,
    }
    try:
        with _served(monkeypatch, env) as base_url:
            reply = _call(base_url, id_token)
    except ConfigurationError as refused:
        assert "must not name a client id" in str(refused)  # this configuration cannot start
        return
    assert reply.status_code == 401, f"an ID token was accepted: {reply.status_code} {reply.text[:200]}"


class _FailingKeys:
    """An issuer's key endpoint that answers 500 after ``delay`` seconds, recording when each
    request began and when the answer left."""

    def __init__(self, delay: float) -> None:
        self.delay = delay
        self.requests: list[float] = []
        self.answered: list[float] = []

    def app_for(self, base_url: str) -> Any:
        async def jwks(request: Request) -> Response:
            self.requests.append(time.monotonic())
            await _sleep(self.delay)
            self.answered.append(time.monotonic())
            return Response("down", 500)

        return Starlette(routes=[Route("/jwks.json", jwks)])


async def _sleep(seconds: float) -> None:
    import asyncio

    await asyncio.sleep(seconds)


def test_a_failing_key_endpoint_is_asked_once_and_holds_up_nothing(
    monkeypatch: pytest.MonkeyPatch, issuer: LocalAuthorizationServer
) -> None:
    # Slow enough that a server waiting on the fetch cannot hide it in a busy machine's noise.
    keys = _FailingKeys(delay=2.0)
    with serve_in_thread(keys.app_for) as keys_url:
        env = {
            "AUTH_MODE": "JWT",
            "OAUTH_ISSUER": issuer.issuer,
            "OAUTH_RESOURCE": "http://127.0.0.1/mcp",
            "OAUTH_CLIENT_IDS": APP_CLIENT,
            "OAUTH_SCOPES": SCOPE,
            "OAUTH_JWKS_URI": f"{keys_url}/jwks.json",
        }
        well_formed = issuer.mint_token(client_id=APP_CLIENT, scope=SCOPE)
        junk = "eyJhbGciOiJSUzI1NiIsImtpZCI6Im5vcGUifQ.eyJzdWIiOiJ4In0.c2ln"  # unsigned, alg RS256
        with _served(monkeypatch, env) as base_url:
            statuses: list[int] = []
            health: list[float] = []

            def caller(token: str) -> None:
                statuses.append(_call(base_url, token).status_code)

            threads = [threading.Thread(target=caller, args=(t,)) for t in [junk, well_formed] * 10]
            for thread in threads:
                thread.start()
            deadline = time.monotonic() + 10
            while not keys.requests and time.monotonic() < deadline:
                time.sleep(0.01)
            assert keys.requests, "no request fetched the keys"
            # While the key fetch is under way, the server answers other requests.
            for _ in range(3):
                assert httpx.get(f"{base_url}/health", timeout=30).status_code == 200
                health.append(time.monotonic())
            for thread in threads:
                thread.join(60)
    fetch_ended = keys.answered[0]
    print(
        f"\nfailing key endpoint: {len(keys.requests)} fetch(es) for 20 requests; /health answered"
        f" {[round(fetch_ended - t, 2) for t in health]} s before the fetch ended"
    )
    assert set(statuses) <= {401, 503} and len(statuses) == 20
    assert len(keys.requests) <= 1, (
        f"{len(keys.requests)} fetches of the failing key endpoint for 20 requests"
    )
    assert all(t < fetch_ended for t in health), "/health waited for the key fetch to end"
