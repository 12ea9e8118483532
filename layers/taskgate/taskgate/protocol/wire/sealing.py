"""AES-256-GCM under one or more keys, for ``requestState`` (see request_state.py).

Imports ``cryptography``: the composition root builds a ``KeyRing`` for the first
request that seals or opens a state, never at a cold start.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Sequence
from typing import Any

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.hashes import SHA256
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

from .tokens import PREFIX, InvalidState, b64u, b64u_decode

_KDF_INFO = b"taskgate/request-state/v1/aes-256-gcm"
_KID_LEN = 4
_NONCE_LEN = 12
_TAG_LEN = 16


class KeyRing:
    """AES-GCM under one or more keys: the first seals, every one opens (rotation)."""

    def __init__(self, secrets: Sequence[bytes]) -> None:
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
        return PREFIX + b64u(self._seal_kid + nonce + sealed)

    def open(self, token: str) -> bytes:
        if not token.startswith(PREFIX):
            raise InvalidState("malformed")
        try:
            raw = b64u_decode(token[len(PREFIX) :])
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
