"""DNS-rebinding protection and the request Content-Type, checked before anything else runs.

A web page can make a browser send requests to a server on localhost (or, after a DNS
rebinding, to any address it names). Such a request carries the page's ``Origin`` and the
attacker's name in ``Host``, so both are checked against allow-lists (``ALLOWED_HOSTS``,
``ALLOWED_ORIGINS``; localhost only by default). Behind API Gateway the API's own domain
(``requestContext.domainName``) is allowed as well. A request without ``Origin`` (any
non-browser client) passes the Origin check; one without ``Host`` does not. Refusals are
HTTP 403 with a JSON-RPC error that has no id, and nothing behind the check runs.

Both headers are parsed strictly before they are compared: ``Host`` is RFC 9110's
``uri-host [":" port]`` and ``Origin`` RFC 6454's ``scheme "://" host [":" port]``, with
the host an RFC 3986 IP-literal, IPv4 address or DNS name. Anything else is refused rather
than guessed at: userinfo (``localhost:3000@evil.example``), a port that is not digits
(``localhost:evil.example``), text after an IPv6 literal (``[::1]evil.example``), a path,
a list. A lenient split read those as localhost while a browser or proxy reads evil.example.
Each header must come once: with two ``Origin`` headers one component could check the first
and another act on the second.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

# RFC 3986 reg-name, narrowed to what DNS names use (letters, digits, '-', '_', '.'):
# percent-encoding and sub-delims (',', ';', '&', …) are legal there but no allowed name
# needs them, and they are what makes two parsers disagree.
_LABEL = r"[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?"
_DNS_NAME = re.compile(rf"{_LABEL}(?:\.{_LABEL})*")
_IPV4 = re.compile(r"(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(?:\.(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}")
# A name whose last label is a number is an IPv4 address to a browser (WHATWG URL:
# "127.1", "0x7f.1", "127.000.0.1"), so it must be one in dotted-decimal form.
_NUMERIC_LABEL = re.compile(r"(?:[0-9]+|0x[0-9a-f]*)")
_PORT = re.compile(r"[0-9]{1,5}")
_SCHEMES = ("http", "https")


@dataclass(frozen=True)
class Authority:
    """A parsed ``host[:port]``: the host lowercased (an IPv6 literal in brackets, in
    its canonical form), the port as an int or None."""

    host: str
    port: int | None

    def matches(self, entry: Authority) -> bool:
        """An allow-list entry without a port matches any port."""
        return self.host == entry.host and (entry.port is None or entry.port == self.port)


def parse_authority(value: str) -> Authority | None:
    """``uri-host [":" port]`` (RFC 9110 §7.2 / RFC 3986 §3.2.2-3), or None when
    ``value`` is anything else. No userinfo, no IPv6 zone id or IPvFuture, no empty
    port, a port of at most 65535."""
    # Optional whitespace around a field value is not part of it.
    return _authority(value.strip(" \t").lower())


def _authority(text: str) -> Authority | None:
    if not text or not text.isascii():
        return None
    if text.startswith("["):
        end = text.find("]")
        if end < 0:
            return None
        literal, rest = text[1:end], text[end + 1 :]
        if "%" in literal:
            return None  # a zone id ("%25eth0"): local to one machine, never an allowed name
        try:
            host = f"[{ipaddress.IPv6Address(literal).compressed}]"
        except ValueError:
            return None  # IPvFuture ("v1.x") and anything else in brackets
    else:
        name, sep, port_text = text.partition(":")
        if not _IPV4.fullmatch(name) and (
            not _DNS_NAME.fullmatch(name) or _NUMERIC_LABEL.fullmatch(name.rpartition(".")[2])
        ):
            return None
        host, rest = name, sep + port_text
    if not rest:
        return Authority(host, None)
    if not rest.startswith(":") or not _PORT.fullmatch(rest[1:]):
        return None
    port = int(rest[1:])
    return Authority(host, port) if port <= 65535 else None


def parse_origin(value: str) -> tuple[str, Authority] | None:
    """A serialized origin (RFC 6454 §6.2: ``scheme "://" host [":" port]``), or None:
    "null", a path, a query, userinfo or a list are not one."""
    scheme, sep, rest = value.strip(" \t").lower().partition("://")
    if not sep or scheme not in _SCHEMES:
        return None
    authority = _authority(rest)
    return (scheme, authority) if authority is not None else None


def valid_host_entry(entry: str) -> bool:
    return entry == "*" or parse_authority(entry) is not None


def valid_origin_entry(entry: str) -> bool:
    return entry == "*" or parse_origin(entry) is not None


def _one(headers: Any, name: str) -> tuple[bool, str | None]:
    """(sent at most once, its value). Starlette's headers keep every copy (``getlist``);
    a plain mapping has one value per name."""
    getlist = getattr(headers, "getlist", None)
    values = list(getlist(name)) if getlist is not None else []
    if getlist is None and name in headers:
        values = [headers[name]]
    if len(values) > 1:
        return False, None
    return True, (values[0] if values else None)


@dataclass(frozen=True)
class TransportSecurity:
    """The hosts and origins a request may name (DNS rebinding protection)."""

    hosts: tuple[str, ...]
    origins: tuple[str, ...]

    def refusal(self, headers: Mapping[str, str], own_domain: str | None = None) -> str | None:
        """Why this request is refused (for the 403's message), or None to serve it."""
        once, host = _one(headers, "host")
        if not once:
            return "Forbidden: more than one Host header"
        hosts = (*self.hosts, own_domain) if own_domain else self.hosts
        if host is None or not _host_allowed(host, hosts):
            return "Forbidden: Host header not allowed"
        once, origin = _one(headers, "origin")
        if not once:
            return "Forbidden: more than one Origin header"
        if origin is not None and not self.origin_allowed(origin, own_domain):
            return "Forbidden: Origin not allowed"
        return None

    def origin_allowed(self, origin: str, own_domain: str | None = None) -> bool:
        """Whether a browser page from ``origin`` may call (and, with CORS, read) the API."""
        origins = (*self.origins, f"https://{own_domain}") if own_domain else self.origins
        return _origin_allowed(origin, origins)


def _host_allowed(value: str, entries: tuple[str, ...]) -> bool:
    authority = parse_authority(value)
    if authority is None:
        return False
    for entry in entries:
        if entry == "*":
            return True
        allowed = parse_authority(entry)
        if allowed is not None and authority.matches(allowed):
            return True
    return False


def _origin_allowed(value: str, entries: tuple[str, ...]) -> bool:
    origin = parse_origin(value)
    if origin is None:
        return False  # "null" (sandboxed frames, files) and anything malformed
    for entry in entries:
        if entry == "*":
            return True
        allowed = parse_origin(entry)
        if allowed is not None and allowed[0] == origin[0] and origin[1].matches(allowed[1]):
            return True
    return False


def is_json(content_type: str | None) -> bool:
    """``application/json``, with or without parameters (``; charset=utf-8``)."""
    if content_type is None:
        return False
    return content_type.split(";", 1)[0].strip().lower() == "application/json"
