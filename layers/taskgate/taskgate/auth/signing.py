"""The keys this stack's authorization server signs its access tokens with (HS256).

The stack is both the authorization server and the only resource server its tokens are for,
so a shared secret is enough: no one else verifies them, and no JWKS is published. The key
material is a Secrets Manager secret (``SignInKeySecret``): every API instance reads its
``AWSCURRENT`` version (signs and verifies) and ``AWSPREVIOUS`` (verifies), once, on the
first request that needs a key. Rotation is a new secret value: tokens signed with the
previous one stay valid until they expire (an hour), because their ``kid`` names that
version; an instance that meets a kid it does not know reads the secret again, at most once
per interval (jwks.Throttled). Without a secret (one local server) a key of the process's own.
"""

from __future__ import annotations

import hashlib
import secrets
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from .jwks import Throttled
from .tokens import SigningKeysUnavailable, TokenError

if TYPE_CHECKING:
    from joserfc.jwk import OctKey

ALGORITHM = "HS256"
MIN_KEY_BYTES = 32

# Newest first: the first signs, all verify.
KeySource = Callable[[], Sequence[bytes]]


def key_id(material: bytes) -> str:
    """A name for a key that gives nothing of it away."""
    return hashlib.sha256(b"taskgate sign-in key id\x00" + material).hexdigest()[:16]


def ephemeral_source() -> KeySource:
    material = secrets.token_bytes(32)
    return lambda: [material]


class SigningKeys:
    def __init__(
        self,
        source: KeySource,
        *,
        interval: float = 60.0,
        max_age: float = 3600.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        # Read again after max_age too: an instance starts signing with a rotated key within an
        # hour, while its tokens signed before stay valid (AWSPREVIOUS).
        self._keys = Throttled(lambda: self._load(source), interval=interval, max_age=max_age, clock=clock)

    @staticmethod
    def _load(source: KeySource) -> list[tuple[str, OctKey]]:
        from joserfc.jwk import OctKey

        loaded = [m for m in source() if len(m) >= MIN_KEY_BYTES]
        if not loaded:
            raise SigningKeysUnavailable("the sign-in key secret holds no key of 32 bytes or more")
        return [(key_id(m), OctKey.import_key(m, parameters={"kid": key_id(m)})) for m in loaded]

    def current(self) -> tuple[str, OctKey]:
        keys = self._keys.get()
        if not keys:
            raise SigningKeysUnavailable("the sign-in signing key is unavailable")
        return keys[0]

    def by_kid(self, kid: str) -> OctKey:
        for refresh in (False, True):
            keys = self._keys.get(refresh=refresh)
            if keys is None:
                raise SigningKeysUnavailable("the sign-in signing key is unavailable")
            for known, key in keys:
                if known == kid:
                    return key
        raise TokenError("token signed with an unknown key")
