"""Client ID Metadata Documents (draft-ietf-oauth-client-id-metadata-document, MCP 2025-11-25):
a client whose ``client_id`` is an https URL is described by the JSON document at that URL.

The URL is chosen by whoever starts an authorization request, so fetching it is a request
a stranger makes from inside the stack (SSRF). ``GuardedFetch`` therefore: https only, a
path and no fragment, user info or dot segments; the name resolved here and every address
checked (no private, loopback, link-local, shared, multicast or reserved address, IPv4 or
IPv6), then the connection made to that very address (a second resolution cannot swap in
another: DNS rebinding), the certificate checked for the name; no redirects; 5 seconds; 5
KiB. A document is kept as long as its ``Cache-Control: max-age`` says (between 5 minutes
and a day; an hour by default), in the task table and in memory.

``allow_hosts`` and ``ssl_context`` exist for tests only: the end-to-end test serves its
document on 127.0.0.1 with its own certificate, and the local runtime passes them from
``TASKGATE_TEST_CIMD_*`` (taskgate/local). The deployed function never sets them.
"""

from __future__ import annotations

import ipaddress
import json
import re
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from .redirects import refusal
from .state import ClientRecord, SignInStore

MAX_DOCUMENT_BYTES = 5 * 1024
FETCH_SECONDS = 5.0
MIN_CACHE_SECONDS, DEFAULT_CACHE_SECONDS, MAX_CACHE_SECONDS = 300, 3600, 86_400
_MAX_AGE = re.compile(r"(?:^|,)\s*max-age\s*=\s*(\d+)", re.IGNORECASE)


class ClientDocumentError(Exception):
    """The metadata document cannot describe a client: why, for the error page."""


def is_document_url(client_id: str) -> bool:
    return client_id.startswith("https://")


def _check_url(url: str) -> tuple[str, int, str]:
    parts = urlsplit(url)
    if parts.scheme != "https" or not parts.hostname:
        raise ClientDocumentError("a client id URL must be https with a host")
    if parts.fragment or "@" in parts.netloc or parts.path in ("", "/"):
        raise ClientDocumentError("a client id URL needs a path, and no fragment or user information")
    if any(segment in (".", "..") for segment in parts.path.split("/")):
        raise ClientDocumentError("a client id URL must not contain dot segments")
    target = parts.path + (f"?{parts.query}" if parts.query else "")
    return parts.hostname, parts.port or 443, target


def public_address(address: str) -> bool:
    ip = ipaddress.ip_address(address)
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return ip.is_global and not ip.is_multicast


def _resolve(host: str, port: int) -> list[str]:
    infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return list(dict.fromkeys(str(info[4][0]) for info in infos))


@dataclass
class GuardedFetch:
    timeout: float = FETCH_SECONDS
    max_bytes: int = MAX_DOCUMENT_BYTES
    # Tests only (see the module's docstring): "host:port" reachable on any address, and
    # the TLS context that trusts the test's certificate.
    allow_hosts: frozenset[str] = frozenset()
    ssl_context: Any = None
    resolve: Callable[[str, int], list[str]] = field(default=_resolve)

    def __call__(self, url: str) -> tuple[bytes, int | None]:
        """The document's bytes and its max-age, if it gave one."""
        import http.client
        import ssl

        host, port, target = _check_url(url)
        try:
            addresses = self.resolve(host, port)
        except OSError as error:
            raise ClientDocumentError(f"{host} cannot be resolved") from error
        if not addresses:
            raise ClientDocumentError(f"{host} cannot be resolved")
        if f"{host}:{port}" not in self.allow_hosts:
            private = [a for a in addresses if not public_address(a)]
            if private:
                raise ClientDocumentError(f"{host} resolves to an address that is not public ({private[0]})")
        context = self.ssl_context or ssl.create_default_context()
        deadline = time.monotonic() + self.timeout

        class Pinned(http.client.HTTPSConnection):
            def connect(self) -> None:  # to the address checked above, never a new lookup
                sock = socket.create_connection((addresses[0], port), timeout=self.timeout)
                self.sock = context.wrap_socket(sock, server_hostname=host)

        connection = Pinned(host, port, timeout=self.timeout, context=context)
        try:
            connection.request(
                "GET", target, headers={"Accept": "application/json", "User-Agent": "taskgate"}
            )
            response = connection.getresponse()
            if response.status != 200:
                raise ClientDocumentError(f"the client id URL answered HTTP {response.status}")
            body = response.read(self.max_bytes + 1)
            if len(body) > self.max_bytes or time.monotonic() > deadline:
                raise ClientDocumentError(f"the document is larger than {self.max_bytes} bytes or too slow")
            match = _MAX_AGE.search(response.getheader("Cache-Control") or "")
            return body, int(match.group(1)) if match else None
        except (OSError, http.client.HTTPException) as error:
            raise ClientDocumentError(f"the client id URL could not be fetched: {error}") from error
        finally:
            connection.close()


def client_from_document(url: str, document: Any) -> ClientRecord:
    """The client a document describes, if it describes ``url`` as a public client."""
    if not isinstance(document, dict):
        raise ClientDocumentError("the document is not a JSON object")
    if document.get("client_id") != url:
        raise ClientDocumentError("the document's client_id is not its own URL")
    if "client_secret" in document or "client_secret_expires_at" in document:
        raise ClientDocumentError("a client metadata document must not carry a client secret")
    method = document.get("token_endpoint_auth_method", "none")
    if method != "none":
        raise ClientDocumentError("only public clients (token_endpoint_auth_method none) are supported")
    uris = document.get("redirect_uris")
    if not isinstance(uris, list) or not uris or len(uris) > 10:
        raise ClientDocumentError("redirect_uris: one to ten URIs")
    for uri in uris:
        problem = refusal(uri)
        if problem:
            raise ClientDocumentError(f"redirect_uris: {problem}")
    grant_types = document.get("grant_types", ["authorization_code"])
    if not isinstance(grant_types, list) or "authorization_code" not in grant_types:
        raise ClientDocumentError("grant_types must include authorization_code")
    name = document.get("client_name")
    return ClientRecord(
        client_id=url,
        redirect_uris=tuple(uris),
        token_endpoint_auth_method="none",
        client_name=name[:200] if isinstance(name, str) else None,
        grant_types=tuple(g for g in grant_types if g in ("authorization_code", "refresh_token")),
        metadata_document=True,
    )


class MetadataDocuments:
    def __init__(
        self,
        store: SignInStore,
        *,
        fetch: Callable[[str], tuple[bytes, int | None]] | None = None,
        clock: Callable[[], float] = time.time,
        memory_size: int = 256,
    ) -> None:
        self._store = store
        self._fetch = fetch or GuardedFetch()
        self._clock = clock
        self._memory: dict[str, tuple[ClientRecord, float]] = {}
        self._memory_size = memory_size
        self._lock = threading.Lock()

    def client(self, url: str) -> ClientRecord:
        now = self._clock()
        with self._lock:
            kept = self._memory.get(url)
            if kept and kept[1] > now:
                return kept[0]
        _check_url(url)
        cached = self._store.cached_document(url, int(now))
        if cached is not None:
            client = client_from_document(url, json.loads(cached))
            self._remember(url, client, now + MIN_CACHE_SECONDS)
            return client
        body, max_age = self._fetch(url)
        try:
            document = json.loads(body)
        except ValueError as error:
            raise ClientDocumentError("the document is not JSON") from error
        client = client_from_document(url, document)
        keep = min(
            max(max_age if max_age is not None else DEFAULT_CACHE_SECONDS, MIN_CACHE_SECONDS),
            MAX_CACHE_SECONDS,
        )
        self._store.cache_document(
            url, json.dumps(document, separators=(",", ":")), expires_at=int(now) + keep
        )
        self._remember(url, client, now + min(keep, MIN_CACHE_SECONDS))
        return client

    def _remember(self, url: str, client: ClientRecord, until: float) -> None:
        with self._lock:
            if len(self._memory) >= self._memory_size:
                self._memory.clear()
            self._memory[url] = (client, until)
