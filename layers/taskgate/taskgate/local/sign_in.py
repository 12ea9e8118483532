"""``make serve-signin``: the whole sign-in on one machine. The local server runs as a
deployed stack with ``AuthMode=USER,CLIENT`` does (its own authorization server, dynamic
registration, metadata documents, consent), against the Cognito-shaped development identity
provider (dev_idp.py) on the next port, so any MCP host can sign in to a local server.

Also the one place the tests' allowance for Client ID Metadata Documents lives: an
end-to-end test serves its document on 127.0.0.1 with a certificate of its own, which the
guarded fetch refuses (a private address, an unknown CA) unless told otherwise by
``TASKGATE_TEST_CIMD_ALLOW`` (``host:port,…``) and ``TASKGATE_TEST_CIMD_CA`` (a PEM file).
Nothing outside taskgate/local reads them, and the built layer has no taskgate/local.
"""

from __future__ import annotations

import dataclasses
import os
import ssl
from collections.abc import MutableMapping

from ..auth.build import SignInPorts
from ..auth.cimd import GuardedFetch
from ..root import Taskgate
from .dev_idp import (
    AGENT_CLIENT,
    AGENT_SECRET,
    DEV_PASSWORD,
    DEV_USER,
    SIGN_IN_CLIENT,
    DevIdentityProvider,
    local_provider,
)

TEST_CIMD_ALLOW = "TASKGATE_TEST_CIMD_ALLOW"
TEST_CIMD_CA = "TASKGATE_TEST_CIMD_CA"


def prepare(environ: MutableMapping[str, str], host: str, port: int, idp_port: int) -> DevIdentityProvider:
    """The development provider, and the settings that point the server at it (any the
    caller set already are kept)."""
    public = environ.setdefault("PUBLIC_URL", f"http://{host}:{port}")
    provider = local_provider(f"http://{host}:{idp_port}", f"{public}/oauth/callback")
    for name, value in {
        "AUTH_MODE": "USER,CLIENT",
        "OAUTH_ISSUER": provider.issuer,
        "OAUTH_UPSTREAM_CLIENT_ID": SIGN_IN_CLIENT,
        "OAUTH_CLIENT_IDS": AGENT_CLIENT,
        "OAUTH_TOKEN_USE": "access",
    }.items():
        environ.setdefault(name, value)
    return provider


def banner(provider: DevIdentityProvider, public_url: str) -> str:
    return (
        f"sign-in: {public_url}/.well-known/oauth-authorization-server (dynamic registration,"
        " metadata documents, consent)\n"
        f"  development user pool {provider.issuer}: sign in as {DEV_USER} / {DEV_PASSWORD}\n"
        f"  machine client: client credentials {AGENT_CLIENT} / {AGENT_SECRET}, by the MCP flow from the 401"
        f" (issuer {public_url}) or at {provider.base_url}/oauth2/token (issuer {provider.issuer});"
        " key clients: OAUTH_CLIENT_KEYS=<client id>=<JWKS file or URL>"
    )


def test_documents_fetch(environ: MutableMapping[str, str]) -> GuardedFetch | None:
    allow = frozenset(h.strip() for h in environ.get(TEST_CIMD_ALLOW, "").split(",") if h.strip())
    ca = environ.get(TEST_CIMD_CA, "")
    if not allow and not ca:
        return None
    return GuardedFetch(allow_hosts=allow, ssl_context=ssl.create_default_context(cafile=ca) if ca else None)


def with_test_documents(root: Taskgate, environ: MutableMapping[str, str] | None = None) -> Taskgate:
    """``root``, or (with the test-only settings above) the same root whose guarded fetch of
    metadata documents also reaches the test's host and trusts its certificate."""
    fetch = test_documents_fetch(os.environ if environ is None else environ)
    sign_in = root.ports.sign_in
    if fetch is None or sign_in is None:
        return root

    def ports() -> SignInPorts:
        return dataclasses.replace(sign_in(), documents_fetch=fetch)

    return Taskgate(root.settings, dataclasses.replace(root.ports, sign_in=ports))
