"""Machine callers by the MCP client-credentials flow (issue 33, item 2), on the fakes: what a
machine client following the MCP authorization spec from a 401 finds (both authorization
servers in the resource metadata, the grant in the stack's metadata only where it works), the
token it gets from the stack's authorization server with a secret (client_secret_basic and
_post, checked by the issuer) or a private_key_jwt assertion (checked here), bound to the
resource it asked for; and every refusal: a client that registered itself, a wrong secret, an
assertion for another audience, too long-lived, replayed, or signed with another key.
"""

from __future__ import annotations

import base64
import json
import pathlib
import secrets
import time
from typing import Any

import pytest
from joserfc import jwt
from joserfc.jwk import ECKey, RSAKey

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
)

AGENT, AGENT_SECRET = "local-agent", "local-agent-secret"  # the development pool's machine client
KEY_CLIENT = "report-agent"
TOKEN_ENDPOINT = f"{STACK}/oauth/token"


def _claims(token: str) -> dict[str, Any]:
    payload = token.split(".")[1]
    return json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))  # type: ignore[no-any-return]


@pytest.fixture
def store() -> MemorySignInStore:
    return MemorySignInStore()


@pytest.fixture
def key() -> RSAKey:
    return RSAKey.generate_key(2048, parameters={"kid": "agent-1"})


@pytest.fixture
def jwks_file(tmp_path: pathlib.Path, key: RSAKey) -> pathlib.Path:
    path = tmp_path / "report-agent.jwks.json"
    path.write_text(json.dumps({"keys": [key.as_dict(private=False)]}))
    return path


@pytest.fixture
def stack(world: World, store: MemorySignInStore, jwks_file: pathlib.Path) -> SignInStack:
    return build_stack(lambda: world.server, store, streaming=True, client_keys=f"{KEY_CLIENT}={jwks_file}")


def assertion(key: Any, **overrides: Any) -> str:
    now = int(time.time())
    claims = {
        "iss": KEY_CLIENT,
        "sub": KEY_CLIENT,
        "aud": STACK,
        "iat": now,
        "exp": now + 300,
        "jti": secrets.token_urlsafe(12),
        **overrides,
    }
    claims = {k: v for k, v in claims.items() if v is not None}
    header = {"alg": "RS256" if isinstance(key, RSAKey) else "ES256"}
    return jwt.encode(header, claims, key)


def _unsigned(claims: dict[str, Any]) -> str:
    def part(value: dict[str, Any]) -> str:
        return base64.urlsafe_b64encode(json.dumps(value).encode()).decode().rstrip("=")

    return f"{part({'alg': 'none'})}.{part(claims)}."


def with_key(stack: SignInStack, signed: str, **form: str) -> Any:
    data = {
        "grant_type": "client_credentials",
        "client_assertion_type": "urn:ietf:params:oauth:client-assertion-type:jwt-bearer",
        "client_assertion": signed,
        "resource": RESOURCE,
        **form,
    }
    return stack.http.post(TOKEN_ENDPOINT, data={k: v for k, v in data.items() if v})


def with_secret(stack: SignInStack, method: str = "basic", secret: str = AGENT_SECRET, **form: str) -> Any:
    data = {"grant_type": "client_credentials", "resource": RESOURCE, **form}
    if method == "basic":
        return stack.http.post(TOKEN_ENDPOINT, data=data, auth=(AGENT, secret))
    return stack.http.post(TOKEN_ENDPOINT, data={**data, "client_id": AGENT, "client_secret": secret})


# ---- discovery: what a machine client following the spec from the 401 finds ----------------


def test_the_resource_names_both_servers_and_the_stacks_advertises_the_grant_where_it_works(
    stack: SignInStack, world: World, store: MemorySignInStore
) -> None:
    prm = stack.http.get(f"{STACK}/.well-known/oauth-protected-resource/mcp").json()
    # The stack's first (hosts take the first); the issuer the agent's credentials belong to
    # after it, so the SDK's issuer= finds it.
    assert prm["authorization_servers"] == [STACK, stack.idp.issuer]
    metadata = stack.http.get(f"{STACK}/.well-known/oauth-authorization-server").json()
    assert "client_credentials" in metadata["grant_types_supported"]
    assert {"client_secret_basic", "client_secret_post", "private_key_jwt"} <= set(
        metadata["token_endpoint_auth_methods_supported"]
    )
    assert "RS256" in metadata["token_endpoint_auth_signing_alg_values_supported"]
    # People only (no CLIENT): no machine grant, and only the stack in the resource metadata.
    people = build_stack(lambda: world.server, store, env=sign_in_env(AUTH_MODE="USER"))
    plain = people.http.get(f"{STACK}/.well-known/oauth-authorization-server").json()
    assert plain["grant_types_supported"] == ["authorization_code", "refresh_token"]
    assert "private_key_jwt" not in plain["token_endpoint_auth_methods_supported"]
    assert "token_endpoint_auth_signing_alg_values_supported" not in plain
    assert people.http.get(f"{STACK}/.well-known/oauth-protected-resource/mcp").json()[
        "authorization_servers"
    ] == [STACK]
    # No key client configured: no private_key_jwt.
    secrets_only = build_stack(lambda: world.server, store)
    methods = secrets_only.http.get(f"{STACK}/.well-known/oauth-authorization-server").json()[
        "token_endpoint_auth_methods_supported"
    ]
    assert "client_secret_basic" in methods and "private_key_jwt" not in methods


# ---- secrets, checked by the issuer -----------------------------------------------------------


@pytest.mark.parametrize("method", ["basic", "post"])
def test_the_agents_secret_gets_a_token_of_the_stacks_for_the_resource_asked_for(
    stack: SignInStack, world: World, method: str
) -> None:
    reply = with_secret(stack, method)
    assert reply.status_code == 200, reply.text
    token = reply.json()
    assert token["token_type"] == "Bearer" and token["scope"] == SCOPE and "refresh_token" not in token
    assert reply.headers["cache-control"] == "no-store"
    claims = _claims(token["access_token"])
    assert claims["iss"] == STACK and claims["aud"] == RESOURCE and claims["client_id"] == AGENT
    assert stack.calls_to_idp.count("POST /oauth2/token") == 1  # the issuer checked the secret
    created = stack.mcp(
        token["access_token"], "tools/call", {"name": "slow_compute", "arguments": {"seconds": 0}}
    )
    task_id = created.json()["result"]["taskId"]
    # The agent owns its tasks as with the issuer's own token: <issuer>#<client id>.
    assert world.store.records[task_id].owner == f"{stack.idp.issuer}#{AGENT}"
    direct = stack.agent_token()
    assert stack.mcp(direct, "tasks/get", {"taskId": task_id}).json()["result"]["taskId"] == task_id
    # Bound to /mcp: the streaming endpoint refuses it.
    elsewhere = stack.mcp(token["access_token"], "tools/list", {}, at=STREAM)
    assert elsewhere.status_code == 401 and "(audience)" in elsewhere.headers["www-authenticate"]


def test_a_token_for_the_streaming_endpoint_is_good_there_only(stack: SignInStack) -> None:
    reply = with_secret(stack, resource=STREAM_RESOURCE)
    assert reply.status_code == 200, reply.text
    token = reply.json()["access_token"]
    assert _claims(token)["aud"] == STREAM_RESOURCE
    assert stack.mcp(token, "tools/list", {}, at=STREAM).status_code == 200
    assert stack.mcp(token, "tools/list", {}).status_code == 401
    # A resource not the stack's: refused, as at the authorization endpoint.
    other = with_secret(stack, resource="https://other.example/mcp")
    assert other.status_code == 400 and other.json()["error"] == "invalid_target"


def test_a_wrong_secret_is_refused_by_the_issuer(stack: SignInStack) -> None:
    for method in ("basic", "post"):
        reply = with_secret(stack, method, secret="not-the-secret")
        assert reply.status_code in (400, 401) and reply.json()["error"] == "invalid_client", method
    assert with_secret(stack, secret="").json()["error"] == "invalid_client"


# ---- only the deployer's clients -------------------------------------------------------------


def test_a_client_that_registered_itself_never_gets_client_credentials(stack: SignInStack) -> None:
    refused = stack.http.post(
        f"{STACK}/oauth/register",
        json={"redirect_uris": [f"{STACK}/cb"], "grant_types": ["client_credentials"]},
    )
    assert refused.status_code == 400 and refused.json()["error"] == "invalid_client_metadata"
    also = stack.http.post(
        f"{STACK}/oauth/register",
        json={"redirect_uris": ["https://app.example/cb"], "token_endpoint_auth_method": "private_key_jwt"},
    )
    assert also.status_code == 400
    confidential = stack.http.post(
        f"{STACK}/oauth/register",
        json={
            "redirect_uris": ["https://app.example/cb"],
            "token_endpoint_auth_method": "client_secret_basic",
        },
    ).json()
    reply = stack.http.post(
        TOKEN_ENDPOINT,
        data={"grant_type": "client_credentials", "resource": RESOURCE},
        auth=(confidential["client_id"], confidential["client_secret"]),
    )
    assert reply.status_code == 400 and reply.json()["error"] == "unauthorized_client"
    public = stack.register()
    reply = stack.http.post(TOKEN_ENDPOINT, data={"grant_type": "client_credentials", "client_id": public})
    assert reply.status_code in (400, 401) and reply.json()["error"] in (
        "invalid_client",
        "unauthorized_client",
    )
    # Nor does a machine client sign a person in.
    page = stack.http.get(stack.authorization(AGENT).url, follow_redirects=False)
    assert page.status_code == 400 and "location" not in page.headers


# ---- private_key_jwt, checked here -----------------------------------------------------------


@pytest.mark.parametrize("audience", [STACK, TOKEN_ENDPOINT])
def test_a_private_key_jwt_assertion_gets_a_token(
    stack: SignInStack, world: World, key: RSAKey, audience: str
) -> None:
    """aud: the issuer (draft-ietf-oauth-rfc7523bis, what mcp 1.30.0 sends) or the token
    endpoint (RFC 7523 §3). No call to the issuer: Cognito's token endpoint takes no keys."""
    reply = with_key(stack, assertion(key, aud=audience))
    assert reply.status_code == 200, reply.text
    claims = _claims(reply.json()["access_token"])
    assert claims["client_id"] == KEY_CLIENT and claims["aud"] == RESOURCE and claims["idp"] == STACK
    assert "POST /oauth2/token" not in stack.calls_to_idp
    created = stack.mcp(
        reply.json()["access_token"], "tools/call", {"name": "slow_compute", "arguments": {"seconds": 0}}
    )
    assert world.store.records[created.json()["result"]["taskId"]].owner == f"{STACK}#{KEY_CLIENT}"


def test_a_replayed_assertion_is_refused_in_every_environment(
    stack: SignInStack, world: World, store: MemorySignInStore, jwks_file: pathlib.Path, key: RSAKey
) -> None:
    signed = assertion(key)
    assert with_key(stack, signed).status_code == 200
    again = with_key(stack, signed)
    assert again.status_code in (400, 401) and again.json()["error"] == "invalid_client"
    assert "used before" in again.json()["error_description"]
    # Another Lambda environment, the same table: the jti is remembered there too.
    other = build_stack(lambda: world.server, store, client_keys=f"{KEY_CLIENT}={jwks_file}")
    assert with_key(other, signed).json()["error"] == "invalid_client"


def test_assertions_that_do_not_hold_are_refused(stack: SignInStack, key: RSAKey) -> None:
    now = int(time.time())
    stranger = RSAKey.generate_key(2048, parameters={"kid": "agent-1"})
    refused = {
        "another audience": assertion(key, aud="https://other.example"),
        "the resource as audience": assertion(key, aud=RESOURCE),
        "two audiences": assertion(key, aud=[STACK, "https://other.example"]),
        "ten minutes ahead": assertion(key, exp=now + 600),
        "expired": assertion(key, exp=now - 120, iat=now - 400),
        "no jti": assertion(key, jti=None),
        "iss is not sub": assertion(key, iss="someone-else"),
        "another client": assertion(key, iss="other-agent", sub="other-agent"),
        "another key": assertion(stranger),
        "unsigned": _unsigned(
            {"iss": KEY_CLIENT, "sub": KEY_CLIENT, "aud": STACK, "exp": now + 60, "jti": "x"}
        ),
    }
    for why, signed in refused.items():
        reply = with_key(stack, signed)
        assert reply.status_code in (400, 401), why
        assert reply.json()["error"] == "invalid_client", (why, reply.json())
    # A key client cannot use a secret instead, nor the agent a key.
    basic = stack.http.post(TOKEN_ENDPOINT, data={"grant_type": "client_credentials"}, auth=(KEY_CLIENT, "x"))
    assert basic.json()["error"] == "invalid_client"
    ec = ECKey.generate_key("P-256")
    as_agent = with_key(stack, assertion(ec, iss=AGENT, sub=AGENT))
    assert as_agent.json()["error"] == "invalid_client"


def test_a_client_with_several_keys_names_the_one_it_signed_with(
    world: World, store: MemorySignInStore, tmp_path: pathlib.Path
) -> None:
    first = RSAKey.generate_key(2048, parameters={"kid": "old"})
    second = ECKey.generate_key("P-256", parameters={"kid": "new"})
    path = tmp_path / "keys.json"
    path.write_text(json.dumps({"keys": [first.as_dict(private=False), second.as_dict(private=False)]}))
    stack = build_stack(lambda: world.server, store, client_keys=f"{KEY_CLIENT}={path}")
    now = int(time.time())
    claims = {"iss": KEY_CLIENT, "sub": KEY_CLIENT, "aud": STACK, "exp": now + 60}
    named = jwt.encode({"alg": "ES256", "kid": "new"}, {**claims, "jti": "1"}, second)
    assert with_key(stack, named).status_code == 200
    unnamed = jwt.encode({"alg": "ES256"}, {**claims, "jti": "2"}, second)
    assert "name one (kid)" in with_key(stack, unnamed).json()["error_description"]


def test_client_keys_must_be_https_or_loopback() -> None:
    from taskgate.config import parse_client_keys

    assert parse_client_keys("a=https://keys.example/a.json, b=/opt/python/keys/b.json") == {
        "a": "https://keys.example/a.json",
        "b": "/opt/python/keys/b.json",
    }
    assert parse_client_keys("a=http://127.0.0.1:9/jwks.json")["a"].startswith("http://127.0.0.1")
    for bad in ("a=http://keys.example/a.json", "a", "=x", "a="):
        with pytest.raises(ValueError):
            parse_client_keys(bad)


def test_the_sdks_client_secret_post_without_client_id_names_the_one_secret_client(
    stack: SignInStack, world: World, store: MemorySignInStore
) -> None:
    """mcp 1.30.0 sends client_secret alone for client_secret_post (python-sdk#2128): with one
    secret client that is the client; with several it names none and is refused."""
    form = {"grant_type": "client_credentials", "client_secret": AGENT_SECRET, "resource": RESOURCE}
    assert stack.http.post(TOKEN_ENDPOINT, data=form).status_code == 200
    assert (
        stack.http.post(TOKEN_ENDPOINT, data={**form, "client_secret": "wrong"}).json()["error"]
        == "invalid_client"
    )
    two = build_stack(
        lambda: world.server, store, env=sign_in_env(OAUTH_CLIENT_IDS="local-agent,other-agent")
    )
    assert two.http.post(TOKEN_ENDPOINT, data=form).json()["error"] == "invalid_client"
    # Not for a person's client: the code grant still needs its client_id.
    code = two.http.post(
        TOKEN_ENDPOINT, data={"grant_type": "authorization_code", "code": "x", "client_secret": "s"}
    )
    assert code.json()["error"] == "invalid_client"


def test_secret_checks_one_address_causes_are_limited(stack: SignInStack) -> None:
    """Each check of a secret is a token request at the issuer (Cognito bills it): a stranger
    guessing secrets from one address is stopped after 60 in 10 minutes."""
    from taskgate.auth.build import SECRET_CHECKS_PER_ADDRESS

    for _ in range(SECRET_CHECKS_PER_ADDRESS):
        assert with_secret(stack, secret="guess").json()["error"] == "invalid_client"
    calls = stack.calls_to_idp.count("POST /oauth2/token")
    stopped = with_secret(stack)  # even the right secret, from this address, for now
    assert stopped.status_code == 429 and "too many" in stopped.json()["error_description"]
    assert stack.calls_to_idp.count("POST /oauth2/token") == calls  # the issuer was not asked


def test_a_root_issuers_audience_may_end_with_a_slash(stack: SignInStack, key: RSAKey) -> None:
    """mcp 1.30.0 renders the issuer through pydantic's URL type: http://host/ for http://host
    (RFC 8414 clients compare them as one, as its issuers_match does)."""
    assert with_key(stack, assertion(key, aud=f"{STACK}/")).status_code == 200
    assert with_key(stack, assertion(key, aud=f"{STACK}/oauth")).json()["error"] == "invalid_client"


def test_a_malformed_client_keys_setting_fails_the_cold_start_naming_it() -> None:
    from taskgate.config import ConfigurationError, Settings

    with pytest.raises(ConfigurationError, match="OAUTH_CLIENT_KEYS"):
        Settings.from_env(sign_in_env(OAUTH_CLIENT_KEYS="report-agent=http://keys.example/a.json"))
    assert Settings.from_env(sign_in_env(OAUTH_CLIENT_KEYS="a=/opt/python/a.json")).sign_in.oauth_client_keys
