"""Access-token verification: JWS RS256 over the issuer's JWKS, cached per instance.

Small on purpose, because it sits on a Lambda's cold-start path: the standard library
plus ``cryptography``'s RSA primitives, no JOSE library (PyJWT would also import
``cryptography.x509``, about 15 ms more). It verifies exactly one thing, a JWT access
token signed with RS256 by the configured issuer, and refuses everything else (other
algorithms, ``crit`` headers, JWE, unsigned tokens, keys under 2048 bits).

Amazon Cognito access tokens carry no ``aud``; they name the app client in
``client_id`` and say ``token_use: "access"``. A token without ``aud`` is accepted only
when its ``client_id`` is allowed (what API Gateway's JWT authorizer does), and a token
whose ``token_use`` is anything but ``access`` (a Cognito ID token) is always refused.

This module is imported only when the first token is checked: a deployment without
sign-in never loads ``cryptography``. ``urllib.request`` waits for the first key fetch.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
import threading
import time
import urllib.request
from collections.abc import Callable, Iterable, Mapping
from typing import Any
from urllib.parse import urlsplit

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import padding, rsa

from .tokens import AccessToken, SigningKeysUnavailable, TokenError

MAX_TOKEN_BYTES = 16 * 1024  # far above any real access token; bounds the work done on junk
ACCEPTED_TYP = {None, "jwt", "at+jwt", "application/at+jwt"}  # RFC 9068 §2.1 (case-insensitive)
MIN_KEY_BITS = 2048

Fetch = Callable[[str, float], bytes]

_B64URL = re.compile(r"^[A-Za-z0-9_-]+$")


def b64url_decode(part: str) -> bytes:
    # Strict: the stdlib decoder silently skips characters outside the alphabet, which would
    # let many different strings verify as the same token.
    if not _B64URL.match(part):
        raise TokenError("malformed token: bad base64url segment")
    try:
        return base64.urlsafe_b64decode(part + "=" * (-len(part) % 4))
    except (binascii.Error, ValueError) as exc:
        raise TokenError("malformed token: bad base64url segment") from exc


def b64url_encode(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _b64url_uint(value: str) -> int:
    return int.from_bytes(b64url_decode(value), "big")


def _json_object(data: bytes, what: str) -> dict[str, Any]:
    try:
        obj = json.loads(data)
    except (ValueError, RecursionError) as exc:
        raise TokenError(f"malformed token: {what} is not JSON") from exc
    if not isinstance(obj, dict):
        raise TokenError(f"malformed token: {what} is not a JSON object")
    return obj


def urllib_fetch(url: str, timeout: float) -> bytes:
    if urlsplit(url).scheme not in ("https", "http"):
        raise ValueError(f"refusing to fetch {url!r}")
    request = urllib.request.Request(url, headers={"Accept": "application/json"})
    with urllib.request.urlopen(request, timeout=timeout) as response:
        body: bytes = response.read(1024 * 1024)
        return body


def discover_jwks_uri(issuer: str, fetch: Fetch = urllib_fetch, timeout: float = 3.0) -> str:
    """The issuer's ``jwks_uri``, from its OpenID Connect discovery document or its RFC 8414
    metadata (path-appended, then path-inserted), whichever answers first with a document
    that names this very issuer."""
    parts = urlsplit(issuer)
    origin, path = f"{parts.scheme}://{parts.netloc}", parts.path.rstrip("/")
    candidates = [
        f"{issuer.rstrip('/')}/.well-known/openid-configuration",
        f"{origin}/.well-known/oauth-authorization-server{path}",
        f"{origin}/.well-known/openid-configuration{path}",
    ]
    for url in candidates:
        try:
            document = json.loads(fetch(url, timeout))
        except Exception:
            continue
        if isinstance(document, dict) and document.get("issuer") == issuer and document.get("jwks_uri"):
            return str(document["jwks_uri"])
    raise SigningKeysUnavailable(f"no discovery document for {issuer} names its jwks_uri")


class JwksCache:
    """An issuer's signing keys, fetched lazily and kept in memory (one per Lambda instance).

    A token with an unknown ``kid`` triggers a refetch (key rotation), but at most once per
    ``min_refetch_interval`` seconds, so a stream of forged kids cannot turn every request
    into an outbound call. Keys are also refetched after ``max_age`` seconds, and kept through
    an outage of the issuer. ``jwks_uri`` may be a function (discovery, on first use).
    Thread-safe: a local server verifies on several threads.
    """

    def __init__(
        self,
        jwks_uri: str | Callable[[], str],
        *,
        fetch: Fetch = urllib_fetch,
        timeout: float = 3.0,
        min_refetch_interval: float = 60.0,
        max_age: float = 24 * 3600.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._jwks_uri = jwks_uri
        self._fetch = fetch
        self._timeout = timeout
        self._min_refetch_interval = min_refetch_interval
        self._max_age = max_age
        self._clock = clock
        self._keys: dict[str, rsa.RSAPublicKey] = {}
        self._fetched_at: float | None = None
        self._last_attempt: float | None = None
        self._lock = threading.Lock()

    def key(self, kid: str | None) -> rsa.RSAPublicKey:
        with self._lock:
            now = self._clock()
            if self._fetched_at is None or now - self._fetched_at > self._max_age:
                self._refresh(now)
            found = self._lookup(kid)
            if found is None and self._may_refetch(now):
                self._refresh(now)  # unknown kid: perhaps the issuer rotated its keys
                found = self._lookup(kid)
            if found is None:
                raise TokenError("token signed with an unknown key")
            return found

    def _may_refetch(self, now: float) -> bool:
        return self._last_attempt is None or now - self._last_attempt >= self._min_refetch_interval

    def _lookup(self, kid: str | None) -> rsa.RSAPublicKey | None:
        if kid is None:  # a JWKS with a single key may be used without kid
            return next(iter(self._keys.values())) if len(self._keys) == 1 else None
        return self._keys.get(kid)

    def _refresh(self, now: float) -> None:
        if self._keys and not self._may_refetch(now):
            return
        self._last_attempt = now
        try:
            if callable(self._jwks_uri):
                self._jwks_uri = self._jwks_uri()
            keys = self.parse(json.loads(self._fetch(self._jwks_uri, self._timeout)))
        except Exception as exc:
            if not self._keys:
                raise SigningKeysUnavailable(f"the issuer's keys could not be fetched: {exc}") from exc
            return  # keep the keys we have; try again after the refetch interval
        self._keys = keys
        self._fetched_at = now

    @staticmethod
    def parse(document: Mapping[str, Any]) -> dict[str, rsa.RSAPublicKey]:
        keys: dict[str, rsa.RSAPublicKey] = {}
        for index, jwk in enumerate(document.get("keys") or []):
            if not isinstance(jwk, dict) or jwk.get("kty") != "RSA":
                continue
            if jwk.get("use", "sig") != "sig" or jwk.get("alg", "RS256") != "RS256":
                continue
            try:
                key = rsa.RSAPublicNumbers(_b64url_uint(jwk["e"]), _b64url_uint(jwk["n"])).public_key()
            except (KeyError, TypeError, ValueError, TokenError):
                continue
            if key.key_size < MIN_KEY_BITS:
                continue
            keys[str(jwk.get("kid", f"#{index}"))] = key
        return keys


class JwtVerifier:
    """Verifies RS256 JWT access tokens for one resource server.

    Checks, in order: size and shape; header (``alg`` RS256 only, no ``crit``, ``typ`` JWT or
    at+jwt); signature against the issuer's JWKS; ``iss`` (exact); ``exp`` (required);
    ``nbf``/``iat`` (``leeway`` seconds of clock skew); audience; ``token_use``; ``sub``.

    Audience: the token's ``aud`` must contain one of ``audiences`` (this server's resource
    URL, RFC 8707/9068, and any configured). A token *without* ``aud`` is accepted only if its
    ``client_id`` is in ``client_ids`` (Cognito access tokens).
    """

    def __init__(
        self,
        *,
        issuer: str,
        audiences: Iterable[str],
        jwks: JwksCache,
        client_ids: Iterable[str] = (),
        require_token_use: str | None = None,
        leeway: int = 60,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.issuer = issuer
        self.audiences = frozenset(audiences)
        self.client_ids = frozenset(client_ids)
        self.jwks = jwks
        self.require_token_use = require_token_use
        self.leeway = leeway
        self._clock = clock
        if not self.audiences and not self.client_ids:
            raise ValueError("configure audiences and/or client ids: a token must be checked as ours")

    def verify(self, token: str) -> AccessToken:
        if len(token) > MAX_TOKEN_BYTES:
            raise TokenError("token too large")
        parts = token.split(".")
        if len(parts) != 3:
            raise TokenError("malformed token: not a JWS compact serialization")
        header = _json_object(b64url_decode(parts[0]), "header")
        if header.get("alg") != "RS256":
            raise TokenError("unsupported token algorithm")
        if "crit" in header:
            raise TokenError("unsupported critical header")
        typ = header.get("typ")
        if (typ.lower() if isinstance(typ, str) else typ) not in ACCEPTED_TYP:
            raise TokenError("not an access token (typ)")
        kid = header.get("kid")
        if kid is not None and not isinstance(kid, str):
            raise TokenError("malformed token: kid")
        signature = b64url_decode(parts[2])
        key = self.jwks.key(kid)
        try:
            key.verify(
                signature, f"{parts[0]}.{parts[1]}".encode("ascii"), padding.PKCS1v15(), hashes.SHA256()
            )
        except (InvalidSignature, UnicodeEncodeError) as exc:
            raise TokenError("bad token signature") from exc
        return self._check_claims(_json_object(b64url_decode(parts[1]), "payload"))

    def _check_claims(self, claims: dict[str, Any]) -> AccessToken:
        if claims.get("iss") != self.issuer:
            raise TokenError("token from another issuer")
        exp = self._check_times(claims)
        audience = self._check_audience(claims)
        token_use = claims.get("token_use")
        if (token_use is not None and token_use != "access") or (
            self.require_token_use is not None and token_use != self.require_token_use
        ):
            raise TokenError("not an access token (token_use)")
        subject = claims.get("sub")
        if not isinstance(subject, str) or not subject:
            raise TokenError("token without subject")
        raw_scope = claims.get("scope", claims.get("scp", ""))
        scopes = (
            raw_scope.split() if isinstance(raw_scope, str) else [s for s in raw_scope if isinstance(s, str)]
        )
        client_id = claims.get("client_id", claims.get("azp"))
        return AccessToken(
            issuer=self.issuer,
            subject=subject,
            client_id=client_id if isinstance(client_id, str) else None,
            scopes=frozenset(scopes),
            audience=audience,
            expires_at=int(exp),
            claims=claims,
        )

    def _check_times(self, claims: dict[str, Any]) -> float:
        """``exp``, once the token is within its validity window (with leeway)."""
        now = self._clock()
        exp = claims.get("exp")
        if not isinstance(exp, int | float) or isinstance(exp, bool):
            raise TokenError("token without expiry")
        if now >= exp + self.leeway:
            raise TokenError("token expired")
        for name in ("nbf", "iat"):
            value = claims.get(name)
            if value is not None and (not isinstance(value, int | float) or value > now + self.leeway):
                raise TokenError(f"token not yet valid ({name})")
        return exp

    def _check_audience(self, claims: dict[str, Any]) -> tuple[str, ...]:
        """The token's audiences, one of them ours; or none, for a client known to send none."""
        aud = claims.get("aud")
        if aud is None:
            if claims.get("client_id") not in self.client_ids:
                raise TokenError("token not issued for this resource (no audience)")
            return ()
        audience = (aud,) if isinstance(aud, str) else tuple(a for a in aud if isinstance(a, str))
        if not self.audiences.intersection(audience):
            raise TokenError("token not issued for this resource (audience)")
        return audience
