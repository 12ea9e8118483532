"""AuthMode JWT on the fakes: taskgate as an OAuth protected resource. The 401 that tells
an MCP client where to sign in (RFC 9728 ``resource_metadata``), the metadata itself,
tokens from a local authorization server (tests/oauth_server.py) checked in the app, the
owner they give, and every way a token is refused. The whole flow with a released client
runs in tests/e2e/test_oauth.py."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

import pytest
from starlette.testclient import TestClient

from taskgate.auth.jwt import JwksCache, JwtVerifier, discover_jwks_uri
from taskgate.auth.resource import ProtectedResource, SignIn
from taskgate.auth.tokens import SigningKeysUnavailable, TokenError
from taskgate.config import ConfigurationError, Settings
from taskgate.http_app import create_app
from taskgate.protocol.identity import owner_from_event, principal_arn
from taskgate.protocol.transport_security import TransportSecurity
from tests.fakes import World
from tests.mcp_client import envelope, headers_for
from tests.oauth_server import LocalAuthorizationServer

RESOURCE = "https://taskgate.example/mcp"
METADATA_URL = "https://taskgate.example/.well-known/oauth-protected-resource/mcp"
SCOPE = "taskgate/tasks"


def _server(**kwargs: Any) -> LocalAuthorizationServer:
    auth = LocalAuthorizationServer(subject="alice", scopes_supported=[SCOPE], **kwargs)
    auth.app_for("https://as.example")
    return auth


def _sign_in(auth: LocalAuthorizationServer, **verifier: Any) -> SignIn:
    resource = ProtectedResource(
        resource=RESOURCE,
        authorization_servers=[auth.issuer],
        scopes_supported=[SCOPE],
        required_scopes=[SCOPE],
    )
    jwks = JwksCache(auth.jwks_uri, fetch=auth.fetch)
    return SignIn(
        resource, lambda: JwtVerifier(issuer=auth.issuer, audiences=[RESOURCE], jwks=jwks, **verifier)
    )


@pytest.fixture
def auth() -> LocalAuthorizationServer:
    return _server()


def _client(world: World, sign_in: SignIn) -> Iterator[TestClient]:
    app = create_app(
        lambda: world.server,
        anonymous_owner=world.settings.anonymous_owner,
        max_body_bytes=world.settings.max_body_bytes,
        security=TransportSecurity(("taskgate.example",), ()),
        sign_in=sign_in,
    )
    with TestClient(app, base_url="https://taskgate.example") as client:
        yield client


@pytest.fixture
def signed_in(world: World, auth: LocalAuthorizationServer) -> Iterator[TestClient]:
    yield from _client(world, _sign_in(auth))


def _post(http: TestClient, method: str, params: dict[str, Any], token: str | None) -> Any:
    body = envelope(method, params, 1)
    headers = headers_for(method, params)
    if token is not None:
        headers["authorization"] = f"Bearer {token}"
    return http.post("/mcp", content=json.dumps(body), headers=headers)


def _token(auth: LocalAuthorizationServer, **claims: Any) -> str:
    return auth.mint_token(**{"aud": RESOURCE, "scope": SCOPE, **claims})


def test_a_request_without_a_token_is_told_where_to_sign_in(signed_in: TestClient) -> None:
    for method in ("POST", "GET", "DELETE"):
        reply = signed_in.request(method, "/mcp", content=b"{}" if method == "POST" else None)
        assert reply.status_code == 401, method
        challenge = reply.headers["www-authenticate"]
        assert challenge == f'Bearer scope="{SCOPE}", resource_metadata="{METADATA_URL}"'
        assert reply.json()["error"]["code"] == -32600
    assert signed_in.get("/health").status_code == 200


def test_the_protected_resource_metadata_names_the_issuer_and_scopes(
    signed_in: TestClient, auth: LocalAuthorizationServer
) -> None:
    for path in ("/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource"):
        reply = signed_in.get(path)
        assert reply.status_code == 200
        assert reply.json() == {
            "resource": RESOURCE,
            "authorization_servers": [auth.issuer],
            "scopes_supported": [SCOPE],
            "bearer_methods_supported": ["header"],
            "resource_name": "taskgate",
        }


def test_a_token_makes_its_subject_the_owner(
    signed_in: TestClient, auth: LocalAuthorizationServer, world: World
) -> None:
    alice = _token(auth)
    created = _post(signed_in, "tools/call", {"name": "slow_compute", "arguments": {"seconds": 0}}, alice)
    assert created.status_code == 200, created.text
    task_id = created.json()["result"]["taskId"]
    # The owner is iss#sub, as under API Gateway's JWT authorizer: tasks keep their owners.
    assert world.store.records[task_id].owner == f"{auth.issuer}#alice"
    assert _post(signed_in, "tasks/get", {"taskId": task_id}, alice).json()["result"]["taskId"] == task_id
    bob = _token(auth, sub="bob")
    assert _post(signed_in, "tasks/get", {"taskId": task_id}, bob).json()["error"]["code"] == -32602


@pytest.mark.parametrize(
    ("claims", "header", "description"),
    [
        ({"aud": "https://elsewhere.example/mcp"}, {}, "token not issued for this resource (audience)"),
        ({"iss": "https://evil.example"}, {}, "token from another issuer"),
        ({"exp": int(time.time()) - 3600}, {}, "token expired"),
        ({"exp": None}, {}, "token without expiry"),
        ({"sub": None}, {}, "token without subject"),
        ({"token_use": "id"}, {}, "not an access token (token_use)"),  # a Cognito ID token
        ({}, {"alg": "HS256"}, "unsupported token algorithm"),
        ({}, {"crit": ["exp"]}, "unsupported critical header"),
        ({}, {"kid": "unknown"}, "token signed with an unknown key"),
    ],
)
def test_a_bad_token_is_401_invalid_token(
    signed_in: TestClient,
    auth: LocalAuthorizationServer,
    claims: dict[str, Any],
    header: dict[str, Any],
    description: str,
) -> None:
    base = {"aud": RESOURCE, "scope": SCOPE, **claims}
    token = auth.sign(
        {
            k: v
            for k, v in {
                **auth.access_token_claims(subject="alice", client_id="c", scope=[SCOPE], resource=None),
                **base,
            }.items()
            if v is not None
        },
        header=header,
    )
    reply = _post(signed_in, "tools/list", {}, token)
    assert reply.status_code == 401
    challenge = reply.headers["www-authenticate"]
    assert f'error="invalid_token", error_description="{description}"' in challenge
    assert f'resource_metadata="{METADATA_URL}"' in challenge


def test_a_tampered_or_malformed_token_is_refused(
    signed_in: TestClient, auth: LocalAuthorizationServer
) -> None:
    head, payload, signature = _token(auth).split(".")
    forged = json.loads(__import__("base64").urlsafe_b64decode(payload + "==="))
    forged["sub"] = "mallory"
    from taskgate.auth.jwt import b64url_encode

    tampered = f"{head}.{b64url_encode(json.dumps(forged).encode())}.{signature}"
    for token in (tampered, "not-a-jwt", f"{head}.{payload}.", "a.b.c"):
        assert _post(signed_in, "tools/list", {}, token).status_code == 401, token
    reply = signed_in.post("/mcp", content=b"{}", headers={"authorization": "Basic dXNlcjpwYXNz"})
    assert reply.status_code == 401


def test_a_token_without_the_scope_is_403_insufficient_scope(
    signed_in: TestClient, auth: LocalAuthorizationServer
) -> None:
    reply = _post(signed_in, "tools/list", {}, _token(auth, scope="openid"))
    assert reply.status_code == 403
    assert reply.headers["www-authenticate"].startswith(
        f'Bearer error="insufficient_scope", error_description="token lacks scope(s): {SCOPE}", scope="{SCOPE}"'
    )


def test_cognito_access_tokens_have_no_audience_but_a_known_client(world: World) -> None:
    cognito = _server(cognito_style=True)
    sign_in = _sign_in(cognito, client_ids=["app-client"], require_token_use="access")
    for http in _client(world, sign_in):
        good = cognito.mint_token(client_id="app-client", scope=SCOPE)
        assert _post(http, "tools/list", {}, good).status_code == 200
        stranger = cognito.mint_token(client_id="another-client", scope=SCOPE)
        reply = _post(http, "tools/list", {}, stranger)
        assert reply.status_code == 401 and "no audience" in reply.headers["www-authenticate"]
        # An ID token of the same app client (aud = the client id) is not an access token.
        id_token = cognito.mint_token(client_id="app-client", aud="app-client", token_use="id", scope=SCOPE)
        assert _post(http, "tools/list", {}, id_token).status_code == 401


def test_unreachable_signing_keys_are_503_not_a_reason_to_sign_in_again(
    world: World, auth: LocalAuthorizationServer
) -> None:
    def down(url: str, timeout: float) -> bytes:
        raise OSError("connection refused")

    resource = ProtectedResource(
        resource=RESOURCE, authorization_servers=[auth.issuer], required_scopes=[SCOPE]
    )
    sign_in = SignIn(
        resource,
        lambda: JwtVerifier(
            issuer=auth.issuer, audiences=[RESOURCE], jwks=JwksCache(auth.jwks_uri, fetch=down)
        ),
    )
    for http in _client(world, sign_in):
        reply = _post(http, "tools/list", {}, _token(auth))
        assert reply.status_code == 503 and reply.headers["retry-after"]
        assert "retry" in reply.json()["error"]["message"]


def test_keys_are_fetched_once_and_again_for_a_rotated_key(auth: LocalAuthorizationServer) -> None:
    fetched: list[str] = []

    def fetch(url: str, timeout: float) -> bytes:
        fetched.append(url)
        return auth.fetch(url, timeout)

    now = [0.0]
    jwks = JwksCache(auth.jwks_uri, fetch=fetch, clock=lambda: now[0])
    verifier = JwtVerifier(issuer=auth.issuer, audiences=[RESOURCE], jwks=jwks)
    for _ in range(3):
        verifier.verify(_token(auth))
    assert fetched == [auth.jwks_uri]
    auth.rotate_key()
    # A key it has not seen: fetched again, but at most once a minute (forged kids are cheap).
    with pytest.raises(TokenError, match="unknown key"):
        verifier.verify(_token(auth))
    now[0] += 61
    assert verifier.verify(_token(auth)).subject == "alice"
    assert len(fetched) == 2


@pytest.mark.parametrize("cognito_style", [False, True])
def test_the_jwks_is_found_through_the_issuers_metadata(cognito_style: bool) -> None:
    auth = _server(cognito_style=cognito_style)
    assert discover_jwks_uri(auth.issuer, fetch=auth.fetch) == auth.jwks_uri
    with pytest.raises(SigningKeysUnavailable):
        discover_jwks_uri("https://nowhere.example", fetch=auth.fetch)


def test_sign_in_settings_are_checked_at_cold_start() -> None:
    base = {"TASK_TABLE": "t", "STATE_MACHINE_ARN": "arn"}
    with pytest.raises(ConfigurationError, match="AUTH_MODE JWT needs OAUTH_RESOURCE and OAUTH_ISSUER"):
        Settings.from_env({**base, "AUTH_MODE": "JWT"})
    with pytest.raises(ConfigurationError, match="AUTH_MODE"):
        Settings.from_env({**base, "AUTH_MODE": "OPEN"})
    s = Settings.from_env(
        {
            **base,
            "AUTH_MODE": "JWT",
            "OAUTH_RESOURCE": RESOURCE,
            "OAUTH_ISSUER": "https://cognito-idp.eu-west-1.amazonaws.com/eu-west-1_abc",
            "OAUTH_CLIENT_IDS": "a,b",
            "OAUTH_SCOPES": SCOPE,
            "OAUTH_AUDIENCES": "",
        }
    )
    assert s.oauth_client_ids == ("a", "b") and s.oauth_scopes == (SCOPE,) and s.oauth_audiences == ()


def test_iam_callers_own_tasks_by_role_not_by_session_name() -> None:
    def event(arn: str) -> dict[str, Any]:
        return {"requestContext": {"authorizer": {"iam": {"userArn": arn}}}}

    one = owner_from_event(event("arn:aws:sts::123456789012:assumed-role/Deployer/session-1"), "anon")
    two = owner_from_event(event("arn:aws:sts::123456789012:assumed-role/Deployer/laptop-2"), "anon")
    assert one == two == "iam#arn:aws:iam::123456789012:role/Deployer"
    assert principal_arn("arn:aws-us-gov:sts::123456789012:assumed-role/R/s") == (
        "arn:aws-us-gov:iam::123456789012:role/R"
    )
    user = "arn:aws:iam::123456789012:user/alice"
    assert owner_from_event(event(user), "anon") == f"iam#{user}"
