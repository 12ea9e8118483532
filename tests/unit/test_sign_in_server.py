"""The stack's own authorization server (AuthMode USER), on the fakes: what MCP clients see
(RFC 8414 metadata with S256, registration, metadata documents), a person signing in at the
Cognito-shaped development provider and consenting per client, the code and tokens that
follow, and every way a request is refused: a redirect URI not registered (answered here,
never redirected), a code replayed or expired, a PKCE mismatch, another resource, a new
client without consent, a metadata document on a private address, an ID token at /mcp.
tests/sign_in_stack.py puts the stack, the provider and the person in one process."""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

from taskgate.auth.cimd import ClientDocumentError, GuardedFetch, public_address
from taskgate.auth.jwt import OwnTokens
from taskgate.auth.signing import SigningKeys
from taskgate.testing.memory import MemorySignInStore
from tests.fakes import World
from tests.sign_in_stack import (
    CLIENT_REDIRECT,
    IDP,
    RESOURCE,
    SCOPE,
    STACK,
    Clock,
    SignInStack,
    build_stack,
    sign_in_env,
)

CIMD_URL = "https://app.example/mcp/client.json"


@pytest.fixture
def store() -> MemorySignInStore:
    return MemorySignInStore()


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def stack(world: World, store: MemorySignInStore, clock: Clock) -> SignInStack:
    return build_stack(lambda: world.server, store, clock=clock)


def _claims(token: str) -> dict[str, Any]:
    import base64

    payload = token.split(".")[1]
    return json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))  # type: ignore[no-any-return]


def _query(url: str) -> dict[str, str]:
    return {k: v[0] for k, v in parse_qs(urlsplit(url).query).items()}


def test_clients_find_an_authorization_server_with_pkce_registration_and_metadata_documents(
    stack: SignInStack,
) -> None:
    challenge = stack.mcp(None, "tools/list", {})
    assert challenge.status_code == 401
    prm = stack.http.get(f"{STACK}/.well-known/oauth-protected-resource/mcp").json()
    # The stack's own server first (hosts take the first); the issuer whose own tokens are
    # taken too (AuthMode CLIENT) after it, for a machine client told its credentials are there.
    assert prm["resource"] == RESOURCE and prm["authorization_servers"] == [STACK, stack.idp.issuer]
    metadata = stack.http.get(f"{STACK}/.well-known/oauth-authorization-server")
    assert metadata.headers["access-control-allow-origin"] == "*"
    document = metadata.json()
    assert document["issuer"] == STACK  # RFC 8414 §3.3: the URL the metadata was found under
    assert document["code_challenge_methods_supported"] == ["S256"]
    assert document["registration_endpoint"] == f"{STACK}/oauth/register"
    assert document["client_id_metadata_document_supported"] is True
    assert document["authorization_response_iss_parameter_supported"] is True
    assert document["scopes_supported"] == [SCOPE]
    # A browser client's preflight for registration and tokens.
    for path in ("/oauth/register", "/oauth/token"):
        preflight = stack.http.options(f"{STACK}{path}", headers={"Origin": "http://localhost:6274"})
        assert preflight.status_code == 204 and preflight.headers["access-control-allow-origin"] == "*"


def test_a_person_signs_in_consents_and_the_client_runs_a_task_as_them(
    stack: SignInStack, world: World
) -> None:
    client_id = stack.register(client_name="Claude Code")
    authorization = stack.sign_in_as_person(stack.authorization(client_id))
    steps = [
        (s.method, urlsplit(s.url).netloc + urlsplit(s.url).path, s.status)
        for s in authorization.person.steps
    ]
    assert steps == [
        ("GET", "taskgate.example/oauth/authorize", 302),
        ("GET", "idp.example/oauth2/authorize", 200),  # the provider's sign-in form
        ("POST", "idp.example/login", 302),
        ("GET", "taskgate.example/oauth/callback", 200),  # the consent page
        ("POST", "taskgate.example/oauth/consent", 302),
    ]
    consent = authorization.person.steps[3]
    assert "Allow Claude Code to use your taskgate tasks?" in consent.text
    assert "dev@example.com" in consent.text and CLIENT_REDIRECT in consent.text
    assert consent.headers["x-frame-options"] == "DENY"
    assert "frame-ancestors 'none'" in consent.headers["content-security-policy"]
    assert consent.headers["cache-control"] == "no-store"
    landed = authorization.params
    assert authorization.landed.startswith(CLIENT_REDIRECT) and landed["iss"] == STACK  # RFC 9207
    assert landed["state"] == _query(authorization.url)["state"] and landed["code"]
    reply = stack.exchange(authorization)
    assert reply.status_code == 200, reply.text
    tokens = reply.json()
    assert tokens["token_type"] == "Bearer" and tokens["scope"] == SCOPE and tokens["refresh_token"]
    assert reply.headers["cache-control"] == "no-store"
    claims = _claims(tokens["access_token"])
    subject = stack.idp.subject_of("dev@example.com")
    assert claims["aud"] == RESOURCE and claims["iss"] == STACK and claims["client_id"] == client_id
    assert claims["sub"] == subject and claims["idp"] == stack.idp.issuer
    created = stack.mcp(
        tokens["access_token"], "tools/call", {"name": "slow_compute", "arguments": {"seconds": 0}}
    )
    task_id = created.json()["result"]["taskId"]
    # The owner is the person at the upstream issuer: the same as a Cognito token gave before.
    assert world.store.records[task_id].owner == f"{stack.idp.issuer}#{subject}"
    assert (
        stack.mcp(tokens["access_token"], "tasks/get", {"taskId": task_id}).json()["result"]["taskId"]
        == task_id
    )


def test_consent_is_asked_for_every_new_client(stack: SignInStack) -> None:
    """The confused deputy: every client reaches the provider as the stack's one static client,
    whose own consent (if any) says nothing about which MCP client asks. So the stack asks,
    per client and person; a client the person approved is not asked about again."""
    first = stack.register(client_name="First")
    assert stack.sign_in_as_person(stack.authorization(first)).person.saw("Allow First")
    again = stack.sign_in_as_person(stack.authorization(first))
    assert not again.person.saw("Allow") and again.params["code"]  # approved before
    second = stack.register(client_name="Second")
    stopped = stack.sign_in_as_person(stack.authorization(second), consent="")
    assert stopped.person.saw("Allow Second")
    # The person is on the consent page: nothing has gone to the client.
    assert stopped.landed.startswith(f"{STACK}/oauth/callback")
    assert not any((s.location or "").startswith(CLIENT_REDIRECT) for s in stopped.person.steps)


def test_denying_consent_sends_the_client_an_error_and_no_code(stack: SignInStack) -> None:
    authorization = stack.sign_in_as_person(stack.authorization(stack.register()), consent="deny")
    assert authorization.params["error"] == "access_denied" and "code" not in authorization.params
    assert authorization.params["iss"] == STACK


def test_a_redirect_uri_the_client_did_not_register_is_refused_without_redirecting(
    stack: SignInStack,
) -> None:
    client_id = stack.register(
        redirect_uris=["https://app.example/callback", "http://127.0.0.1:33418/callback"]
    )
    for uri in (
        "https://evil.example/callback",
        "https://app.example/callback/more",
        "https://app.example/callback?x=1",
        "http://127.0.0.2:33418/callback",
        "http://127.0.0.1:33418/other",
    ):
        reply = stack.http.get(stack.authorization(client_id, redirect_uri=uri).url, follow_redirects=False)
        assert reply.status_code == 400 and "location" not in reply.headers, uri
        assert "not supported by client" in reply.text and reply.headers["x-frame-options"] == "DENY"
    unknown = stack.http.get(stack.authorization("tg-nobody").url, follow_redirects=False)
    assert unknown.status_code == 400 and "location" not in unknown.headers
    # RFC 8252 §7.3: a loopback redirect URI matches on any port (native apps pick one).
    other_port = stack.authorization(client_id, redirect_uri="http://127.0.0.1:50123/callback")
    assert stack.sign_in_as_person(other_port).params["code"]


@pytest.mark.parametrize(
    "uri",
    [
        "http://app.example/callback",
        "https://app.example/cb#frag",
        "javascript:alert(1)",
        "data:text/html,x",
        "relative/cb",
    ],
)
def test_registration_refuses_redirect_uris_a_browser_should_not_be_sent_to(
    stack: SignInStack, uri: str
) -> None:
    reply = stack.http.post(
        f"{STACK}/oauth/register", json={"redirect_uris": [uri], "token_endpoint_auth_method": "none"}
    )
    assert reply.status_code == 400
    assert reply.json()["error"] in ("invalid_redirect_uri", "invalid_client_metadata")


def test_registration_is_bounded_in_size_redirect_uris_and_rate(
    world: World, store: MemorySignInStore
) -> None:
    stack = build_stack(
        lambda: world.server, store, env=sign_in_env(OAUTH_REGISTRATIONS_PER_ADDRESS_PER_HOUR="3")
    )
    assert stack.http.post(f"{STACK}/oauth/register", content=b"x" * 20_000).status_code == 413
    many = [f"http://127.0.0.1/cb{n}" for n in range(11)]
    assert stack.http.post(f"{STACK}/oauth/register", json={"redirect_uris": many}).status_code == 400  # 1
    public = stack.http.post(
        f"{STACK}/oauth/register",
        json={"redirect_uris": [CLIENT_REDIRECT], "token_endpoint_auth_method": "none"},
    )  # 2
    assert public.status_code == 201 and "client_secret" not in public.json()  # a public client: no secret
    stack.register()  # 3
    refused = stack.http.post(
        f"{STACK}/oauth/register",
        json={"redirect_uris": [CLIENT_REDIRECT], "token_endpoint_auth_method": "none"},
    )
    assert refused.status_code == 429 and refused.json()["error"] == "slow_down"
    assert refused.headers["retry-after"] == "3600"


def test_a_confidential_client_authenticates_with_its_secret(stack: SignInStack) -> None:
    redirect = "https://claude.ai/api/mcp/auth_callback"
    reply = stack.http.post(
        f"{STACK}/oauth/register",
        json={"redirect_uris": [redirect], "token_endpoint_auth_method": "client_secret_post"},
    )
    assert reply.status_code == 201
    registered = reply.json()
    authorization = stack.sign_in_as_person(
        stack.authorization(registered["client_id"], redirect_uri=redirect)
    )
    without = stack.exchange(authorization)
    assert without.status_code == 401 and without.json()["error"] == "invalid_client"
    wrong = stack.exchange(authorization, client_secret="not-the-secret")
    assert wrong.status_code == 401
    good = stack.exchange(authorization, client_secret=registered["client_secret"])  # the code was never used
    assert good.status_code == 200, good.text


def test_a_code_works_once_and_a_replay_revokes_what_it_gave(stack: SignInStack) -> None:
    authorization = stack.sign_in_as_person(stack.authorization(stack.register()))
    first = stack.exchange(authorization)
    assert first.status_code == 200
    replay = stack.exchange(authorization)
    assert replay.status_code == 400 and replay.json()["error"] == "invalid_grant"
    refresh = stack.http.post(
        f"{STACK}/oauth/token",
        data={
            "grant_type": "refresh_token",
            "refresh_token": first.json()["refresh_token"],
            "client_id": authorization.client_id,
        },
    )
    assert refresh.status_code == 400 and refresh.json()["error"] == "invalid_grant"


def test_a_code_expires_after_a_minute(stack: SignInStack, clock: Clock) -> None:
    authorization = stack.sign_in_as_person(stack.authorization(stack.register()))
    clock.advance(61)
    reply = stack.exchange(authorization)
    assert reply.status_code == 400 and reply.json()["error"] == "invalid_grant"


def test_pkce_is_required_and_must_match(stack: SignInStack) -> None:
    client_id = stack.register()
    authorization = stack.sign_in_as_person(stack.authorization(client_id))
    wrong = stack.exchange(authorization, code_verifier="x" * 64)
    assert wrong.status_code == 400 and wrong.json() == {
        "error": "invalid_grant",
        "error_description": "Code challenge failed.",
    }
    for missing in ({"code_challenge": "", "code_challenge_method": ""}, {"code_challenge_method": "plain"}):
        refused = stack.sign_in_as_person(stack.authorization(client_id, **missing))
        # Told at once on a page, never sent to sign in nor redirected (red team M1).
        assert [s.status for s in refused.person.steps] == [400], missing
        assert refused.person.saw("invalid_request"), missing


def test_a_token_for_another_resource_is_refused(stack: SignInStack) -> None:
    client_id = stack.register()
    other = "https://other.example/mcp"
    refused = stack.sign_in_as_person(stack.authorization(client_id, resource=other))
    assert [s.status for s in refused.person.steps] == [400] and refused.person.saw("invalid_target")
    authorization = stack.sign_in_as_person(stack.authorization(client_id))
    at_token = stack.exchange(authorization, resource=other)
    assert at_token.status_code == 400 and at_token.json()["error"] == "invalid_target"
    # Signed with this stack's own key, but for another resource (RFC 8707 audience): not for /mcp.
    elsewhere = OwnTokens(issuer=STACK, resource=other, keys=SigningKeys(stack.keys))
    token, _ = elsewhere.mint(
        subject="s", identity_issuer=stack.idp.issuer, client_id=client_id, scope=[SCOPE], ttl_seconds=60
    )
    reply = stack.mcp(token, "tools/list", {})
    assert reply.status_code == 401
    assert "token not issued for this resource (audience)" in reply.headers["www-authenticate"]


def test_an_id_token_or_another_clients_token_from_the_provider_is_refused_at_mcp(stack: SignInStack) -> None:
    idp = stack.idp
    subject = idp.subject_of("dev@example.com")
    id_token = idp.id_token(client_id="local-sign-in", subject=subject, email="dev@example.com", nonce="n")
    person_token = idp.access_token(client_id="local-sign-in", subject=subject, scope=[SCOPE], username="dev")
    for token in (id_token, person_token):
        reply = stack.mcp(token, "tools/list", {})
        assert reply.status_code == 401, reply.text
    agent = stack.mcp(stack.agent_token(), "tools/list", {})
    assert agent.status_code == 200


def test_refresh_tokens_rotate_and_a_reused_one_revokes_the_family(stack: SignInStack) -> None:
    client_id = stack.register()
    tokens = stack.tokens(client_id)

    def refresh(token: str) -> Any:
        return stack.http.post(
            f"{STACK}/oauth/token",
            data={"grant_type": "refresh_token", "refresh_token": token, "client_id": client_id},
        )

    second = refresh(tokens["refresh_token"])
    assert second.status_code == 200 and second.json()["refresh_token"] != tokens["refresh_token"]
    assert stack.mcp(second.json()["access_token"], "tools/list", {}).status_code == 200
    assert refresh(tokens["refresh_token"]).status_code == 400  # reused: someone has a copy
    assert refresh(second.json()["refresh_token"]).status_code == 400  # so the whole family is revoked


def test_a_sign_in_step_is_taken_once(stack: SignInStack) -> None:
    authorization = stack.sign_in_as_person(stack.authorization(stack.register()), consent="")
    replay = stack.http.get(authorization.person.steps[-1].url)  # the callback, again
    assert replay.status_code == 400 and "expired" in replay.text


def test_the_consent_form_needs_its_csrf_token_and_this_origin(stack: SignInStack) -> None:
    from tests.sign_in_user import forms

    authorization = stack.sign_in_as_person(stack.authorization(stack.register()), consent="")
    (form,), _ = forms(authorization.person.steps[-1].body)
    action = form.action
    assert action == f"{STACK}/oauth/consent"
    approve = {**form.fields, "decision": "approve"}
    elsewhere = stack.http.post(action, data=approve, headers={"Origin": "https://evil.example"})
    assert elsewhere.status_code == 403
    forged = stack.http.post(action, data={**approve, "csrf": "guessed"}, follow_redirects=False)
    assert forged.status_code == 400
    good = stack.http.post(action, data=approve, headers={"Origin": STACK}, follow_redirects=False)
    assert good.status_code == 302 and _query(good.headers["location"])["code"]
    assert stack.http.post(action, data=approve, follow_redirects=False).status_code == 400  # once


def test_a_metadata_document_describes_a_client_without_registration(
    world: World, store: MemorySignInStore
) -> None:
    fetched: list[str] = []
    document = {
        "client_id": CIMD_URL,
        "client_name": "Document Client",
        "redirect_uris": [CLIENT_REDIRECT],
        "grant_types": ["authorization_code", "refresh_token"],
        "token_endpoint_auth_method": "none",
    }

    def fetch(url: str) -> tuple[bytes, int | None]:
        fetched.append(url)
        return json.dumps(document).encode(), 600

    stack = build_stack(lambda: world.server, store, documents_fetch=fetch)
    authorization = stack.sign_in_as_person(stack.authorization(CIMD_URL))
    assert authorization.person.saw("Allow Document Client")
    tokens = stack.exchange(authorization)
    assert tokens.status_code == 200, tokens.text
    assert _claims(tokens.json()["access_token"])["client_id"] == CIMD_URL
    stack.sign_in_as_person(stack.authorization(CIMD_URL))
    assert fetched == [CIMD_URL]  # cached (max-age 600)
    document["client_id"] = "https://someone.else/client.json"
    other = "https://app.example/mcp/other.json"
    refused = stack.http.get(stack.authorization(other).url, follow_redirects=False)
    assert refused.status_code == 400 and "location" not in refused.headers


def _resolving_to(address: str) -> GuardedFetch:
    return GuardedFetch(resolve=lambda host, port: [address])


@pytest.mark.parametrize(
    "address",
    [
        "127.0.0.1",
        "10.0.0.5",
        "172.16.1.1",
        "192.168.1.10",
        "169.254.169.254",  # the instance metadata service
        "100.64.0.1",
        "0.0.0.0",
        "::1",
        "fd00::1",
        "fe80::1",
        "::ffff:10.0.0.1",
        "224.0.0.1",
    ],
)
def test_a_metadata_document_on_a_private_address_is_never_fetched(address: str) -> None:
    assert not public_address(address)
    with pytest.raises(ClientDocumentError, match="not public"):
        _resolving_to(address)(CIMD_URL)  # refused before any connection (sockets are refused here too)


def test_a_client_id_url_pointing_at_a_private_address_is_refused_at_the_authorization_endpoint(
    world: World, store: MemorySignInStore
) -> None:
    stack = build_stack(lambda: world.server, store, documents_fetch=_resolving_to("169.254.169.254"))
    reply = stack.http.get(stack.authorization(CIMD_URL).url, follow_redirects=False)
    assert reply.status_code == 400 and "location" not in reply.headers
    assert public_address("93.184.216.34") and public_address("2606:2800:220:1::1")
    for url in (
        "http://app.example/c.json",
        "https://app.example/",
        "https://app.example/a/../c.json",
        "https://u@app.example/c",
    ):
        with pytest.raises(ClientDocumentError):
            _resolving_to("93.184.216.34")(url)


def test_signing_keys_rotate_without_refusing_tokens_in_flight() -> None:
    """A token signed with the previous secret version still verifies (its kid names it); an
    instance signs with the new version within the hour."""
    from taskgate.auth.jwt import parse

    versions = [[b"a" * 40]]
    clock = Clock(start=0.0)
    keys = SigningKeys(lambda: versions[-1], clock=clock)
    tokens = OwnTokens(issuer=STACK, resource=RESOURCE, keys=keys)

    def mint() -> str:
        return tokens.mint(subject="s", identity_issuer=IDP, client_id="c", scope=[SCOPE], ttl_seconds=7200)[
            0
        ]

    old = mint()
    versions.append([b"b" * 40, b"a" * 40])  # AWSCURRENT, AWSPREVIOUS after a rotation
    assert parse(mint()).header["kid"] == parse(old).header["kid"]  # not read again yet
    clock.advance(3601)
    new = mint()
    assert parse(new).header["kid"] != parse(old).header["kid"]
    assert tokens.verify(parse(old)).subject == "s" and tokens.verify(parse(new)).subject == "s"


def test_a_failing_table_is_a_retryable_error_never_a_stack_trace(world: World) -> None:
    from taskgate.domain.errors import ServiceUnavailable

    class Down(MemorySignInStore):
        def __getattribute__(self, name: str) -> Any:
            if name in ("count", "get_client", "use_code", "get_grant"):
                raise ServiceUnavailable("DynamoDB is throttling")
            return super().__getattribute__(name)

    stack = build_stack(lambda: world.server, Down())
    registered = stack.http.post(f"{STACK}/oauth/register", json={"redirect_uris": [CLIENT_REDIRECT]})
    assert registered.status_code == 503 and registered.json()["error"] == "temporarily_unavailable"
    token = stack.http.post(
        f"{STACK}/oauth/token", data={"grant_type": "authorization_code", "code": "x", "client_id": "c"}
    )
    assert token.status_code == 503 and token.headers["retry-after"] == "5"
    page = stack.http.get(stack.authorization("tg-someone").url, follow_redirects=False)
    assert page.status_code == 503 and "Traceback" not in page.text and "location" not in page.headers
