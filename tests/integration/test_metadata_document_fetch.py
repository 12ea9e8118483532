"""The fetch of a Client ID Metadata Document, against a real https server on loopback (red
team round three, M2): a server that sends one byte every 2 seconds held a fetch for 46 s,
because the 5 s limit applied to each socket read. The whole fetch (connection, TLS, headers
and body) now ends at its deadline, however the server paces its bytes."""

from __future__ import annotations

import contextlib
import json
import pathlib
import socket
import ssl
import threading
import time
from collections.abc import Iterator

import pytest

from taskgate.auth.cimd import FETCH_SECONDS, ClientDocumentError, GuardedFetch
from tests.certificates import self_signed

DOCUMENT = json.dumps(
    {"client_id": "x", "redirect_uris": ["http://127.0.0.1/cb"], "token_endpoint_auth_method": "none"}
).encode()


@contextlib.contextmanager
def trickling_server(tmp: pathlib.Path, *, pause: float, head: bytes, body: bytes) -> Iterator[int]:
    """An https server on 127.0.0.1 that answers every request with ``head`` and ``body``,
    one byte every ``pause`` seconds (a slowloris in reverse); its port."""
    cert, key = self_signed(tmp, "trickle")
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(cert, key)
    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(0.2)
    stop = threading.Event()

    def answer(connection: socket.socket) -> None:
        with contextlib.suppress(OSError), context.wrap_socket(connection, server_side=True) as tls:
            tls.recv(4096)  # the request
            for byte in head + body:
                tls.sendall(bytes([byte]))
                if stop.wait(pause):
                    return

    def serve() -> None:
        while not stop.is_set():
            try:
                connection, _ = listener.accept()
            except TimeoutError:
                continue
            threading.Thread(target=answer, args=(connection,), daemon=True).start()

    server = threading.Thread(target=serve, daemon=True)
    server.start()
    try:
        yield listener.getsockname()[1]
    finally:
        stop.set()
        server.join()
        listener.close()


def _fetch(port: int, cert: pathlib.Path) -> GuardedFetch:
    return GuardedFetch(
        allow_hosts=frozenset({f"127.0.0.1:{port}"}),
        ssl_context=ssl.create_default_context(cafile=str(cert)),
    )


def test_a_server_sending_a_byte_every_two_seconds_cannot_hold_a_fetch_past_its_deadline(
    tmp_path: pathlib.Path,
) -> None:
    head = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nX-Slow: " + b"a" * 40 + b"\r\n\r\n"
    with trickling_server(tmp_path, pause=2.0, head=head, body=DOCUMENT) as port:
        fetch = _fetch(port, tmp_path / "trickle.pem")
        started = time.monotonic()
        with pytest.raises(ClientDocumentError, match=f"took more than {FETCH_SECONDS:g} s"):
            fetch(f"https://127.0.0.1:{port}/client.json")
        elapsed = time.monotonic() - started
    print(
        f"\nM2: trickling server (1 byte / 2 s): the fetch ended after {elapsed:.2f} s (deadline {FETCH_SECONDS:g} s)"
    )
    # The server would take 2 s x ~150 bytes; the per-read timeout (5 s) never fires on it.
    assert elapsed < FETCH_SECONDS + 1.5


def test_a_prompt_server_is_fetched_as_before(tmp_path: pathlib.Path) -> None:
    head = (
        b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nCache-Control: max-age=900\r\n"
        + f"Content-Length: {len(DOCUMENT)}\r\n\r\n".encode()
    )
    with trickling_server(tmp_path, pause=0.0, head=head, body=DOCUMENT) as port:
        body, max_age = _fetch(port, tmp_path / "trickle.pem")(f"https://127.0.0.1:{port}/client.json")
    assert json.loads(body)["client_id"] == "x" and max_age == 900


def test_failures_and_the_per_address_count_live_in_the_table(aws: object) -> None:
    """Two Lambda environments (two MetadataDocuments) on one DynamoDB table: a failed fetch
    is not repeated by the other, and the fetches one address causes are counted together."""
    import boto3

    from taskgate.adapters.dynamodb_signin import DynamoDBSignInStore
    from taskgate.auth import callers
    from taskgate.auth.cimd import MetadataDocuments

    ddb = boto3.client("dynamodb", region_name="us-east-1")
    store = DynamoDBSignInStore(lambda: ddb, aws.table_name)  # type: ignore[attr-defined]
    fetched: list[str] = []

    def fetch(url: str) -> tuple[bytes, int | None]:
        fetched.append(url)
        if "bad" in url:
            raise ClientDocumentError("the client id URL could not be fetched: timed out")
        document = {
            "client_id": url,
            "redirect_uris": ["http://127.0.0.1/cb"],
            "token_endpoint_auth_method": "none",
        }
        return json.dumps(document).encode(), None

    one, two = (MetadataDocuments(store, fetch=fetch, fetches_per_address=3) for _ in range(2))
    with callers.acting_for("198.51.100.77"):
        for documents in (one, two):
            with pytest.raises(ClientDocumentError):
                documents.client("https://bad.example/c.json")
        one.client("https://good.example/a.json")
        two.client("https://good.example/b.json")
        with pytest.raises(ClientDocumentError, match="too many"):
            one.client("https://good.example/c.json")
    assert fetched == [
        "https://bad.example/c.json",
        "https://good.example/a.json",
        "https://good.example/b.json",
    ]
