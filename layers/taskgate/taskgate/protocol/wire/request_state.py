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
instance reads (the stack's Secrets Manager secret: its current value seals, its previous one
still opens, so a rotation breaks no call in flight); the local runtime makes its own. An
instance reads the secret again when a state names a key it does not hold (it was rotated
since: at most once a minute) and every 15 minutes (``RotatingKeys``). The cipher
(``sealing.KeyRing``, which imports ``cryptography``) is built by the first request that seals
or opens one: most requests never do.
Refusals say only "Invalid or expired requestState" (-32602); the reason goes to the log.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import os
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ...codes import INVALID_PARAMS
from ...domain.ports import Clock
from .errors import RpcError
from .tokens import InvalidState, b64u

if TYPE_CHECKING:
    from .sealing import KeyRing

logger = logging.getLogger(__name__)

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


def _digest(value: Any) -> str:
    canonical = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return b64u(hashlib.sha256(canonical.encode()).digest()[:16])


def _principal(owner: str) -> str:
    # The owner never travels in the token, not even encrypted: a digest is enough to compare.
    return b64u(
        hashlib.sha256(b"taskgate/request-state/owner:" + owner.encode("utf-8", "surrogatepass")).digest()[
            :16
        ]
    )


def refused() -> RpcError:
    return RpcError(INVALID_PARAMS, "Invalid or expired requestState")


class RotatingKeys:
    """The key ring an instance seals and opens with, built from the secret's keys when first
    needed and again when the secret may have been rotated: when a state names a key the ring
    does not hold (``reread``: at once the first time, then at most once every
    ``reread_after_ms``, so forged key ids cost no more reads than that) and when the ring is older than ``max_age_ms`` (an instance that
    lives through a rotation then seals with the new key). A read that fails keeps the ring
    it has (and tries again after ``reread_after_ms``)."""

    def __init__(
        self,
        build: Callable[[], KeyRing],
        clock: Clock,
        *,
        max_age_ms: int = 15 * 60_000,
        reread_after_ms: int = 60_000,
    ) -> None:
        self._build = build
        self._clock = clock
        self._max_age_ms = max_age_ms
        self._reread_after_ms = reread_after_ms
        self._ring: KeyRing | None = None
        self._read_at = 0
        self._reread_at: int | None = None
        self._lock = threading.Lock()

    def __call__(self) -> KeyRing:
        with self._lock:
            if self._ring is None or self._clock() - self._read_at >= self._max_age_ms:
                self._read()
            assert self._ring is not None
            return self._ring

    def reread(self) -> KeyRing | None:
        """A ring read again now, unless the last time this was asked is too recent (None)."""
        with self._lock:
            now = self._clock()
            if self._reread_at is not None and now - self._reread_at < self._reread_after_ms:
                return None
            self._reread_at = now
            self._read()
            return self._ring

    def _read(self) -> None:
        try:
            self._ring = self._build()
        except Exception:
            if self._ring is None:
                raise
            logger.warning(
                "the requestState key could not be read again; keeping the one held", exc_info=True
            )
            self._read_at = self._clock() - self._max_age_ms + self._reread_after_ms
            return
        self._read_at = self._clock()


class RequestStates:
    """Seals and opens ``requestState`` with the key ring ``ring()`` gives (a ``Lazy``, or
    ``RotatingKeys``: built, and its keys read, by the first request that needs it)."""

    def __init__(self, ring: Callable[[], KeyRing], *, ttl_ms: int, clock: Clock) -> None:
        self._ring = ring
        self._ttl_ms = ttl_ms
        self._clock = clock

    def _open(self, token: str) -> bytes:
        try:
            return self._ring().open(token)
        except InvalidState as exc:
            # A key this instance does not hold: the secret may have been rotated since it read it.
            reread = getattr(self._ring, "reread", None)
            if str(exc) != "unknown key" or reread is None:
                raise
            ring = reread()
            if ring is None:
                raise
            opened: bytes = ring.open(token)
            return opened

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
        return self._ring().seal(payload)

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
            claims = json.loads(self._open(token))
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
