"""DNS-rebinding protection and the request Content-Type, checked before anything else runs.

A web page can make a browser send requests to a server on localhost (or, after a DNS
rebinding, to any address it names). Such a request carries the page's ``Origin`` and the
attacker's name in ``Host``, so both are checked against allow-lists (``ALLOWED_HOSTS``,
``ALLOWED_ORIGINS``; localhost only by default). Behind API Gateway the API's own domain
(``requestContext.domainName``) is allowed as well. A request without ``Origin`` (any
non-browser client) passes the Origin check; one without ``Host`` does not. Refusals are
HTTP 403 with a JSON-RPC error that has no id, and nothing behind the check runs.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import urlsplit


def _split_host(value: str) -> tuple[str, str | None]:
    """``host[:port]`` (IPv6 in brackets) → (lowercased host, port or None)."""
    value = value.strip().lower()
    if value.startswith("["):
        end = value.find("]")
        if end < 0:
            return value, None
        host, rest = value[: end + 1], value[end + 1 :]
        return host, rest[1:] if rest.startswith(":") else None
    host, sep, port = value.rpartition(":")
    return (host, port) if sep else (value, None)


def _host_allowed(value: str, entries: tuple[str, ...]) -> bool:
    host, port = _split_host(value)
    for entry in entries:
        if entry == "*":
            return True
        want_host, want_port = _split_host(entry)
        if host == want_host and (want_port is None or want_port == port):
            return True
    return False


def _origin_parts(value: str) -> tuple[str, str] | None:
    try:
        parts = urlsplit(value.strip().lower())
    except ValueError:
        return None
    if parts.scheme not in ("http", "https") or not parts.netloc or parts.path not in ("", "/"):
        return None
    return parts.scheme, parts.netloc


def _origin_allowed(value: str, entries: tuple[str, ...]) -> bool:
    origin = _origin_parts(value)
    if origin is None:
        return False  # "null" (sandboxed frames, files) and anything malformed
    for entry in entries:
        if entry == "*":
            return True
        want = _origin_parts(entry)
        if want is not None and want[0] == origin[0] and _host_allowed(origin[1], (want[1],)):
            return True
    return False


@dataclass(frozen=True)
class TransportSecurity:
    hosts: tuple[str, ...]
    origins: tuple[str, ...]

    def refusal(self, headers: Mapping[str, str], own_domain: str | None = None) -> str | None:
        """Why this request is refused (for the 403's message), or None to serve it."""
        hosts = (*self.hosts, own_domain) if own_domain else self.hosts
        host = headers.get("host")
        if host is None or not _host_allowed(host, hosts):
            return "Forbidden: Host header not allowed"
        origin = headers.get("origin")
        if origin is not None and not self.origin_allowed(origin, own_domain):
            return "Forbidden: Origin not allowed"
        return None

    def origin_allowed(self, origin: str, own_domain: str | None = None) -> bool:
        """Whether a browser page from ``origin`` may call (and, with CORS, read) the API."""
        origins = (*self.origins, f"https://{own_domain}") if own_domain else self.origins
        return _origin_allowed(origin, origins)


def is_json(content_type: str | None) -> bool:
    """``application/json``, with or without parameters (``; charset=utf-8``)."""
    if content_type is None:
        return False
    return content_type.split(";", 1)[0].strip().lower() == "application/json"
