"""An issuer's metadata and signing keys, fetched when first needed and kept in memory.

A failing issuer must not turn every request into an outbound call, nor make requests wait
on each other: ``Throttled`` fetches at most once per interval (doubling the interval after
each failure, up to a cap), only one caller fetches at a time, and every other caller gets
what is already there at once (nothing, before the first success: a 503 to be retried).
Junk never reaches it: tokens are parsed and their claims checked before a key is looked
up (jwt.py). Thread-safe: the local server verifies on several threads.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from .outbound import Transport, get_json, urllib_transport
from .tokens import SigningKeysUnavailable, TokenError

if TYPE_CHECKING:
    from joserfc.jwk import Key

ACCEPTED_ALGORITHMS = ("RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512")
MIN_RSA_BITS = 2048


class Throttled[T]:
    """A value loaded from elsewhere, kept, and loaded again at most once per ``interval``
    seconds (after a failure, twice the wait of the one before, up to ``max_backoff``)."""

    def __init__(
        self,
        load: Callable[[], T],
        *,
        interval: float = 30.0,
        max_backoff: float = 600.0,
        max_age: float | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._load = load
        self._interval = interval
        self._max_backoff = max_backoff
        self._max_age = max_age
        self._clock = clock
        self._lock = threading.Lock()
        self._value: T | None = None
        self._loaded_at = 0.0
        self._next_attempt: float | None = None
        self._failures = 0
        self._loading = False
        self.attempts = 0
        self.last_error: Exception | None = None

    def get(self, *, refresh: bool = False) -> T | None:
        """The value, loading it first when there is none, it is older than ``max_age``, or
        ``refresh`` asks (a key id not seen yet), and a load is due. Never waits for another
        caller's load: while one runs, or before the next is due, the value as it is."""
        with self._lock:
            now = self._clock()
            stale = self._value is None or (
                self._max_age is not None and now - self._loaded_at > self._max_age
            )
            due = self._next_attempt is None or now >= self._next_attempt
            if not (stale or refresh) or not due or self._loading:
                return self._value
            self._loading = True
            self.attempts += 1
        try:
            value = self._load()
        except Exception as error:
            with self._lock:
                self._loading = False
                self._failures += 1
                wait = min(self._interval * 2 ** (self._failures - 1), self._max_backoff)
                self._next_attempt = now + wait
                self.last_error = error
                return self._value
        with self._lock:
            self._loading = False
            self._failures = 0
            self._value, self._loaded_at = value, now
            self._next_attempt = now + self._interval
            self.last_error = None
            return value


def metadata_urls(issuer: str) -> list[str]:
    """Where an issuer's metadata may be: OpenID Connect discovery (path-appended, Cognito's
    only one), then RFC 8414 (path-inserted), then OIDC path-inserted."""
    parts = urlsplit(issuer)
    origin, path = f"{parts.scheme}://{parts.netloc}", parts.path.rstrip("/")
    return [
        f"{issuer.rstrip('/')}/.well-known/openid-configuration",
        f"{origin}/.well-known/oauth-authorization-server{path}",
        f"{origin}/.well-known/openid-configuration{path}",
    ]


def discover(issuer: str, transport: Transport = urllib_transport, timeout: float = 3.0) -> dict[str, Any]:
    """The first metadata document that names this very issuer (RFC 8414 §3.3). Only a 404
    moves on to the next place: an issuer that fails otherwise is asked nothing more now."""
    problems: list[str] = []
    for url in metadata_urls(issuer):
        status, body = transport("GET", url, None, {"Accept": "application/json"}, timeout)
        if status == 404:
            problems.append(f"{url}: HTTP 404")
            continue
        if status != 200:
            raise SigningKeysUnavailable(f"{url}: HTTP {status}")
        try:
            document = json.loads(body)
        except ValueError as error:
            raise SigningKeysUnavailable(f"{url}: not JSON") from error
        if isinstance(document, dict) and document.get("issuer") == issuer:
            return document
        problems.append(f"{url} names another issuer")
    raise SigningKeysUnavailable(f"no metadata document for {issuer}: {'; '.join(problems)}")


def parse_key_set(document: dict[str, Any]) -> dict[str, Key]:
    """Signing keys by kid; keys for other uses, algorithms or too short are left out."""
    from joserfc.errors import JoseError
    from joserfc.jwk import ECKey, RSAKey

    keys: dict[str, Key] = {}
    for jwk in document.get("keys") or []:
        if not isinstance(jwk, dict) or not isinstance(jwk.get("kid"), str):
            continue
        if jwk.get("use", "sig") != "sig" or jwk.get("alg", "RS256") not in ACCEPTED_ALGORITHMS:
            continue
        public = {k: v for k, v in jwk.items() if k not in ("d", "p", "q", "dp", "dq", "qi")}
        try:
            if jwk.get("kty") == "RSA":
                rsa = RSAKey.import_key(public)
                if rsa.raw_value.key_size < MIN_RSA_BITS:
                    continue
                keys[jwk["kid"]] = rsa
            elif jwk.get("kty") == "EC":
                keys[jwk["kid"]] = ECKey.import_key(public)
        except (JoseError, ValueError, TypeError):
            continue
    return keys


class IssuerKeys:
    """An issuer's signing keys (its JWKS, found through its metadata unless given)."""

    def __init__(
        self,
        issuer: str,
        *,
        jwks_uri: str = "",
        metadata: Throttled[dict[str, Any]] | None = None,
        transport: Transport = urllib_transport,
        timeout: float = 3.0,
        interval: float = 30.0,
        max_age: float = 24 * 3600.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.issuer = issuer
        self._jwks_uri = jwks_uri
        self._metadata = metadata
        self._transport = transport
        self._timeout = timeout
        self.keys = Throttled(self._load, interval=interval, max_age=max_age, clock=clock)

    def _load(self) -> dict[str, Key]:
        uri = self._jwks_uri
        if not uri:
            document = (
                self._metadata.get() if self._metadata is not None else discover(self.issuer, self._transport)
            )
            if document is None or not document.get("jwks_uri"):
                raise SigningKeysUnavailable(
                    f"the metadata of {self.issuer} is unavailable or names no jwks_uri"
                )
            uri = str(document["jwks_uri"])
        return parse_key_set(get_json(self._transport, uri, self._timeout))

    def key(self, kid: str) -> Key:
        known = self.keys.get()
        if known is not None and kid in known:
            return known[kid]
        known = self.keys.get(refresh=True)  # perhaps the issuer rotated its keys
        if known is None:
            raise SigningKeysUnavailable(f"the signing keys of {self.issuer} are unavailable")
        if kid not in known:
            raise TokenError("token signed with an unknown key")
        return known[kid]
