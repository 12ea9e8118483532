"""Client ID Metadata Documents a stranger makes the stack fetch (red team round three, M2 and
the address guard): how many fetches one address may cause, a failed fetch remembered, both in
the table so they hold across Lambda environments, keyed by API Gateway's source address and
never a header the caller wrote; and which addresses a fetch may go to, checked against IANA's
special-purpose registries. The fetch's total deadline is measured against a real server in
tests/integration/test_metadata_document_fetch.py (sockets are refused here).
"""

from __future__ import annotations

import ipaddress
import json
from collections.abc import Callable
from typing import Any

import pytest
from starlette.types import ASGIApp, Receive, Scope, Send

from taskgate.auth.cimd import ClientDocumentError, GuardedFetch, MetadataDocuments, public_address
from taskgate.testing.memory import MemorySignInStore
from tests.fakes import World
from tests.sign_in_stack import CLIENT_REDIRECT, Clock, SignInStack, build_stack


def _document(url: str) -> dict[str, Any]:
    return {
        "client_id": url,
        "client_name": "Document Client",
        "redirect_uris": [CLIENT_REDIRECT],
        "token_endpoint_auth_method": "none",
    }


class Fetches:
    """A stand-in for the guarded fetch: what was fetched, and what each URL gives."""

    def __init__(self, failing: bool = False) -> None:
        self.urls: list[str] = []
        self.failing = failing

    def __call__(self, url: str) -> tuple[bytes, int | None]:
        self.urls.append(url)
        if self.failing:
            raise ClientDocumentError("the client id URL could not be fetched: timed out")
        return json.dumps(_document(url)).encode(), 600


def from_address(source: str) -> Callable[[ASGIApp], ASGIApp]:
    """API Gateway in front: the HTTP API's event names the connection's address."""

    def wrap(app: ASGIApp) -> ASGIApp:
        async def fronted(scope: Scope, receive: Receive, send: Send) -> None:
            event = {"requestContext": {"http": {"sourceIp": source}}}
            await app({**scope, "aws.event": event}, receive, send)

        return fronted

    return wrap


def _stack(world: World, store: MemorySignInStore, fetch: Fetches, source: str) -> SignInStack:
    return build_stack(
        lambda: world.server, store, documents_fetch=fetch, wrap=from_address(source), clock=Clock()
    )


def _authorize(stack: SignInStack, client_id: str, **headers: str) -> int:
    reply = stack.http.get(stack.authorization(client_id).url, headers=headers, follow_redirects=False)
    return reply.status_code


def test_a_failed_fetch_is_remembered_in_the_table_across_environments(world: World) -> None:
    """M2: two Lambda environments (two stacks, one table): a URL whose fetch failed in one is
    not fetched again by the other for a while."""
    store, fetches = MemorySignInStore(), Fetches(failing=True)
    url = "https://slow.example/client.json"
    first, second = (_stack(world, store, fetches, "203.0.113.7") for _ in range(2))
    assert _authorize(first, url) == 400
    assert _authorize(second, url) == 400
    assert _authorize(first, url) == 400
    assert fetches.urls == [url]


def test_the_fetches_one_address_causes_are_limited_across_environments_and_not_by_a_header(
    world: World,
) -> None:
    """M2: each authorization request naming a new URL was a fetch, for anyone, without end.
    Counted per API Gateway source address in the table: a second environment sees the same
    count, X-Forwarded-For changes nothing, and another address has its own."""
    from taskgate.auth.cimd import FETCHES_PER_ADDRESS

    store, fetches = MemorySignInStore(), Fetches()
    environments = [_stack(world, store, fetches, "198.51.100.9") for _ in range(2)]
    for n in range(FETCHES_PER_ADDRESS):
        status = _authorize(environments[n % 2], f"https://app.example/c{n}.json")
        assert status == 302, n
    assert len(fetches.urls) == FETCHES_PER_ADDRESS
    for stack in environments:
        refused = stack.http.get(
            stack.authorization("https://app.example/one-more.json").url,
            headers={"X-Forwarded-For": "192.0.2.1", "Forwarded": "for=192.0.2.1"},
            follow_redirects=False,
        )
        assert refused.status_code == 400 and "too many client metadata documents" in refused.text
    assert len(fetches.urls) == FETCHES_PER_ADDRESS  # refused before any fetch
    # A document already fetched is no new fetch: still served.
    assert _authorize(environments[1], "https://app.example/c0.json") == 302
    elsewhere = _stack(world, store, fetches, "192.0.2.44")
    assert _authorize(elsewhere, "https://app.example/one-more.json") == 302


def test_the_limit_window_passes() -> None:
    from taskgate.auth import callers

    store, clock, fetches = MemorySignInStore(), Clock(start=1_000_000), Fetches()
    documents = MetadataDocuments(store, fetch=fetches, clock=clock, fetches_per_address=2)
    with callers.acting_for("203.0.113.1"):
        documents.client("https://a.example/1.json")
        documents.client("https://a.example/2.json")
        with pytest.raises(ClientDocumentError, match="too many"):
            documents.client("https://a.example/3.json")
        clock.advance(1200)
        documents.client("https://a.example/3.json")
    assert len(fetches.urls) == 3


def test_an_ipv6_caller_counts_by_its_64() -> None:
    from taskgate.auth import callers

    assert callers.limit_key("2001:db8:1:2:aaaa::1") == callers.limit_key("2001:db8:1:2:bbbb::9")
    assert callers.limit_key("2001:db8:1:2::1") == "2001:db8:1:2::/64"
    assert callers.limit_key("2001:db8:1:3::1") != callers.limit_key("2001:db8:1:2::1")
    assert callers.limit_key("::ffff:198.51.100.9") == "198.51.100.9"
    assert callers.limit_key("not an address") == callers.UNKNOWN
    rest = {"aws.event": {"requestContext": {"identity": {"sourceIp": "198.51.100.2"}}}}
    assert callers.source_address(rest) == "198.51.100.2"  # the REST API's event
    spoofed = {"headers": [(b"x-forwarded-for", b"1.2.3.4")], "client": ("10.1.1.1", 5)}
    assert callers.source_address(spoofed) == "10.1.1.1"


def test_cached_documents_live_an_hour_at_most() -> None:
    store, clock = MemorySignInStore(), Clock(start=1_000_000)
    fetches: list[str] = []

    def fetch(url: str) -> tuple[bytes, int | None]:
        fetches.append(url)
        return json.dumps(_document(url)).encode(), 86_400

    documents = MetadataDocuments(store, fetch=fetch, clock=clock)
    documents.client("https://a.example/c.json")
    clock.advance(3601)
    MetadataDocuments(store, fetch=fetch, clock=clock).client("https://a.example/c.json")
    assert len(fetches) == 2


# ---- the address guard --------------------------------------------------------------------

# IANA IPv4 and IPv6 Special-Purpose Address Registries (iana-ipv4-special-registry,
# iana-ipv6-special-registry, as updated in 2024 and 2025): each block, and whether it is
# "Globally Reachable" (None: N/A). A fetch may go only where that is True.
IANA_V4: list[tuple[str, bool | None]] = [
    ("0.0.0.0/8", False),
    ("10.0.0.0/8", False),
    ("100.64.0.0/10", False),
    ("127.0.0.0/8", False),
    ("169.254.0.0/16", False),
    ("172.16.0.0/12", False),
    ("192.0.0.0/29", False),
    ("192.0.0.8/32", False),
    ("192.0.0.9/32", True),
    ("192.0.0.10/32", True),
    ("192.0.0.170/32", False),
    ("192.0.0.171/32", False),
    ("192.0.2.0/24", False),
    ("192.31.196.0/24", True),
    ("192.52.193.0/24", True),
    ("192.88.99.0/24", None),
    ("192.168.0.0/16", False),
    ("192.175.48.0/24", True),
    ("198.18.0.0/15", False),
    ("198.51.100.0/24", False),
    ("203.0.113.0/24", False),
    ("240.0.0.0/4", False),
    ("255.255.255.255/32", False),
]
IANA_V6: list[tuple[str, bool | None]] = [
    ("::1/128", False),
    ("::/128", False),
    ("::ffff:0:0/96", False),
    ("64:ff9b::/96", True),  # its IPv4 address decides (below)
    ("64:ff9b:1::/48", False),
    ("100::/64", False),
    ("100:0:0:1::/64", False),
    ("2001::/23", False),
    ("2001::/32", None),  # Teredo
    ("2001:1::1/128", True),
    ("2001:1::2/128", True),
    ("2001:1::3/128", True),
    ("2001:2::/48", False),
    ("2001:3::/32", True),
    ("2001:4:112::/48", True),
    ("2001:10::/28", False),
    ("2001:20::/28", True),
    ("2001:30::/28", True),
    ("2001:db8::/32", False),
    ("2002::/16", None),  # 6to4
    ("2620:4f:8000::/48", True),
    ("3fff::/20", False),
    ("5f00::/16", False),
    ("fc00::/7", False),
    ("fe80::/10", False),
]


def _samples(block: str) -> list[str]:
    network = ipaddress.ip_network(block)
    found = {network.network_address, network.broadcast_address}
    if network.num_addresses > 2:
        found.add(network.network_address + (network.num_addresses // 2) + 1)
    return [str(a) for a in found]


@pytest.mark.parametrize("block,reachable", IANA_V4 + IANA_V6)
def test_only_globally_reachable_blocks_of_the_iana_registries_pass(
    block: str, reachable: bool | None
) -> None:
    for address in _samples(block):
        if block == "64:ff9b::/96":
            continue  # checked by the address it embeds
        if block == "2001::/23" and ipaddress.ip_address(address) in ipaddress.ip_network("2001:1::/32"):
            continue  # the /23 holds globally reachable exceptions (listed on their own)
        assert public_address(address) is (reachable is True), (block, address)


@pytest.mark.parametrize(
    "address",
    [
        "64:ff9b::a00:1",  # NAT64 to 10.0.0.1
        "64:ff9b::a9fe:a9fe",  # NAT64 to the instance metadata service 169.254.169.254
        "64:ff9b::7f00:1",  # NAT64 to 127.0.0.1
        "64:ff9b::c0a8:101",  # NAT64 to 192.168.1.1
        "64:ff9b:1::a00:1",  # local-use NAT64
        "2002:a00:1::1",  # 6to4 with 10.0.0.1
        "2002:a9fe:a9fe::1",  # 6to4 with 169.254.169.254
        "2001:0:4136:e378:8000:63bf:f5ff:fffe",  # Teredo (client 10.0.0.1)
        "2001:0:a00:1::1",  # Teredo with server 10.0.0.1
        "::10.0.0.1",  # IPv4-compatible (deprecated)
        "::ffff:0:a00:1",  # IPv4-translated
        "::ffff:a9fe:a9fe",  # IPv4-mapped 169.254.169.254
        "fd00:ec2::254",  # EC2's IPv6 instance metadata
        "fec0::1",  # site-local (deprecated)
        "fe80::1%eth0",
        "ff02::1",
    ],
)
def test_ipv6_addresses_that_reach_an_internal_ipv4_or_no_global_host_are_refused(address: str) -> None:
    assert not public_address(address), address
    with pytest.raises(ClientDocumentError, match="not public"):
        GuardedFetch(resolve=lambda host, port: ["93.184.216.34", address])("https://app.example/c.json")


def test_nat64_to_a_public_ipv4_and_global_unicast_pass() -> None:
    # What a VPC's DNS64 answers for an IPv4-only host: a document there is fetched.
    assert public_address("64:ff9b::5db8:d822")  # 93.184.216.34
    assert public_address("2606:2800:220:1::1") and public_address("93.184.216.34")


def test_a_slow_name_lookup_counts_against_the_fetchs_deadline() -> None:
    import threading
    import time

    release = threading.Event()

    def slow(host: str, port: int) -> list[str]:
        release.wait(5)
        return ["93.184.216.34"]

    started = time.monotonic()
    with pytest.raises(ClientDocumentError, match="took too long"):
        GuardedFetch(timeout=0.3, resolve=slow)("https://app.example/c.json")
    release.set()
    assert time.monotonic() - started < 2
