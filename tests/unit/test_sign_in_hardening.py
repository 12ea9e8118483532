"""The authorization server against red team round three (issue 33): what a stranger can make
it do without a person, and what a person is shown. Each test names its finding; each failed
on the code before its fix.
"""

from __future__ import annotations

import pytest

from taskgate.testing.memory import MemorySignInStore
from tests.fakes import World
from tests.sign_in_stack import STACK, Clock, SignInStack, build_stack

APP = "https://app.example/callback"


@pytest.fixture
def store() -> MemorySignInStore:
    return MemorySignInStore()


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def stack(world: World, store: MemorySignInStore, clock: Clock) -> SignInStack:
    return build_stack(lambda: world.server, store, clock=clock)


# ---- M1: the authorization endpoint is no open redirector -----------------------------------


@pytest.mark.parametrize(
    "bad",
    [
        {"code_challenge": "", "code_challenge_method": ""},  # no PKCE
        {"code_challenge_method": "plain"},
        {"scope": "admin"},  # a scope this server does not have
        {"resource": "https://evil.example/mcp"},
        {"response_type": "token"},
        {"prompt": "none", "scope": "openid admin"},
    ],
)
def test_an_invalid_request_from_a_registered_client_is_a_page_never_a_redirect(
    stack: SignInStack, bad: dict[str, str]
) -> None:
    """M1: anyone can register an https redirect URI; an authorization request no person has
    seen yet, refused for its PKCE, scope, resource or response type, must not send the
    browser there (RFC 9700 §4.11.2)."""
    client_id = stack.register(redirect_uris=[APP])
    reply = stack.http.get(
        stack.authorization(client_id, redirect_uri=APP, **bad).url, follow_redirects=False
    )
    assert reply.status_code == 400, (bad, reply.headers.get("location"))
    assert "location" not in reply.headers
    assert reply.headers["content-type"].startswith("text/html")
    assert "Nothing was sent to the application" in reply.text


def test_an_error_back_from_the_identity_provider_is_a_page_never_a_redirect(stack: SignInStack) -> None:
    """M1: the callback's error path. A stranger who starts a sign-in for their own client
    gets its pending id from the 302 to the identity provider; sending a browser to the
    callback with that id and an ``error`` must not bounce it to their redirect URI."""
    client_id = stack.register(redirect_uris=[APP])
    started = stack.http.get(stack.authorization(client_id, redirect_uri=APP).url, follow_redirects=False)
    assert started.status_code == 302
    from urllib.parse import parse_qs, urlsplit

    pending = parse_qs(urlsplit(started.headers["location"]).query)["state"][0]
    reply = stack.http.get(
        f"{STACK}/oauth/callback", params={"state": pending, "error": "access_denied"}, follow_redirects=False
    )
    assert reply.status_code == 400 and "location" not in reply.headers
    assert "cancelled" in reply.text


# ---- L4: refused registrations spend nobody's hour but their own address's ------------------


def test_invalid_registrations_do_not_use_up_everyones_hour(world: World, store: MemorySignInStore) -> None:
    """L4: the hourly cap on registrations from everyone counted refused requests too, so a
    stranger with a few addresses stopped every host from registering for an hour."""
    from tests.sign_in_stack import sign_in_env

    stack = build_stack(
        lambda: world.server,
        store,
        env=sign_in_env(OAUTH_REGISTRATIONS_PER_HOUR="3", OAUTH_REGISTRATIONS_PER_ADDRESS_PER_HOUR="50"),
    )
    for junk in (
        {"redirect_uris": ["javascript:alert(1)"]},
        {"redirect_uris": []},
        {"redirect_uris": [APP], "grant_types": ["client_credentials"]},
        {"redirect_uris": [APP], "response_types": ["token"]},
    ) * 5:
        assert stack.http.post(f"{STACK}/oauth/register", json=junk).status_code == 400
    for _ in range(3):
        stack.register()
    refused = stack.http.post(f"{STACK}/oauth/register", json={"redirect_uris": [APP]})
    assert refused.status_code == 429 and refused.json()["error"] == "slow_down"
    assert refused.headers["retry-after"] == "3600"


# ---- L5: what the consent page shows ---------------------------------------------------------

SPOOFS = [
    "Claude Code\u202e",  # right-to-left override
    "\u2067Claude Code\u2069",  # isolates
    "Claude\u200bCode",  # zero-width space
    "Claude\u3164Code",  # a Hangul filler (blank-looking letter)
    "Claude Code\U000e0041\U000e0042",  # tag characters
    "Cla\u00adude Code",  # soft hyphen
    "Claude\u2800Code",  # the Braille blank
]


@pytest.mark.parametrize("name", SPOOFS)
def test_the_consent_page_shows_a_name_without_its_hidden_characters_and_the_redirect_host(
    stack: SignInStack, name: str
) -> None:
    """L5: a client named with direction-reversing or invisible characters read as another
    application. Each such character is shown as its code point, the name isolated, and the
    host the person will be sent to is always named."""
    client_id = stack.register(client_name=name, redirect_uris=["https://app.example/callback"])
    stopped = stack.sign_in_as_person(
        stack.authorization(client_id, redirect_uri="https://app.example/callback"), consent=""
    )
    page = stopped.person.steps[-1].body
    hidden = [ch for ch in name if ch not in "ClaudeCod e"]
    assert hidden and not any(ch in page for ch in hidden), name
    assert all(f"[U+{ord(ch):04X}]" in page for ch in hidden), name
    assert "<bdi>" in page
    assert "you will be sent to <strong>app.example</strong>" in page


def test_a_look_alike_host_is_refused_and_its_ascii_form_shown(stack: SignInStack) -> None:
    lookalike = "https://\u0430pp.example/callback"  # a Cyrillic a (U+0430): a URI is ASCII
    reply = stack.http.post(f"{STACK}/oauth/register", json={"redirect_uris": [lookalike]})
    assert reply.status_code == 400 and reply.json()["error"] == "invalid_redirect_uri"
    ascii_form = "https://xn--pp-8kc.example/callback"
    client_id = stack.register(client_name="App", redirect_uris=[ascii_form])
    stopped = stack.sign_in_as_person(stack.authorization(client_id, redirect_uri=ascii_form), consent="")
    assert "you will be sent to <strong>xn--pp-8kc.example</strong>" in stopped.person.steps[-1].body


# ---- L6: a quote or a backslash in a redirect URI nobody registered --------------------------


@pytest.mark.parametrize(
    "uri",
    [
        'https://app.example/callback"',
        "https://app.example/callback\\",
        'https://evil.example/"x\\y',
        'http://127.0.0.1:1/"',
        "https://app.example/cb?x=\"'<>",
    ],
)
def test_a_quote_or_backslash_in_an_unregistered_redirect_uri_is_the_error_page(
    stack: SignInStack, uri: str
) -> None:
    """L6: it was a 503 and a traceback in the log (the URI went into an error description,
    which Authlib puts in a header), not the page saying the redirect URI is not registered."""
    client_id = stack.register(redirect_uris=[APP])
    reply = stack.http.get(stack.authorization(client_id, redirect_uri=uri).url, follow_redirects=False)
    assert reply.status_code == 400 and "location" not in reply.headers, uri
    assert "not supported by client" in reply.text


def test_a_quote_in_a_metadata_document_url_is_the_error_page_at_both_endpoints(
    world: World, store: MemorySignInStore
) -> None:
    """L6, the same through a client id URL: why its document describes no client now names
    the URL, and a quote or backslash in that reason must not become a 503."""
    from taskgate.auth.cimd import ClientDocumentError

    def fetch(url: str) -> tuple[bytes, int | None]:
        raise ClientDocumentError(f"{url} answered HTTP 404")

    stack = build_stack(lambda: world.server, store, documents_fetch=fetch)
    client_id = 'https://app.example/"\\client.json'
    page = stack.http.get(stack.authorization(client_id).url, follow_redirects=False)
    assert page.status_code == 400 and "HTTP 404" in page.text
    token = stack.http.post(
        f"{STACK}/oauth/token",
        data={"grant_type": "authorization_code", "code": "x", "client_id": client_id, "redirect_uri": APP},
    )
    assert token.status_code in (400, 401) and token.json()["error"] == "invalid_client"


# ---- L7: a client revokes only its own refresh tokens ----------------------------------------


def test_another_client_cannot_revoke_a_refresh_token_family(stack: SignInStack) -> None:
    """L7: a refresh token presented again after rotation revokes its family (reuse
    detection), but the family was revoked before checking that the token belongs to the
    client presenting it: any client knowing a family id could sign another client out."""
    victim = stack.register(client_name="Victim")
    tokens = stack.tokens(victim)
    family = tokens["refresh_token"].split(".", 1)[0]
    attacker = stack.register(client_name="Attacker")
    for guess in (f"{family}.not-the-secret", tokens["refresh_token"]):
        refused = stack.http.post(
            f"{STACK}/oauth/token",
            data={"grant_type": "refresh_token", "refresh_token": guess, "client_id": attacker},
        )
        assert refused.status_code == 400 and refused.json()["error"] == "invalid_grant"
    still = stack.http.post(
        f"{STACK}/oauth/token",
        data={"grant_type": "refresh_token", "refresh_token": tokens["refresh_token"], "client_id": victim},
    )
    assert still.status_code == 200, still.text
    # The victim's own reuse of a rotated token still revokes its family.
    reused = stack.http.post(
        f"{STACK}/oauth/token",
        data={"grant_type": "refresh_token", "refresh_token": tokens["refresh_token"], "client_id": victim},
    )
    assert reused.status_code == 400
    newest = stack.http.post(
        f"{STACK}/oauth/token",
        data={
            "grant_type": "refresh_token",
            "refresh_token": still.json()["refresh_token"],
            "client_id": victim,
        },
    )
    assert newest.status_code == 400  # revoked with its family


# ---- found on the way: client_secret_basic was never read --------------------------------------


def test_a_registered_client_authenticates_with_client_secret_basic(stack: SignInStack) -> None:
    """The metadata offered client_secret_basic (the default RFC 7591 method), but the token
    endpoint looked for "Authorization" among headers Starlette hands over lowercased: a
    confidential client that registered with the default was refused with invalid_client."""
    registered = stack.http.post(f"{STACK}/oauth/register", json={"redirect_uris": [APP]}).json()
    assert registered["token_endpoint_auth_method"] == "client_secret_basic"
    authorization = stack.sign_in_as_person(stack.authorization(registered["client_id"], redirect_uri=APP))
    form = {
        "grant_type": "authorization_code",
        "code": authorization.params["code"],
        "redirect_uri": APP,
        "code_verifier": authorization.verifier,
    }
    reply = stack.http.post(
        f"{STACK}/oauth/token", data=form, auth=(registered["client_id"], registered["client_secret"])
    )
    assert reply.status_code == 200, reply.text
