"""Who is asking, for the limits a stranger runs into (registrations, metadata-document
fetches): the address API Gateway saw the request come from, never a header the caller wrote.

``X-Forwarded-For`` and ``Forwarded`` are whatever the caller put there, so a limit keyed by
them is no limit. API Gateway puts the connection's address in the event it hands the
function (``requestContext.http.sourceIp`` on the HTTP API, ``requestContext.identity.sourceIp``
on the REST API); the local server's own socket stands in for it. An IPv6 address counts by
its /64, which one subscriber or one cloud instance usually holds whole: counted address by
address, one attacker would be 2^64 callers.

The address reaches the code that fetches a metadata document through a context variable set
around each request's work (``acting_for``): Authlib looks clients up on its own, with no
argument to pass it by.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

UNKNOWN = "unknown"
_CALLER: ContextVar[str] = ContextVar("taskgate_sign_in_caller", default=UNKNOWN)


def source_address(scope: Mapping[str, Any]) -> str:
    """The caller's address as API Gateway saw it (or the local server's socket), as a key:
    an IPv6 address as its /64 network."""
    event = scope.get("aws.event") or {}
    context = event.get("requestContext") if isinstance(event, dict) else None
    context = context if isinstance(context, dict) else {}
    for part in ("http", "identity"):  # HTTP API, REST API
        found = context.get(part)
        source = found.get("sourceIp") if isinstance(found, dict) else None
        if isinstance(source, str) and source:
            return limit_key(source)
    client = scope.get("client")
    return limit_key(str(client[0])) if client else UNKNOWN


def limit_key(address: str) -> str:
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return UNKNOWN
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is None:
        return str(ipaddress.IPv6Network((int(ip) >> 64 << 64, 64)))
    return str(ip.ipv4_mapped if isinstance(ip, ipaddress.IPv6Address) else ip)


@contextmanager
def acting_for(address: str) -> Iterator[None]:
    token = _CALLER.set(address)
    try:
        yield
    finally:
        _CALLER.reset(token)


def current() -> str:
    """The address of the request being served (``unknown`` outside one: counted together)."""
    return _CALLER.get()
