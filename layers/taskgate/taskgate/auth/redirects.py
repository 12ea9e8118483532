"""Which redirect URIs a client may register, and when a requested one matches.

Registered URIs are matched exactly (OAuth 2.1), with one exception RFC 8252 §7.3 requires:
a loopback ``http`` URI matches on any port, because a native app (Claude Code, mcp-remote,
VS Code) listens on whatever port is free when it signs in. Allowed: ``https``; ``http`` only
on a loopback host; an app's private-use scheme (``cursor://…``, RFC 8252 §7.1). Never a
fragment, user info, or a scheme that runs or reads something in the browser.
"""

from __future__ import annotations

from urllib.parse import urlsplit

MAX_URI_LENGTH = 2000
LOOPBACK_HOSTS = frozenset({"127.0.0.1", "::1", "localhost"})
REFUSED_SCHEMES = frozenset({"javascript", "data", "file", "vbscript", "about", "blob", "ws", "wss", "ftp"})


def refusal(uri: str) -> str | None:
    """Why ``uri`` cannot be a redirect URI, or None if it can."""
    if not isinstance(uri, str) or not uri or len(uri) > MAX_URI_LENGTH or not uri.isprintable():
        return "not a URI"
    try:
        parts = urlsplit(uri)
        parts.port  # noqa: B018 (raises on a malformed port)
    except ValueError:
        return "not a URI"
    scheme = parts.scheme.lower()
    if not scheme or parts.fragment or "#" in uri:
        return "an absolute URI without a fragment is required"
    if "@" in parts.netloc:
        return "user information is not allowed"
    if scheme in REFUSED_SCHEMES:
        return f"the {scheme} scheme is not allowed"
    if scheme == "https":
        return None if parts.hostname else "no host"
    if scheme == "http":
        if (parts.hostname or "").lower() in LOOPBACK_HOSTS:
            return None
        return "http is allowed for loopback addresses only (127.0.0.1, [::1], localhost)"
    return None  # a private-use scheme: only the app that registered it receives it


def _loopback_without_port(uri: str) -> tuple[str, str, str, str] | None:
    parts = urlsplit(uri)
    if parts.scheme != "http" or parts.hostname not in LOOPBACK_HOSTS:
        return None
    return parts.scheme, parts.hostname, parts.path or "/", parts.query


def matches(registered: str, requested: str) -> bool:
    if registered == requested:
        return True
    try:
        a, b = _loopback_without_port(registered), _loopback_without_port(requested)
    except ValueError:
        return False
    return a is not None and a == b
