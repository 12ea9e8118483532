"""Which access tokens /mcp accepts, checked with joserfc (JWS, JWK, claims).

Only access tokens issued for this endpoint, from one of two issuers:

- ``OwnTokens`` (AuthMode USER): the tokens this stack's authorization server issues to the
  people who sign in through it. HS256 with the stack's key (signing.py), ``typ: at+jwt``
  (RFC 9068), ``iss`` the stack's issuer, ``aud`` exactly this endpoint's resource URL (RFC
  8707: a token a client obtained for another resource is refused, the stack's other
  endpoint included: the HTTP API's /mcp and the streaming endpoint's each take their own),
  ``idp`` the upstream issuer that signed the person in.
- ``IssuerTokens`` (AuthMode CLIENT): access tokens the upstream issuer minted itself, such
  as a Cognito client-credentials token for an agent. Its keys (jwks.py), an asymmetric
  algorithm, and an audience check that keeps audiences and client ids apart: a token with
  ``aud`` must name this resource (or a configured audience); one without (Cognito's access
  tokens) must name a configured client in ``client_id``. A client id is never taken as an
  audience, because an OpenID Connect ID token's ``aud`` is exactly its client's id.

ID tokens are refused by either: ``token_use`` other than ``access`` (Cognito), an ID
token's own claims (``nonce``, ``at_hash``, ``c_hash``), a ``typ`` that is not a JWT access
token's. The order of the checks is the order of their cost: size, shape, header and
claims before any key is looked up, so junk never causes a fetch of keys (jwks.py).

This module (and joserfc, and cryptography under it) is imported when the first request
carrying a token is checked: a 401, and a deployment without sign-in, never load it.
"""

from __future__ import annotations

import json
import secrets
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from joserfc import jws
from joserfc.errors import ExpiredTokenError, InvalidClaimError, JoseError, MissingClaimError
from joserfc.jwt import JWTClaimsRegistry

from .jwks import ACCEPTED_ALGORITHMS, IssuerKeys
from .signing import ALGORITHM as OWN_ALGORITHM
from .signing import SigningKeys
from .tokens import AccessToken, TokenError

if TYPE_CHECKING:
    from joserfc.jwk import Key
    from joserfc.jws import CompactSignature

MAX_TOKEN_BYTES = 16 * 1024  # far above any real access token; bounds the work done on junk
ACCESS_TOKEN_TYP = frozenset({"at+jwt", "application/at+jwt"})  # RFC 9068 §2.1
ISSUER_TYP = ACCESS_TOKEN_TYP | {"jwt"}  # many issuers (Cognito among them) say JWT, or nothing
ID_TOKEN_CLAIMS = ("nonce", "at_hash", "c_hash", "s_hash")


@dataclass(frozen=True)
class Parsed:
    """A compact JWS, split and decoded but not yet trusted."""

    signed: CompactSignature
    header: dict[str, Any]
    claims: dict[str, Any]

    @property
    def kid(self) -> str:
        kid = self.header.get("kid")
        if not isinstance(kid, str) or not kid:
            raise TokenError("token without a key id (kid)")
        return kid


def parse(token: str) -> Parsed:
    if len(token) > MAX_TOKEN_BYTES:
        raise TokenError("token too large")
    try:
        signed = jws.extract_compact(token.encode("ascii"))
        claims = json.loads(signed.payload or b"")
    except (JoseError, UnicodeError, ValueError, RecursionError, TypeError) as error:
        raise TokenError("malformed token: not a JWS compact serialization") from error
    if not isinstance(claims, dict):
        raise TokenError("malformed token: the payload is not a JSON object")
    header = signed.headers()
    if "crit" in header:
        raise TokenError("unsupported critical header")
    return Parsed(signed, header, claims)


def _typ(header: Mapping[str, Any]) -> str | None:
    typ = header.get("typ")
    return typ.lower() if isinstance(typ, str) else None


def _check_times(claims: dict[str, Any], now: int, leeway: int) -> int:
    """exp (required), nbf and iat, with ``leeway`` seconds of clock skew."""
    registry = JWTClaimsRegistry(now=now, leeway=leeway, exp={"essential": True})
    try:
        registry.validate({k: claims[k] for k in ("exp", "nbf", "iat") if k in claims})
    except MissingClaimError as error:
        raise TokenError("token without expiry") from error
    except ExpiredTokenError as error:
        raise TokenError("token expired") from error
    except InvalidClaimError as error:
        raise TokenError(f"token not yet valid or malformed ({error.description})") from error
    return int(claims["exp"])


def _verify_signature(parsed: Parsed, key: Key, algorithm: str) -> None:
    try:
        valid = jws.validate_compact(parsed.signed, key, algorithms=[algorithm])
    except JoseError as error:
        raise TokenError("bad token signature") from error
    if not valid:
        raise TokenError("bad token signature")


def _scopes(claims: Mapping[str, Any]) -> frozenset[str]:
    raw = claims.get("scope", claims.get("scp", ""))
    if isinstance(raw, str):
        return frozenset(raw.split())
    return frozenset(s for s in raw if isinstance(s, str)) if isinstance(raw, list) else frozenset()


def _audience(claims: Mapping[str, Any]) -> tuple[str, ...]:
    aud = claims.get("aud")
    if aud is None:
        return ()
    if isinstance(aud, str):
        return (aud,)
    if isinstance(aud, list) and all(isinstance(a, str) for a in aud):
        return tuple(aud)
    raise TokenError("malformed token: aud")


def _subject(claims: Mapping[str, Any]) -> str:
    subject = claims.get("sub")
    if not isinstance(subject, str) or not subject:
        raise TokenError("token without subject")
    return subject


class OwnTokens:
    """The access tokens this stack's authorization server issues (AuthMode USER). ``resource``
    is the one this server accepts; the authorization server mints them for any of the
    stack's (``audience``)."""

    def __init__(
        self,
        *,
        issuer: str,
        resource: str,
        keys: SigningKeys,
        leeway: int = 60,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.issuer = issuer
        self.resource = resource
        self._keys = keys
        self._leeway = leeway
        self._clock = clock

    def mint(
        self,
        *,
        subject: str,
        identity_issuer: str,
        client_id: str,
        scope: Iterable[str],
        ttl_seconds: int,
        audience: str | None = None,
    ) -> tuple[str, int]:
        """A signed access token for ``audience`` (this resource when not given), and when it
        expires."""
        from joserfc import jwt

        kid, key = self._keys.current()
        now = int(self._clock())
        claims = {
            "iss": self.issuer,
            "sub": subject,
            "aud": audience or self.resource,
            "client_id": client_id,
            "scope": " ".join(scope),
            "idp": identity_issuer,
            "iat": now,
            "exp": now + ttl_seconds,
            "jti": secrets.token_urlsafe(16),
        }
        header = {"alg": OWN_ALGORITHM, "kid": kid}
        return jwt.encode(
            header, claims, key, algorithms=[OWN_ALGORITHM], default_type="at+jwt"
        ), now + ttl_seconds

    def verify(self, parsed: Parsed) -> AccessToken:
        if parsed.header.get("alg") != OWN_ALGORITHM:
            raise TokenError("unsupported token algorithm")
        if _typ(parsed.header) not in ACCESS_TOKEN_TYP:
            raise TokenError("not an access token (typ)")
        claims = parsed.claims
        expires_at = _check_times(claims, int(self._clock()), self._leeway)
        audience = _audience(claims)
        if self.resource not in audience:
            raise TokenError("token not issued for this resource (audience)")
        subject = _subject(claims)
        identity_issuer, client_id = claims.get("idp"), claims.get("client_id")
        if not isinstance(identity_issuer, str) or not isinstance(client_id, str):
            raise TokenError("malformed token: idp, client_id")
        _verify_signature(parsed, self._keys.by_kid(parsed.kid), OWN_ALGORITHM)
        return AccessToken(
            issuer=self.issuer,
            subject=subject,
            client_id=client_id,
            scopes=_scopes(claims),
            audience=audience,
            expires_at=expires_at,
            claims=claims,
            identity_issuer=identity_issuer,
        )


class IssuerTokens:
    """Access tokens the upstream issuer minted for this endpoint (AuthMode CLIENT)."""

    def __init__(
        self,
        *,
        issuer: str,
        audiences: Iterable[str],
        client_ids: Iterable[str],
        keys: IssuerKeys,
        token_use: str | None = None,
        leeway: int = 60,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.issuer = issuer
        self.audiences = frozenset(audiences)
        self.client_ids = frozenset(client_ids)
        if self.audiences & self.client_ids:
            raise ValueError("a client id is not an audience: an ID token's aud is its client's id")
        self._keys = keys
        self._token_use = token_use
        self._leeway = leeway
        self._clock = clock

    def verify(self, parsed: Parsed) -> AccessToken:
        algorithm = parsed.header.get("alg")
        if algorithm not in ACCEPTED_ALGORITHMS:
            raise TokenError("unsupported token algorithm")
        if "typ" in parsed.header and _typ(parsed.header) not in ISSUER_TYP:
            raise TokenError("not an access token (typ)")
        claims = parsed.claims
        expires_at = _check_times(claims, int(self._clock()), self._leeway)
        token_use = claims.get("token_use")
        if (token_use is not None and token_use != "access") or (
            self._token_use is not None and token_use != self._token_use
        ):
            raise TokenError("not an access token (token_use)")
        if any(name in claims for name in ID_TOKEN_CLAIMS) or claims.get("typ") in ("ID", "id"):
            raise TokenError("not an access token (an ID token's claims)")
        if "scope" not in claims and "scp" not in claims:
            # Access tokens of an issuer with resource scopes carry them; ID tokens never do.
            raise TokenError("not an access token (no scope)")
        audience = _audience(claims)
        client_id = claims.get("client_id")
        if audience:
            if not self.audiences.intersection(audience):
                raise TokenError("token not issued for this resource (audience)")
        elif client_id not in self.client_ids:
            raise TokenError("token not issued for this resource (no audience)")
        subject = _subject(claims)
        _verify_signature(parsed, self._keys.key(parsed.kid), str(algorithm))
        return AccessToken(
            issuer=self.issuer,
            subject=subject,
            client_id=client_id if isinstance(client_id, str) else None,
            scopes=_scopes(claims),
            audience=audience,
            expires_at=expires_at,
            claims=claims,
        )


class TokenVerifier:
    """Routes a token to the verifier of the issuer it names (checked again by that verifier,
    with the signature): tokens from any other issuer are refused before any key is fetched."""

    def __init__(self, own: OwnTokens | None = None, upstream: IssuerTokens | None = None) -> None:
        self._by_issuer: dict[str, OwnTokens | IssuerTokens] = {}
        for verifier in (upstream, own):
            if verifier is not None:
                self._by_issuer[verifier.issuer] = verifier

    def verify(self, token: str) -> AccessToken:
        parsed = parse(token)
        issuer = parsed.claims.get("iss")
        verifier = self._by_issuer.get(issuer) if isinstance(issuer, str) else None
        if verifier is None:
            raise TokenError("token from another issuer")
        return verifier.verify(parsed)


class IdTokens:
    """The ID token the upstream issuer returns when it signed a person in for this stack's
    authorization server (its callback): who that person is, for this client and this
    sign-in (``nonce``) only."""

    def __init__(
        self,
        *,
        issuer: str,
        client_id: str,
        keys: IssuerKeys,
        leeway: int = 60,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.issuer = issuer
        self.client_id = client_id
        self._keys = keys
        self._leeway = leeway
        self._clock = clock

    def verify(self, token: str, nonce: str) -> dict[str, Any]:
        parsed = parse(token)
        algorithm = parsed.header.get("alg")
        if algorithm not in ACCEPTED_ALGORITHMS:
            raise TokenError("unsupported token algorithm")
        claims = parsed.claims
        if claims.get("iss") != self.issuer:
            raise TokenError("ID token from another issuer")
        _check_times(claims, int(self._clock()), self._leeway)
        if self.client_id not in _audience(claims):
            raise TokenError("ID token for another client")
        if claims.get("token_use", "id") != "id":
            raise TokenError("not an ID token (token_use)")
        if not isinstance(claims.get("nonce"), str) or not secrets.compare_digest(claims["nonce"], nonce):
            raise TokenError("ID token for another sign-in (nonce)")
        _subject(claims)
        _verify_signature(parsed, self._keys.key(parsed.kid), str(algorithm))
        return claims
