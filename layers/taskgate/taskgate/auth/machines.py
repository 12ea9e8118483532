"""Machine callers at this stack's authorization server: the client-credentials grant (RFC 6749
§4.4), as MCP clients find it from a 401 (mcp 1.30.0's ``ClientCredentialsOAuthProvider`` and
``PrivateKeyJWTOAuthProvider``).

Only clients the deployer created may use it, never one that registered itself (dynamic
registration, a metadata document):

- **secret clients**, kept by the upstream issuer: the ids in ``OAUTH_CLIENT_IDS`` (the stack's
  own ``AgentClient`` among them). They authenticate with ``client_secret_basic`` or
  ``client_secret_post``; the stack has no copy of the secret, so it asks the issuer's token
  endpoint for a client-credentials token with it (Cognito bills that request) and, given one,
  mints its own. The caller owns its tasks as ``<issuer>#<client id>``, as with the issuer's
  own token.
- **key clients**, registered with the stack: a client id and where its public keys are
  (``OAUTH_CLIENT_KEYS``: ``id=https://…/jwks.json`` or ``id=/path/to/jwks.json``, a file the
  deployer ships, e.g. in their tools package). They authenticate with ``private_key_jwt``
  (RFC 7523 §2.2), checked here with Authlib and joserfc (Cognito's token endpoint takes only
  secrets): ``iss`` and ``sub`` the client id; ``aud`` this server's issuer (what
  draft-ietf-oauth-rfc7523bis and mcp 1.30.0 use) or its token endpoint (RFC 7523 §3), one
  value; ``exp`` at most 5 minutes ahead (with the 60 s clock leeway); a ``jti`` used once,
  remembered in the task table until the assertion expires, so a replay is refused in every
  Lambda environment. They own their tasks as ``<this issuer>#<client id>``.

Either way the token is this stack's, for the one resource asked for (RFC 8707: the HTTP API's
/mcp or the streaming endpoint's), good there only, with no refresh token (§4.4.3).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field

SECRET_METHODS = ("client_secret_basic", "client_secret_post")
KEY_METHOD = "private_key_jwt"


def is_url(location: str) -> bool:
    return location.startswith(("https://", "http://"))


@dataclass(frozen=True)
class MachineClients:
    """Who may use client_credentials here, and how each is checked."""

    secret_ids: frozenset[str] = frozenset()
    key_locations: Mapping[str, str] = field(default_factory=dict)
    # (client id, secret, scopes) -> whether the upstream issuer takes them (upstream.py)
    check_secret: Callable[[str, str, Iterable[str]], bool] = lambda *_: False
    secret_issuer: str = ""  # who names a secret client (its owner is <this>#<client id>)
    # One more secret check for the caller's address, or False past its limit: each check is
    # a request to the issuer (Cognito bills it), which a stranger guessing secrets would repeat.
    may_check: Callable[[], bool] = lambda: True

    @property
    def methods(self) -> tuple[str, ...]:
        """The token-endpoint authentication methods machine clients have here."""
        return (SECRET_METHODS if self.secret_ids else ()) + ((KEY_METHOD,) if self.key_locations else ())

    def __bool__(self) -> bool:
        return bool(self.methods)
