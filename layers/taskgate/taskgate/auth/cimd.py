"""Client ID Metadata Documents (draft-ietf-oauth-client-id-metadata-document, MCP 2025-11-25):
a client whose ``client_id`` is an https URL is described by the JSON document at that URL.

The URL is chosen by whoever starts an authorization request, so fetching it is a request
a stranger makes from inside the stack (SSRF), at the stack's expense. ``GuardedFetch``
therefore: https only, a path and no fragment, user info or dot segments; the name resolved
here and every address checked (``public_address``: globally reachable by IANA's
special-purpose registries, IPv4 or IPv6, including the IPv4 address inside a NAT64 one), then
the connection made to that very address (a second resolution cannot swap in another: DNS
rebinding), the certificate checked for the name; no redirects; 5 KiB; and 5 seconds for the
whole fetch (name, connection, headers and body together: a server that sends a byte a second
must not hold a Lambda for its 29 s).

``MetadataDocuments`` keeps a document as long as its ``Cache-Control: max-age`` says
(between 5 minutes and an hour; an hour by default), in the task table and in memory; a fetch
that failed, or a document that describes no client, is remembered in the table for 5 minutes,
so a stranger repeating a bad URL costs one fetch. The fetches a caller can cause are counted
per address in the table (callers.py: API Gateway's source address), so the limit holds across
Lambda environments.

``allow_hosts`` and ``ssl_context`` exist for tests only: the end-to-end test serves its
document on 127.0.0.1 with its own certificate, and the local runtime passes them from
``TASKGATE_TEST_CIMD_*`` (taskgate/local). The deployed function never sets them.
"""

from __future__ import annotations

import contextlib
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

from . import callers
from .redirects import refusal
from .state import ClientRecord, SignInStore

MAX_DOCUMENT_BYTES = 5 * 1024
FETCH_SECONDS = 5.0
# A document's redirect URIs may change (a compromised one removed): an hour at most.
MIN_CACHE_SECONDS, DEFAULT_CACHE_SECONDS, MAX_CACHE_SECONDS = 300, 3600, 3600
FAILED_SECONDS = 300
# Fetches of documents not cached that one address may cause, per window.
FETCHES_PER_ADDRESS, FETCH_WINDOW_SECONDS = 30, 600
# A failure is kept where a document is; documents are JSON objects, so never start with it.
_FAILED = "failed:"
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


# IANA's special-purpose address registries (IPv4 and IPv6, as updated in 2024 and 2025): the
# blocks whose "Globally Reachable" is False or N/A, and inside them the ones that are True.
# Written out rather than taken from ipaddress.is_global, which lags the registries and has
# changed between Python releases. Multicast (not in these registries) is never a fetch's target.
def _networks(*blocks: str) -> tuple[ipaddress.IPv4Network | ipaddress.IPv6Network, ...]:
    return tuple(ipaddress.ip_network(block) for block in blocks)


_NOT_GLOBAL = _networks(
    "0.0.0.0/8",
    "10.0.0.0/8",
    "100.64.0.0/10",
    "127.0.0.0/8",
    "169.254.0.0/16",
    "172.16.0.0/12",
    "192.0.0.0/24",
    "192.0.2.0/24",
    "192.88.99.0/24",  # the deprecated 6to4 relay anycast (N/A)
    "192.168.0.0/16",
    "198.18.0.0/15",
    "198.51.100.0/24",
    "203.0.113.0/24",
    "224.0.0.0/4",  # multicast
    "240.0.0.0/4",  # reserved, and the limited broadcast address
    "::/96",  # unspecified, loopback, and the deprecated IPv4-compatible addresses
    "::ffff:0:0/96",  # IPv4-mapped
    "::ffff:0:0:0/96",  # IPv4-translated (SIIT)
    "64:ff9b:1::/48",  # NAT64 for local use (RFC 8215)
    "100::/64",  # discard-only
    "100:0:0:1::/64",  # dummy prefix (RFC 9780)
    "2001::/23",  # IETF protocol assignments, Teredo (2001::/32: N/A) among them
    "2001:db8::/32",  # documentation
    "2002::/16",  # 6to4 (N/A: it reaches whatever IPv4 address it embeds)
    "3fff::/20",  # documentation (RFC 9637)
    "5f00::/16",  # SRv6 SIDs (RFC 9602)
    "fc00::/7",  # unique local (EC2's IPv6 instance metadata, fd00:ec2::254, among them)
    "fe80::/10",  # link-local
    "fec0::/10",  # site-local (deprecated)
    "ff00::/8",  # multicast
)
_GLOBAL_INSIDE = _networks(
    "192.0.0.9/32",  # PCP anycast
    "192.0.0.10/32",  # TURN anycast
    "2001:1::1/128",
    "2001:1::2/128",
    "2001:1::3/128",
    "2001:3::/32",  # AMT
    "2001:4:112::/48",  # AS112-v6
    "2001:20::/28",  # ORCHIDv2
    "2001:30::/28",  # drone remote ID
)
_NAT64 = ipaddress.IPv6Network("64:ff9b::/96")  # globally reachable: its IPv4 address decides
_GLOBAL_UNICAST = ipaddress.IPv6Network("2000::/3")


def public_address(address: str) -> bool:
    """Whether ``address`` is one a stranger's URL may make this stack connect to: globally
    reachable by IANA's registries, and for NAT64's well-known prefix (which a VPC's DNS64
    answers with) the IPv4 address inside it too. IPv6 outside global unicast (2000::/3) is
    never public, nor a scoped (zone) address."""
    ip = ipaddress.ip_address(address)
    if isinstance(ip, ipaddress.IPv6Address):
        if ip in _NAT64:
            return public_address(str(ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)))
        if ip.scope_id or ip not in _GLOBAL_UNICAST:
            return False
    special = any(ip in block for block in _NOT_GLOBAL if block.version == ip.version)
    return not special or any(ip in block for block in _GLOBAL_INSIDE if block.version == ip.version)


def _resolve(host: str, port: int) -> list[str]:
    infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return list(dict.fromkeys(str(info[4][0]) for info in infos))


def _within[T](deadline: float, what: str, work: Callable[[], T]) -> T:
    """``work()``'s result, or ClientDocumentError at ``deadline`` (a name lookup has no
    timeout of its own; the thread that waits for it is left to finish alone)."""
    done: list[T] = []
    failed: list[BaseException] = []

    def run() -> None:
        try:
            done.append(work())
        except BaseException as error:  # handed to the caller below
            failed.append(error)

    worker = threading.Thread(target=run, daemon=True, name="cimd-resolve")
    worker.start()
    worker.join(max(0.0, deadline - time.monotonic()))
    if failed:
        raise failed[0]
    if not done:
        raise ClientDocumentError(f"{what} took too long")
    return done[0]


class _Deadline:
    """Shuts the fetch's socket at the deadline: a read's timeout restarts with every byte,
    so a server sending one byte a second would otherwise hold the fetch without end."""

    def __init__(self, deadline: float) -> None:
        self.deadline = deadline
        self._sockets: list[socket.socket] = []
        self._lock = threading.Lock()
        self._expired = False
        self._timer = threading.Timer(self.left(), self._expire)
        self._timer.daemon = True

    def left(self) -> float:
        return max(0.0, self.deadline - time.monotonic())

    def watch(self, sock: socket.socket) -> None:
        with self._lock:
            self._sockets.append(sock)
            expired = self._expired
        if expired:
            self._shut(sock)

    def _expire(self) -> None:
        with self._lock:
            self._expired = True
            sockets = list(self._sockets)
        for sock in sockets:
            self._shut(sock)

    @staticmethod
    def _shut(sock: socket.socket) -> None:
        # The plain socket's shutdown, also on an SSLSocket: a blocked read returns at once.
        with contextlib.suppress(OSError):
            socket.socket.shutdown(sock, socket.SHUT_RDWR)

    def __enter__(self) -> _Deadline:
        self._timer.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._timer.cancel()


@dataclass
class GuardedFetch:
    timeout: float = FETCH_SECONDS  # the whole fetch: name, connection, headers and body
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
        deadline = time.monotonic() + self.timeout
        try:
            addresses = _within(deadline, f"resolving {host}", lambda: self.resolve(host, port))
        except OSError as error:
            raise ClientDocumentError(f"{host} cannot be resolved") from error
        if not addresses:
            raise ClientDocumentError(f"{host} cannot be resolved")
        if f"{host}:{port}" not in self.allow_hosts:
            private = [a for a in addresses if not public_address(a)]
            if private:
                raise ClientDocumentError(f"{host} resolves to an address that is not public ({private[0]})")
        context = self.ssl_context or ssl.create_default_context()
        with _Deadline(deadline) as limit:

            class Pinned(http.client.HTTPSConnection):
                def connect(self) -> None:  # to the address checked above, never a new lookup
                    sock = socket.create_connection((addresses[0], port), timeout=limit.left())
                    limit.watch(sock)
                    self.sock = context.wrap_socket(sock, server_hostname=host)
                    limit.watch(self.sock)

            connection = Pinned(host, port, timeout=min(self.timeout, limit.left()), context=context)
            try:
                connection.request(
                    "GET", target, headers={"Accept": "application/json", "User-Agent": "taskgate"}
                )
                response = connection.getresponse()
                if response.status != 200:
                    raise ClientDocumentError(f"the client id URL answered HTTP {response.status}")
                body = response.read(self.max_bytes + 1)
                if len(body) > self.max_bytes:
                    raise ClientDocumentError(f"the document is larger than {self.max_bytes} bytes")
                if not limit.left():
                    raise ClientDocumentError(f"the document took more than {self.timeout:g} s")
                match = _MAX_AGE.search(response.getheader("Cache-Control") or "")
                return body, int(match.group(1)) if match else None
            except (OSError, ValueError, http.client.HTTPException) as error:
                if not limit.left():
                    raise ClientDocumentError(f"the document took more than {self.timeout:g} s") from error
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
        fetches_per_address: int = FETCHES_PER_ADDRESS,
        fetch_window_seconds: int = FETCH_WINDOW_SECONDS,
    ) -> None:
        self._store = store
        self._fetch = fetch or GuardedFetch()
        self._clock = clock
        self._memory: dict[str, tuple[ClientRecord, float]] = {}
        self._memory_size = memory_size
        self._lock = threading.Lock()
        self._fetches_per_address = fetches_per_address
        self._window = fetch_window_seconds

    def client(self, url: str) -> ClientRecord:
        now = self._clock()
        with self._lock:
            kept = self._memory.get(url)
            if kept and kept[1] > now:
                return kept[0]
        _check_url(url)
        cached = self._store.cached_document(url, int(now))
        if cached is not None and cached.startswith(_FAILED):
            raise ClientDocumentError(cached.removeprefix(_FAILED) + " (tried in the last minutes)")
        if cached is not None:
            client = client_from_document(url, json.loads(cached))
            self._remember(url, client, now + MIN_CACHE_SECONDS)
            return client
        self._count_fetch(int(now))
        try:
            body, max_age = self._fetch(url)
            try:
                document = json.loads(body)
            except ValueError as error:
                raise ClientDocumentError("the document is not JSON") from error
            client = client_from_document(url, document)
        except ClientDocumentError as error:
            self._store.cache_document(url, f"{_FAILED}{error}", expires_at=int(now) + FAILED_SECONDS)
            raise
        keep = min(
            max(max_age if max_age is not None else DEFAULT_CACHE_SECONDS, MIN_CACHE_SECONDS),
            MAX_CACHE_SECONDS,
        )
        self._store.cache_document(
            url, json.dumps(document, separators=(",", ":")), expires_at=int(now) + keep
        )
        self._remember(url, client, now + min(keep, MIN_CACHE_SECONDS))
        return client

    def _count_fetch(self, now: int) -> None:
        """One more fetch caused by this request's address, or ClientDocumentError past the limit."""
        window = now // self._window
        key = f"cimd-fetch#{callers.current()}#{window}"
        if not self._store.count(
            key, limit=self._fetches_per_address, expires_at=(window + 2) * self._window
        ):
            raise ClientDocumentError(
                "too many client metadata documents fetched for your address; try again in a few minutes"
            )

    def _remember(self, url: str, client: ClientRecord, until: float) -> None:
        with self._lock:
            if len(self._memory) >= self._memory_size:
                self._memory.clear()
            self._memory[url] = (client, until)
