"""Where an authorization code is sent, read as a browser reads it (red team round three, H1).

The person's browser follows the ``Location`` the authorization endpoint answers with, and a
browser parses it with the WHATWG URL standard: ``\\`` is ``/`` in an http(s) URL, tab and
newline vanish, percent-encoding is decoded in a host. ``urllib`` does none of that, so
``http://evil.example\\@127.0.0.1/callback`` looked like the registered loopback URI to the
server and sent the code to ``evil.example``. The oracle here is ada (``ada_url``), a
maintained WHATWG implementation, used by the tests only: whatever the server accepts must
take a browser to the host, path and query the client registered.
"""

from __future__ import annotations

import itertools
import json

import pytest
from ada_url import URL

from taskgate.auth.redirects import redirect_host, refusal, resolve
from taskgate.testing.memory import MemorySignInStore
from tests.fakes import World
from tests.sign_in_stack import CLIENT_REDIRECT, STACK, SignInStack, build_stack

REGISTERED = (
    "http://127.0.0.1/callback",
    "http://127.0.0.1:33418/callback",
    "http://[::1]/cb?x=1",
    "http://localhost/oauth/callback",
    "https://app.example/callback",
    "https://vscode.dev/redirect",
    "cursor://anysphere.cursor-retrieval/oauth/callback",
)

# Pieces an attacker puts between a host of theirs and the loopback address, or into the port.
HOSTS = ("evil.example", "127.0.0.1.evil.example", "", "127.0.0.1", "[::1]", "localhost")
JOINS = (
    "\\@",
    "\\",
    "@",
    "%5C@",
    "%5c@",
    "%40",
    "%5C",
    "\t@",
    "\n@",
    "\r",
    "/@",
    "%2F@",
    "%252F@",
    "\\\\",
    "#@",
    "?@",
    "%00@",
    " @",
    ":@",
    "%09@",
    "\\/",
    ";@",
)
PORTS = ("", ":1", ":33418", ":0", ":65536", ":+1", ":1e3", ":\u0663", ":00080", ":%31", ":1\t", "%25eth0")
PATHS = ("/callback", "/cb?x=1", "/oauth/callback", "\\callback", "/callback\\", "/%2e%2e/callback", "")


def _corpus() -> list[str]:
    loopbacks = ("127.0.0.1", "[::1]", "localhost", "[::1%25eth0]", "127.0.0.1%2F", "LOCALHOST", "127.1")
    uris = {
        f"http://{host}{join}{loop}{port}{path}"
        for host, join, loop, port, path in itertools.product(HOSTS, JOINS, loopbacks, PORTS[:6], PATHS[:3])
    }
    uris |= {f"http://{loop}{port}{path}" for loop, port, path in itertools.product(loopbacks, PORTS, PATHS)}
    uris |= {
        "https://app.example/callback",
        "https://app.example\\@evil.example/callback",
        "https://evil.example\\@app.example/callback",
        "https://app.example/callback\\..\\..\\evil",
        "https://app.example%2Eevil.example/callback",
        "https://app.example\t/callback",
        "cursor://anysphere.cursor-retrieval/oauth/callback",
        "cursor://anysphere.cursor-retrieval\\@evil/oauth/callback",
    }
    return sorted(uris)


def _browser(uri: str) -> URL | None:
    try:
        return URL(uri)
    except ValueError:
        return None


def test_every_uri_the_server_redirects_to_takes_a_browser_where_the_client_registered() -> None:
    corpus = _corpus()
    accepted = 0
    for registered, requested in itertools.product(REGISTERED, corpus):
        target = resolve([registered], requested)
        if target is None:
            continue
        accepted += 1
        # Nothing of the requested string is echoed beyond what equals the registration.
        assert target == requested, (registered, requested)
        mine, theirs, sent = _browser(registered), _browser(requested), _browser(target)
        assert mine is not None and theirs is not None and sent is not None, (registered, requested)
        for url in (theirs, sent):
            assert (url.protocol, url.hostname, url.pathname, url.search) == (
                mine.protocol,
                mine.hostname,
                mine.pathname,
                mine.search,
            ), (registered, requested)
            assert url.username == "" and url.password == "", (registered, requested)
    # The corpus is not all refusals: the legitimate spellings are in it and accepted.
    assert len(corpus) > 5000 and accepted >= 10


@pytest.mark.parametrize(
    "requested",
    [
        "http://evil.example\\@127.0.0.1/callback",
        "http://evil.example\\@127.0.0.1:5555/callback",
        "http://evil.example%5C@127.0.0.1/callback",
        "http://evil.example%5c@127.0.0.1/callback",
        "http://evil.example%40127.0.0.1/callback",
        "http://evil.example@127.0.0.1/callback",
        "http://evil.example\t@127.0.0.1/callback",
        "http://evil.example\n@127.0.0.1/callback",
        "http://127.0.0.1\\@evil.example/callback",
        "http://[::1%25eth0]/callback",
        "http://127.0.0.1:33418\\@evil.example/callback",
        "http://127.0.0.1:٣٣/callback",
        "http://127.0.0.1:65536/callback",
        "http://127.0.0.1/callback\\..\\evil",
    ],
)
def test_spellings_a_browser_reads_differently_from_python_never_match(requested: str) -> None:
    assert resolve(["http://127.0.0.1/callback", "http://[::1]/callback"], requested) is None
    assert refusal(requested) is not None


def test_a_loopback_uri_matches_on_any_digits_port_and_exact_uris_exactly() -> None:
    assert resolve(["http://127.0.0.1/callback"], "http://127.0.0.1:50123/callback") == (
        "http://127.0.0.1:50123/callback"
    )
    assert resolve(["http://127.0.0.1:33418/callback"], "http://127.0.0.1/callback") == (
        "http://127.0.0.1/callback"
    )
    assert resolve(["http://[::1]/cb?x=1"], "http://[::1]:9/cb?x=1") == "http://[::1]:9/cb?x=1"
    assert resolve(["http://localhost/cb"], "http://127.0.0.1/cb") is None  # another host
    assert resolve(["https://app.example/cb"], "https://app.example:443/cb") is None  # exact only
    assert resolve(["https://app.example/cb"], "https://app.example/cb") == "https://app.example/cb"
    # A query may carry encoded delimiters (nothing reads a query as where to go).
    assert refusal("https://app.example/cb?next=%2Fhome") is None
    assert redirect_host("http://127.0.0.1:5/cb") == "127.0.0.1"
    assert redirect_host("cursor://x/cb") == "cursor:"


@pytest.mark.parametrize(
    "uri",
    [
        "http://app.example\\@127.0.0.1/callback",
        "https://app.example%2F@evil/cb",
        "https://app.example/a%5Cb",
        "http://[::1%25lo]/cb",
        "https://app.example/cb\t",
    ],
)
def test_registration_refuses_uris_a_browser_would_read_another_way(stack: SignInStack, uri: str) -> None:
    reply = stack.http.post(
        f"{STACK}/oauth/register", json={"redirect_uris": [uri], "token_endpoint_auth_method": "none"}
    )
    assert reply.status_code == 400, uri
    assert reply.json()["error"] in ("invalid_redirect_uri", "invalid_client_metadata")


@pytest.fixture
def store() -> MemorySignInStore:
    return MemorySignInStore()


@pytest.fixture
def stack(world: World, store: MemorySignInStore) -> SignInStack:
    return build_stack(lambda: world.server, store)


ATTACKS = (
    "http://evil.example\\@127.0.0.1/callback",
    "http://evil.example\\@127.0.0.1:33418/callback",
    "http://evil.example%5C@127.0.0.1/callback",
    "http://evil.example%40127.0.0.1/callback",
    "http://evil.example\t@127.0.0.1/callback",
    "http://[::1%25eth0]:33418/callback",
)


def _no_code_leaves(stack: SignInStack, client_id: str) -> None:
    # The person approved this client before: no consent page would stop a redirect.
    first = stack.sign_in_as_person(stack.authorization(client_id))
    assert first.params["code"]
    for uri in ATTACKS:
        attempt = stack.sign_in_as_person(stack.authorization(client_id, redirect_uri=uri))
        locations = [s.location for s in attempt.person.steps if s.location]
        assert not any("code=" in loc for loc in locations), (uri, locations)
        assert attempt.person.steps[0].status == 400, uri  # the error page, never a redirect
        assert "location" not in {k.lower() for k in attempt.person.steps[0].headers}, uri


def test_a_registered_client_cannot_have_the_code_sent_elsewhere_by_a_backslash(stack: SignInStack) -> None:
    _no_code_leaves(stack, stack.register())


def test_a_metadata_document_client_cannot_have_the_code_sent_elsewhere_by_a_backslash(
    world: World, store: MemorySignInStore
) -> None:
    client_id = "https://app.example/mcp/client.json"
    document = {
        "client_id": client_id,
        "client_name": "Document Client",
        "redirect_uris": [CLIENT_REDIRECT],
        "grant_types": ["authorization_code", "refresh_token"],
        "token_endpoint_auth_method": "none",
    }
    stack = build_stack(
        lambda: world.server, store, documents_fetch=lambda url: (json.dumps(document).encode(), 600)
    )
    _no_code_leaves(stack, client_id)


def test_consent_is_kept_per_client_and_redirect_host(stack: SignInStack) -> None:
    client_id = stack.register(redirect_uris=["https://app.example/callback", "https://other.example/cb"])
    first = stack.sign_in_as_person(
        stack.authorization(client_id, redirect_uri="https://app.example/callback")
    )
    assert first.person.saw("app.example") and first.params["code"]
    again = stack.sign_in_as_person(
        stack.authorization(client_id, redirect_uri="https://app.example/callback"), consent=""
    )
    assert again.params["code"]  # approved before for this host: no page
    elsewhere = stack.sign_in_as_person(
        stack.authorization(client_id, redirect_uri="https://other.example/cb"), consent=""
    )
    # Stopped at the consent page, naming the new host: nothing has gone to it.
    assert elsewhere.person.saw("other.example")
    assert elsewhere.landed.startswith(f"{STACK}/oauth/callback")
    assert not any((s.location or "").startswith("https://other.example") for s in elsewhere.person.steps)
