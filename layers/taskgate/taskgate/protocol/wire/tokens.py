"""The outer form of a sealed ``requestState`` token: ``tg1.`` + canonical base64url."""

from __future__ import annotations

import base64

PREFIX = "tg1."


class InvalidState(Exception):
    """Why a token was refused (for the log only)."""


def b64u(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode("ascii").rstrip("=")


def b64u_decode(text: str) -> bytes:
    raw = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    if b64u(raw) != text:
        # Only the canonical encoding: no second spelling of the same token.
        raise ValueError("non-canonical base64url")
    return raw
