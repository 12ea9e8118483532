"""A client of Lambda's Runtime API (2018-06-01), with its streaming response mode.

Written on sockets: a streamed response is an HTTP/1.1 chunked body whose trailers
may carry an error, and ``http.client`` cannot send trailers.
"""

from __future__ import annotations

import base64
import http.client
import json
import socket
from collections.abc import Iterator
from dataclasses import dataclass

_BASE = "/2018-06-01/runtime"
# The response body API Gateway and function URLs read: the HTTP prelude (status,
# headers, cookies as JSON), eight NUL bytes, then the payload.
HTTP_INTEGRATION_RESPONSE = "application/vnd.awslambda.http-integration-response"
ERROR_TYPE = "Lambda-Runtime-Function-Error-Type"
ERROR_BODY = "Lambda-Runtime-Function-Error-Body"


@dataclass(frozen=True)
class Invocation:
    request_id: str
    event: bytes
    deadline_ms: int
    function_arn: str
    trace_id: str | None


def error_document(exc: BaseException) -> dict[str, object]:
    return {"errorMessage": str(exc) or type(exc).__name__, "errorType": type(exc).__name__, "stackTrace": []}


class RuntimeApi:
    """``address`` is ``AWS_LAMBDA_RUNTIME_API`` (host:port)."""

    def __init__(self, address: str) -> None:
        host, _, port = address.rpartition(":")
        self._host = host or address
        self._port = int(port) if host else 80

    def _connection(self) -> http.client.HTTPConnection:
        # No timeout: /next is a long poll that returns when an invocation arrives.
        return http.client.HTTPConnection(self._host, self._port, timeout=None)

    def next(self) -> Invocation:
        conn = self._connection()
        try:
            conn.request("GET", f"{_BASE}/invocation/next")
            resp = conn.getresponse()
            body = resp.read()
            if resp.status != 200:
                raise RuntimeError(f"Runtime API /next answered {resp.status}: {body[:200]!r}")
            return Invocation(
                request_id=resp.headers["Lambda-Runtime-Aws-Request-Id"],
                event=body,
                deadline_ms=int(resp.headers.get("Lambda-Runtime-Deadline-Ms") or 0),
                function_arn=resp.headers.get("Lambda-Runtime-Invoked-Function-Arn", ""),
                trace_id=resp.headers.get("Lambda-Runtime-Trace-Id"),
            )
        finally:
            conn.close()

    def _post_json(self, path: str, document: dict[str, object], error_type: str) -> None:
        conn = self._connection()
        try:
            conn.request(
                "POST",
                path,
                body=json.dumps(document).encode(),
                headers={"Content-Type": "application/json", ERROR_TYPE: error_type},
            )
            conn.getresponse().read()
        finally:
            conn.close()

    def invocation_error(self, request_id: str, exc: BaseException) -> None:
        """The invocation failed before any byte of its response was sent."""
        self._post_json(f"{_BASE}/invocation/{request_id}/error", error_document(exc), "Runtime.HandlerError")

    def init_error(self, exc: BaseException) -> None:
        self._post_json(f"{_BASE}/init/error", error_document(exc), "Runtime.InitError")

    def stream(self, request_id: str, first: bytes, rest: Iterator[bytes]) -> bool:
        """Send ``first`` and then every chunk of ``rest`` as they come. A failure of
        ``rest`` after that becomes the error trailers (the status has been sent). False
        when the connection broke under us: nobody reads the rest, and ``rest`` is closed
        so the app sees its client gone."""
        head = (
            f"POST {_BASE}/invocation/{request_id}/response HTTP/1.1\r\n"
            f"Host: {self._host}:{self._port}\r\n"
            f"Content-Type: {HTTP_INTEGRATION_RESPONSE}\r\n"
            "Lambda-Runtime-Function-Response-Mode: streaming\r\n"
            "Transfer-Encoding: chunked\r\n"
            f"Trailer: {ERROR_TYPE}, {ERROR_BODY}\r\n"
            "\r\n"
        ).encode()
        sock = socket.create_connection((self._host, self._port))
        trailers = b""
        try:
            try:
                sock.sendall(head)
                _send_chunk(sock, first)
                for chunk in rest:
                    _send_chunk(sock, chunk)
            except OSError:
                close = getattr(rest, "close", None)
                if close is not None:
                    close()
                return False
            except Exception as exc:
                body = base64.b64encode(json.dumps(error_document(exc)).encode()).decode()
                trailers = f"{ERROR_TYPE}: Runtime.StreamError\r\n{ERROR_BODY}: {body}\r\n".encode()
            sock.sendall(b"0\r\n" + trailers + b"\r\n")
            _read_status(sock)
            return True
        except OSError:
            return False
        finally:
            sock.close()


def _send_chunk(sock: socket.socket, data: bytes) -> None:
    if data:  # a zero-length chunk would end the body
        sock.sendall(b"%x\r\n" % len(data) + data + b"\r\n")


def _read_status(sock: socket.socket) -> int:
    line = sock.makefile("rb").readline()
    parts = line.split()
    return int(parts[1]) if len(parts) > 1 and parts[1].isdigit() else 0
