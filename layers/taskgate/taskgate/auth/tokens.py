"""A verified access token, and the two ways a request's token is refused."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol


class TokenError(Exception):
    """The token is missing, malformed, unverifiable or not for us: HTTP 401 ``invalid_token``."""

    error = "invalid_token"
    status = 401

    def __init__(self, description: str) -> None:
        super().__init__(description)
        self.description = description


class InsufficientScope(TokenError):
    """A valid token without the scopes this request needs: HTTP 403 ``insufficient_scope``."""

    error = "insufficient_scope"
    status = 403

    def __init__(self, description: str, required: Iterable[str]) -> None:
        super().__init__(description)
        self.required = tuple(sorted(set(required)))


class SigningKeysUnavailable(Exception):
    """The issuer's keys cannot be had (its JWKS or discovery is unreachable, and none are
    cached): the token cannot be checked either way. HTTP 503, to be retried; not a 401,
    which would send the client through sign-in again for nothing."""


@dataclass(frozen=True)
class AccessToken:
    """The verified claims of an access token, with the fields a resource server uses."""

    issuer: str
    subject: str
    client_id: str | None
    scopes: frozenset[str]
    audience: tuple[str, ...]
    expires_at: int
    claims: Mapping[str, Any] = field(repr=False)
    # The issuer that names the caller: the token's own, or, for a token this stack's
    # authorization server issued, the upstream issuer that signed the person in. Owners are
    # "<that issuer>#<sub>", so a user keeps their tasks whether they signed in through this
    # stack or (before it) at the issuer directly, and whatever the stack's public URL.
    identity_issuer: str = ""

    @property
    def owner_claims(self) -> dict[str, Any]:
        """What API Gateway's JWT authorizer would pass on: the claims the owner is made of
        (protocol/wire/identity.py reads ``iss`` and ``sub``) with the token's client and scopes."""
        return {
            "iss": self.identity_issuer or self.issuer,
            "sub": self.subject,
            "client_id": self.client_id,
            "scope": " ".join(sorted(self.scopes)),
        }

    def require_scopes(self, required: Iterable[str]) -> None:
        wanted = set(required)
        missing = wanted - self.scopes
        if missing:
            raise InsufficientScope(f"token lacks scope(s): {' '.join(sorted(missing))}", wanted)


class Verifier(Protocol):
    def verify(self, token: str) -> AccessToken:
        """The token's verified claims; raise TokenError if it is not good for us."""
