"""Which redirect URIs a client may register, and where a requested one sends the person.

Registered URIs are matched exactly (OAuth 2.1), with one exception RFC 8252 §7.3 requires:
a loopback ``http`` URI matches on any port, because a native app (Claude Code, mcp-remote,
VS Code) listens on whatever port is free when it signs in. Allowed: ``https``; ``http`` only
on a loopback host; an app's private-use scheme (``cursor://…``, RFC 8252 §7.1). Never a
fragment, user info, or a scheme that runs or reads something in the browser.

The code goes wherever the person's *browser* reads the URI to point, and browsers parse with
the WHATWG URL standard, not ``urllib``: a ``\\`` is a ``/`` in an http(s) URL, tab and newline
are dropped, and percent-encoded characters are decoded in the host. So
``http://evil.example\\@127.0.0.1/cb`` is ``127.0.0.1`` to Python and ``evil.example`` to a
browser. Two rules close that gap for good rather than chasing each spelling:

- a URI with a character the two parsers read differently (``\\``, ``@``, controls and
  whitespace, a ``%`` in the scheme or the authority, a percent-encoded delimiter) is refused
  outright, at registration and at authorization;
- the URI redirected to is :func:`resolve`'s: the *registered* string, with at most a
  digits-only port put in for a loopback one. Nothing of the requested string is echoed, and a
  requested URI matches only when it is textually that URI.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from urllib.parse import urlsplit

MAX_URI_LENGTH = 2000
LOOPBACK_HOSTS = frozenset({"127.0.0.1", "::1", "localhost"})
REFUSED_SCHEMES = frozenset({"javascript", "data", "file", "vbscript", "about", "blob", "ws", "wss", "ftp"})

# Read differently by a browser and by Python, or there only to hide what the URI is.
_AMBIGUOUS = re.compile(r"[\\@\s\x00-\x1f\x7f]")
# Percent-encoded characters that delimit a URL's parts (/ \ @ : ? # [ ] .) or are controls:
# a browser decodes them in a host, and the app behind the redirect may decode them in its path.
# (A query may carry them: nothing reads a query as part of where to go.)
_ENCODED_DELIMITER = re.compile(r"%(?:2[fFeE3]|5[cCbBdD]|40|3[aAfF]|[01][0-9a-fA-F]|7[fF])")
# A loopback redirect URI as this server writes it back: nothing but a known host, a port of
# digits, and the rest (the registered URI's path and query).
_LOOPBACK = re.compile(r"^http://(127\.0\.0\.1|\[::1\]|(?i:localhost))(?::([0-9]{1,5}))?([/?].*)?$")


def refusal(uri: str) -> str | None:
    """Why ``uri`` cannot be a redirect URI, or None if it can."""
    if not isinstance(uri, str) or not uri or len(uri) > MAX_URI_LENGTH or not uri.isprintable():
        return "not a URI"
    if not uri.isascii():
        # A URI is ASCII (RFC 3986): an internationalised host is written in its xn-- form,
        # which is also how a look-alike letter shows on the consent page.
        return "non-ASCII characters are not allowed (write a host in its xn-- form)"
    if _AMBIGUOUS.search(uri):
        return "backslashes, '@', whitespace and control characters are not allowed"
    if _ENCODED_DELIMITER.search(uri.split("?", 1)[0]):
        return "percent-encoded delimiters are not allowed before the query"
    try:
        parts = urlsplit(uri)
        parts.port  # noqa: B018 (raises on a malformed port)
    except ValueError:
        return "not a URI"
    scheme = parts.scheme.lower()
    if not scheme or parts.fragment or "#" in uri:
        return "an absolute URI without a fragment is required"
    if "%" in parts.scheme + parts.netloc:
        return "percent-encoding is not allowed in the scheme or the host"
    if scheme in REFUSED_SCHEMES:
        return f"the {scheme} scheme is not allowed"
    if scheme == "https":
        return None if parts.hostname else "no host"
    if scheme == "http":
        if _LOOPBACK.match(uri) and _port_ok(_LOOPBACK.match(uri)):
            return None
        return "http is allowed for loopback addresses only (127.0.0.1, [::1], localhost)"
    return None  # a private-use scheme: only the app that registered it receives it


def _port_ok(match: re.Match[str] | None) -> bool:
    return match is not None and (match.group(2) is None or 0 < int(match.group(2)) <= 65535)


def _loopback_with_port(registered: str, requested: str) -> str | None:
    """``registered`` with the requested loopback URI's port, if that is textually the
    requested URI (same host spelling, same path and query); else None."""
    mine, theirs = _LOOPBACK.match(registered), _LOOPBACK.match(requested)
    if mine is None or theirs is None or not _port_ok(theirs):
        return None
    host, rest = mine.group(1), mine.group(3) or ""
    port = theirs.group(2)
    candidate = f"http://{host}{':' + str(int(port)) if port is not None else ''}{rest}"
    return candidate if candidate == requested else None


def resolve(registered: Iterable[str], requested: str) -> str | None:
    """The URI to send the person to for ``requested``, built from the client's registered
    URIs (never from the requested string), or None when nothing registered matches."""
    if refusal(requested) is not None:
        return None
    for uri in registered:
        if refusal(uri) is not None:
            continue  # registered before these rules: never redirect there
        if uri == requested:
            return uri
        candidate = _loopback_with_port(uri, requested)
        if candidate is not None:
            return candidate
    return None


def redirect_host(uri: str) -> str:
    """The host a redirect URI sends the person's browser to (what consent is kept for, and
    what the consent page shows): the scheme for a private-use one."""
    parts = urlsplit(uri)
    if parts.scheme in ("http", "https"):
        return (parts.hostname or "").lower()
    return f"{parts.scheme}:"
