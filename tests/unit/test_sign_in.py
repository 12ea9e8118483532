"""Tokens at /mcp, on the fakes: taskgate as an OAuth protected resource. The 401 that tells
an MCP client where to sign in (RFC 9728 ``resource_metadata``), the metadata itself, access
tokens an issuer minted itself (AuthMode CLIENT: a local authorization server,
tests/oauth_server.py) checked in the app, the owner they give, every way a token is refused,
and how the issuer's keys are fetched (once, never per request, backing off while it fails).
The stack's own authorization server (AuthMode USER) is tested in test_sign_in_server.py; the
whole flow with released clients in tests/e2e/test_sign_in_hosts.py."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
from starlette.testclient import TestClient

from taskgate.auth.jwks import IssuerKeys, Throttled, discover
from taskgate.auth.jwt import IssuerTokens, TokenVerifier
from taskgate.auth.resource import ProtectedResource, SignIn
from taskgate.auth.tokens import SigningKeysUnavailable, TokenError
from taskgate.config import ConfigurationError, Settings
from taskgate.http_app import create_app
from taskgate.protocol.wire.identity import owner_from_event, principal_arn
from taskgate.protocol.wire.transport_security import TransportSecurity
from tests.fakes import World
from tests.mcp_client import envelope, headers_for
from tests.oauth_server import LocalAuthorizationServer, b64url_encode

RESOURCE = "https://taskgate.example/mcp"
METADATA_URL = "https://taskgate.example/.well-known/oauth-protected-resource/mcp"
SCOPE = "taskgate/tasks"


def _server(**kwargs: Any) -> LocalAuthorizationServer:
    auth = LocalAuthorizationServer(subject="alice", scopes_supported=[SCOPE], **kwargs)
    auth.app_for("https://as.example")
    return auth


class Monotonic:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def _keys(auth: LocalAuthorizationServer, transport: Any = None, clock: Any = None) -> IssuerKeys:
    return IssuerKeys(
        auth.issuer, transport=transport or auth.transport, clock=clock or Monotonic(), interval=30.0
    )


def _verifier(
    auth: LocalAuthorizationServer,
    *,
    keys: IssuerKeys | None = None,
    audiences: tuple[str, ...] = (RESOURCE,),
    client_ids: tuple[str, ...] = (),
    token_use: str | None = None,
) -> TokenVerifier:
    return TokenVerifier(
        upstream=IssuerTokens(
            issuer=auth.issuer,
            audiences=audiences,
            client_ids=client_ids,
            keys=keys or _keys(auth),
            token_use=token_use,
        )
    )


def _sign_in(auth: LocalAuthorizationServer, **verifier: Any) -> SignIn:
    resource = ProtectedResource(
        resource=RESOURCE,
        authorization_servers=[auth.issuer],
        scopes_supported=[SCOPE],
        required_scopes=[SCOPE],
    )
    made = _verifier(auth, **verifier)
    return SignIn(resource, lambda: made)


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
        ({"nonce": "n-1"}, {}, "not an access token (an ID token's claims)"),  # an OIDC ID token
        ({"at_hash": "x"}, {}, "not an access token (an ID token's claims)"),
        ({"scope": None}, {}, "not an access token (no scope)"),
        ({}, {"alg": "HS256"}, "unsupported token algorithm"),
        ({}, {"alg": "none"}, "unsupported token algorithm"),
        ({}, {"crit": ["exp"]}, "unsupported critical header"),
        ({}, {"kid": "unknown"}, "token signed with an unknown key"),
        ({}, {"typ": "id+jwt"}, "not an access token (typ)"),
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
    sign_in = _sign_in(cognito, client_ids=("app-client",), token_use="access")
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
    def down(*args: Any) -> tuple[int, bytes]:
        raise OSError("connection refused")

    for http in _client(world, _sign_in(auth, keys=_keys(auth, transport=down))):
        reply = _post(http, "tools/list", {}, _token(auth))
        assert reply.status_code == 503 and reply.headers["retry-after"]
        assert "retry" in reply.json()["error"]["message"]


def test_keys_are_fetched_once_and_again_for_a_rotated_key(auth: LocalAuthorizationServer) -> None:
    fetched: list[str] = []

    def transport(method: str, url: str, *rest: Any) -> tuple[int, bytes]:
        fetched.append(url)
        return auth.transport(method, url, *rest)

    clock = Monotonic()
    verifier = _verifier(auth, keys=_keys(auth, transport=transport, clock=clock))
    for _ in range(3):
        verifier.verify(_token(auth))
    assert fetched == [f"{auth.issuer}/.well-known/openid-configuration", auth.jwks_uri]
    auth.rotate_key()
    # A key it has not seen: fetched again, but at most once an interval (forged kids are cheap).
    with pytest.raises(TokenError, match="unknown key"):
        verifier.verify(_token(auth))
    clock.now += 31
    assert verifier.verify(_token(auth)).subject == "alice"
    assert fetched[2:] == [f"{auth.issuer}/.well-known/openid-configuration", auth.jwks_uri]


@pytest.mark.parametrize("cognito_style", [False, True])
def test_the_jwks_is_found_through_the_issuers_metadata(cognito_style: bool) -> None:
    auth = _server(cognito_style=cognito_style)
    assert discover(auth.issuer, auth.transport)["jwks_uri"] == auth.jwks_uri
    with pytest.raises(SigningKeysUnavailable):
        discover("https://nowhere.example", auth.transport)


def test_a_failing_key_endpoint_is_fetched_once_per_interval_with_backoff(
    world: World, auth: LocalAuthorizationServer
) -> None:
    """The red team's case: while the issuer's keys cannot be had, every request (even one
    with unsigned junk) made an outbound fetch. Now junk never does, and a well-formed token
    makes at most one per interval, the interval doubling while the issuer keeps failing."""
    fetches: list[float] = []
    clock = Monotonic()

    def failing(*args: Any) -> tuple[int, bytes]:
        fetches.append(clock.now)
        return 500, b"{}"

    keys = _keys(auth, transport=failing, clock=clock)
    for http in _client(world, _sign_in(auth, keys=keys)):
        junk = [
            "not-a-jwt",
            "a.b.c",
            "eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In0.",
            _token(auth, iss="https://evil.example"),
        ]
        for n in range(50):
            assert _post(http, "tools/list", {}, junk[n % len(junk)]).status_code == 401
        assert fetches == []
        for _ in range(50):
            assert _post(http, "tools/list", {}, _token(auth)).status_code == 503
        assert len(fetches) == 1  # discovery failed: one attempt for the 50 requests
        schedule = [(29, 1), (30, 2), (89, 2), (90, 3), (209, 3), (210, 4)]
        for at, expected in schedule:
            clock.now = 1000.0 + at
            for _ in range(5):
                _post(http, "tools/list", {}, _token(auth))
            assert len(fetches) == expected, (at, fetches)


def test_a_slow_key_fetch_holds_up_no_other_request(auth: LocalAuthorizationServer) -> None:
    """One caller fetches; every other caller meanwhile gets an answer at once (503 before
    any key is known), instead of waiting on the fetch or starting its own."""
    release, started = threading.Event(), threading.Event()
    calls: list[str] = []

    def slow(method: str, url: str, *rest: Any) -> tuple[int, bytes]:
        calls.append(url)
        started.set()
        release.wait(10)
        return auth.transport(method, url, *rest)

    verifier = _verifier(auth, keys=_keys(auth, transport=slow))
    outcome: list[Any] = []
    fetcher = threading.Thread(target=lambda: outcome.append(verifier.verify(_token(auth))))
    fetcher.start()
    assert started.wait(10)
    began = time.monotonic()
    with pytest.raises(SigningKeysUnavailable):
        verifier.verify(_token(auth))
    assert time.monotonic() - began < 1.0 and len(calls) == 1
    release.set()
    fetcher.join(10)
    assert outcome and outcome[0].subject == "alice"


def test_throttled_loads_once_per_interval_and_doubles_the_wait_after_failures() -> None:
    clock = Monotonic()
    attempts: list[float] = []
    ok = [False]

    def load() -> str:
        attempts.append(clock.now)
        if not ok[0]:
            raise OSError("down")
        return "keys"

    value = Throttled(load, interval=10.0, max_backoff=40.0, clock=clock)
    for at in (0, 5, 10, 15, 29, 30, 69, 70, 109, 110):
        clock.now = 1000.0 + at
        assert value.get() is None
    assert [a - 1000.0 for a in attempts] == [0, 10, 30, 70, 110]  # waits 10, 20, 40, 40 (the cap)
    ok[0] = True
    clock.now = 1150.0
    assert value.get() == "keys" and value.get(refresh=True) == "keys"  # refreshed at most each 10 s
    assert len(attempts) == 6


def test_an_id_token_is_refused_in_every_configuration(world: World) -> None:
    """An OpenID Connect ID token's aud is its client's id. Audiences and client ids are kept
    apart, a configuration that mixes them is refused, and an ID token is refused whether or
    not its aud happens to be configured (its nonce, or its lack of any scope, give it away)."""
    auth = _server()
    id_claims = {"aud": "app-client", "client_id": None, "scope": None, "nonce": "n-1", "azp": "app-client"}
    id_token = auth.mint_token(**id_claims)
    bare_id_token = auth.mint_token(**{**id_claims, "nonce": None})
    configurations: list[dict[str, Any]] = [
        {"audiences": (RESOURCE,), "client_ids": ("app-client",)},
        {"audiences": (RESOURCE, "app-client"), "client_ids": ()},  # a client id given as an audience
        {"audiences": (RESOURCE,), "client_ids": ("app-client",), "token_use": "access"},
    ]
    for configuration in configurations:
        for http in _client(world, _sign_in(auth, **configuration)):
            for token in (id_token, bare_id_token):
                reply = _post(http, "tools/list", {}, token)
                assert reply.status_code == 401, (configuration, reply.text)
                assert "not an access token" in reply.headers["www-authenticate"]
    with pytest.raises(ValueError, match="not an audience"):
        _verifier(auth, audiences=(RESOURCE, "app-client"), client_ids=("app-client",))
    base = {"TASK_TABLE": "t", "AUTH_MODE": "CLIENT", "PUBLIC_URL": "https://taskgate.example"}
    with pytest.raises(ConfigurationError, match="must not name a client id"):
        Settings.from_env(
            {
                **base,
                "OAUTH_ISSUER": auth.issuer,
                "OAUTH_AUDIENCES": "app-client",
                "OAUTH_CLIENT_IDS": "app-client",
            }
        )


def test_sign_in_settings_are_checked_at_cold_start() -> None:
    base = {"TASK_TABLE": "t", "STATE_MACHINE_ARN": "arn"}
    with pytest.raises(ConfigurationError, match="AUTH_MODE CLIENT needs OAUTH_ISSUER and PUBLIC_URL"):
        Settings.from_env({**base, "AUTH_MODE": "JWT"})  # the former name of CLIENT
    with pytest.raises(ConfigurationError, match="OAUTH_UPSTREAM_CLIENT_ID"):
        Settings.from_env(
            {
                **base,
                "AUTH_MODE": "USER",
                "PUBLIC_URL": "https://x.example",
                "OAUTH_ISSUER": "https://i.example",
            }
        )
    with pytest.raises(ConfigurationError, match="AUTH_MODE"):
        Settings.from_env({**base, "AUTH_MODE": "OPEN"})
    for bad in ("https://x.example/", "ftp://x.example", "https://x.example/p?q=1"):
        with pytest.raises(ConfigurationError, match="PUBLIC_URL"):
            Settings.from_env({**base, "PUBLIC_URL": bad})
    s = Settings.from_env(
        {
            **base,
            "AUTH_MODE": "USER, client,IAM",
            "PUBLIC_URL": "https://mcp.example.com",
            "OAUTH_ISSUER": "https://cognito-idp.eu-west-1.amazonaws.com/eu-west-1_abc",
            "OAUTH_UPSTREAM_CLIENT_ID": "upstream",
            "OAUTH_CLIENT_IDS": "a,b",
            "OAUTH_AUDIENCES": "",
        }
    )
    assert s.sign_in.auth_mode == {"USER", "CLIENT", "IAM"}
    assert (
        s.sign_in.resource_url == "https://mcp.example.com/mcp"
        and s.sign_in.issuer_url == "https://mcp.example.com"
    )
    # A required scope by default: an ID token never has one.
    assert (s.sign_in.oauth_client_ids, s.sign_in.oauth_scopes, s.sign_in.oauth_audiences) == (
        ("a", "b"),
        (SCOPE,),
        (),
    )
    assert Settings.from_env({**base, "AUTH_MODE": "NONE"}).sign_in.auth_mode == frozenset()


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


def test_iam_callers_are_named_by_an_http_api_or_by_the_streaming_rest_api() -> None:
    from taskgate.auth.resource import _iam_caller

    user = "arn:aws:iam::123456789012:user/alice"
    http_api = {"requestContext": {"authorizer": {"iam": {"userArn": user}}}}
    # The streaming endpoint (StreamingApi): a REST API names the SigV4 caller in identity,
    # and leaves userArn null on a route that is not AWS_IAM.
    rest_api = {"requestContext": {"identity": {"userArn": user, "sourceIp": "192.0.2.1"}}}
    unsigned = {"requestContext": {"identity": {"userArn": None, "sourceIp": "192.0.2.1"}}}
    assert _iam_caller({"aws.event": http_api}) and _iam_caller({"aws.event": rest_api})
    assert not _iam_caller({"aws.event": unsigned}) and not _iam_caller({})
    assert owner_from_event(rest_api, "anon") == owner_from_event(http_api, "anon") == f"iam#{user}"
