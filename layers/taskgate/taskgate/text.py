"""Text bounded in bytes, as rows and messages keep it (below every room that bounds one)."""

from __future__ import annotations


def cut(text: str, limit: int) -> str:
    """``text`` in at most ``limit`` UTF-8 bytes, cut at a character with an ellipsis."""
    encoded = text.encode()
    if len(encoded) <= limit:
        return text
    return encoded[: max(0, limit - 3)].decode(errors="ignore") + "…"
