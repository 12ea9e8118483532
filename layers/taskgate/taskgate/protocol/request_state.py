"""Sealed ``requestState`` for multi-round-trip requests (MCP 2026-07-28, SEP-2322).

A plain ``tools/call`` that asks the client something ends with an ``InputRequiredResult``;
the client answers by calling again. What the server must remember between the rounds
(answers already given, a tool's ``ctx.checkpoint`` state) travels in ``requestState``,
which the client echoes back. The specification treats that echo as attacker-controlled,
so the state is sealed: AES-256-GCM (confidential and authenticated), with claims checked
on every echo:

- the caller's identity (the owner the authorizer gave), so alice's state is refused for bob;
- an expiry (``REQUEST_STATE_TTL_SECONDS``);
- the request it belongs to: the method, the tool and a digest of its arguments.

Tokens are ``tg1.`` + base64url(key id ‖ nonce ‖ ciphertext); the prefix and the key id
are authenticated too. The key is derived (HKDF-SHA256) from a secret every Lambda
instance reads once (the stack's Secrets Manager secret); the local runtime makes its
own. ``cryptography`` is imported only here, on first use: most requests never seal.
Refusals say only "Invalid or expired requestState" (-32602); the reason goes to the log.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import logging
import os
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from ..codes import INVALID_PARAMS
from ..domain.ports import Clock
from .errors import RpcError

logger = logging.getLogger(__name__)

PREFIX = "tg1."
_KDF_INFO = b"taskgate/request-state/v1/aes-256-gcm"
_KID_LEN = 4
_NONCE_LEN = 12
_TAG_LEN = 16
# A state from the future by more than this is refused (clocks of instances drift a little).
_SKEW_MS = 60_000
# A sanity bound only: the request body limit (MAX_BODY_BYTES) bounds a token first.
MAX_TOKEN_CHARS = 8 * 1024 * 1024

KeySource = Callable[[], Sequence[bytes]]


@dataclass(frozen=True)
class Carried:
    """What one round hands the next: answers already given, and the tool's saved state."""

    answers: dict[str, Any]
    state: Any = None

    @property
    def empty(self) -> bool:
        return not self.answers and self.state is None


NOTHING = Carried({})


class InvalidState(Exception):
    """Why a token was refused (for the log only)."""


def _b64u(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode("ascii").rstrip("=")


def _b64u_decode(text: str) -> bytes:
    raw = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    if _b64u(raw) != text:
        # Only the canonical encoding: no second spelling of the same token.
        raise ValueError("non-canonical base64url")
    return raw


def _digest(value: Any) -> str:
    canonical = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return _b64u(hashlib.sha256(canonical.encode()).digest()[:16])


def _principal(owner: str) -> str:
    # The owner never travels in the token, not even encrypted: a digest is enough to compare.
    return _b64u(
        hashlib.sha256(b"taskgate/request-state/owner:" + owner.encode("utf-8", "surrogatepass")).digest()[
            :16
        ]
    )


class _Ring:
    """AES-GCM under one or more keys: the first seals, every one opens (rotation)."""

    def __init__(self, secrets: Sequence[bytes]) -> None:
        from cryptography.hazmat.primitives.ciphers.aead import AESGCM
        from cryptography.hazmat.primitives.hashes import SHA256
        from cryptography.hazmat.primitives.kdf.hkdf import HKDF

        if not secrets:
            raise ValueError("request state needs at least one key")
        self._aeads: dict[bytes, Any] = {}
        self._seal_kid = b""
        for i, secret in enumerate(secrets):
            if len(secret) < 32:
                raise ValueError("a request-state secret must have at least 32 bytes")
            key = HKDF(algorithm=SHA256(), length=32, salt=None, info=_KDF_INFO).derive(secret)
            kid = hashlib.sha256(b"taskgate/request-state/kid:" + key).digest()[:_KID_LEN]
            self._aeads[kid] = AESGCM(key)
            if i == 0:
                self._seal_kid = kid

    def seal(self, payload: bytes) -> str:
        nonce = os.urandom(_NONCE_LEN)
        sealed = self._aeads[self._seal_kid].encrypt(nonce, payload, PREFIX.encode() + self._seal_kid)
        return PREFIX + _b64u(self._seal_kid + nonce + sealed)

    def open(self, token: str) -> bytes:
        from cryptography.exceptions import InvalidTag

        if not token.startswith(PREFIX):
            raise InvalidState("malformed")
        try:
            raw = _b64u_decode(token[len(PREFIX) :])
        except ValueError as exc:
            raise InvalidState("malformed") from exc
        if len(raw) < _KID_LEN + _NONCE_LEN + _TAG_LEN:
            raise InvalidState("malformed")
        kid, nonce, sealed = (
            raw[:_KID_LEN],
            raw[_KID_LEN : _KID_LEN + _NONCE_LEN],
            raw[_KID_LEN + _NONCE_LEN :],
        )
        aead = self._aeads.get(kid)
        if aead is None:
            raise InvalidState("unknown key")
        try:
            return aead.decrypt(nonce, sealed, PREFIX.encode() + kid)  # type: ignore[no-any-return]
        except InvalidTag:
            raise InvalidState("seal") from None


def refused() -> RpcError:
    return RpcError(INVALID_PARAMS, "Invalid or expired requestState")


class RequestStates:
    """Seals and opens ``requestState``. ``keys`` is called once, on first use."""

    def __init__(self, keys: KeySource, *, ttl_ms: int, clock: Clock) -> None:
        self._keys = keys
        self._ttl_ms = ttl_ms
        self._clock = clock
        self._ring: _Ring | None = None
        self._lock = threading.Lock()

    def _get_ring(self) -> _Ring:
        if self._ring is None:
            with self._lock:
                if self._ring is None:
                    self._ring = _Ring(self._keys())
        return self._ring

    def seal(
        self,
        carried: Carried,
        *,
        owner: str,
        method: str,
        target: str,
        arguments: Any,
        ttl_ms: int | None = None,
    ) -> str:
        """``ttl_ms``: how long it stays valid, when not REQUEST_STATE_TTL_SECONDS."""
        now = self._clock()
        claims = {
            "v": 1,
            "iat": now,
            "exp": now + (ttl_ms if ttl_ms is not None else self._ttl_ms),
            "p": _principal(owner),
            "m": method,
            "t": target,
            "a": _digest(arguments),
            "r": carried.answers,
            "s": carried.state,
        }
        payload = json.dumps(claims, separators=(",", ":"), ensure_ascii=True).encode()
        return self._get_ring().seal(payload)

    def open(self, token: Any, *, owner: str, method: str, target: str, arguments: Any) -> Carried:
        """What ``token`` carries, if it is ours, unexpired, for this caller and this request."""
        try:
            return self._verify(token, owner, method, target, arguments)
        except InvalidState as exc:
            logger.warning("requestState refused on %s %s: %s", method, target, exc)
            raise refused() from None

    def _verify(self, token: Any, owner: str, method: str, target: str, arguments: Any) -> Carried:
        if not isinstance(token, str) or not token or len(token) > MAX_TOKEN_CHARS:
            raise InvalidState("not a token")
        try:
            claims = json.loads(self._get_ring().open(token))
        except ValueError as exc:
            raise InvalidState("malformed payload") from exc
        if not isinstance(claims, dict) or claims.get("v") != 1:
            raise InvalidState("malformed payload")
        now = self._clock()
        iat, exp = claims.get("iat"), claims.get("exp")
        if not isinstance(iat, int) or iat > now + _SKEW_MS:
            raise InvalidState("minted in the future")
        if not isinstance(exp, int) or now >= exp:
            raise InvalidState("expired")
        principal = claims.get("p")
        if not isinstance(principal, str) or not hmac.compare_digest(principal, _principal(owner)):
            raise InvalidState("another caller's state")
        if claims.get("m") != method or claims.get("t") != target or claims.get("a") != _digest(arguments):
            raise InvalidState("another request's state")
        answers = claims.get("r")
        if not isinstance(answers, dict):
            raise InvalidState("malformed payload")
        return Carried(answers, claims.get("s"))


def ephemeral_keys() -> Sequence[bytes]:
    """A key made now and held only by this process: for a single local server.
    Every Lambda instance must share one instead (the stack's secret)."""
    return [os.urandom(32)]
