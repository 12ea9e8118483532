"""Lambda's Runtime API (2018-06-01) on a loopback port, with its streaming response mode,
for tests that run a function's real runtime loop as Lambda would start it.

It hands out queued events on ``/invocation/next`` and records each response as it
arrives: a streamed one (``Lambda-Runtime-Function-Response-Mode: streaming``, chunked)
chunk by chunk with the time each chunk came in, and its error trailers; a buffered one
whole; ``/error`` and ``/init/error`` reports. So a test sees bytes leave the function
before the work behind them ends, and when.
"""

from __future__ import annotations

import json
import queue
import socket
import threading
import time
import uuid
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

DELIMITER = b"\0" * 8


@dataclass
class Response:
    request_id: str
    sent_at: float
    headers: dict[str, str] = field(default_factory=dict)
    # (monotonic arrival time, bytes) of every chunk, in order.
    chunks: list[tuple[float, bytes]] = field(default_factory=list)
    trailers: dict[str, str] = field(default_factory=dict)
    error: dict[str, Any] | None = None
    done: threading.Event = field(default_factory=threading.Event)
    # Close the connection after this many chunks, as a caller that goes away would
    # (None: read the response to its end).
    hang_up_after: int | None = None
    # The caller goes away after this many chunks, as on AWS: API Gateway and Lambda keep
    # taking what the function writes and tell it nothing (the connection stays open).
    client_leaves_after: int | None = None
    left_at: float | None = None

    @property
    def streamed(self) -> bool:
        return self.headers.get("lambda-runtime-function-response-mode") == "streaming"

    @property
    def body(self) -> bytes:
        return b"".join(chunk for _, chunk in self.chunks)

    def prelude(self) -> dict[str, Any]:
        head, sep, _ = self.body.partition(DELIMITER)
        assert sep, "no prelude delimiter in the streamed response"
        return json.loads(head)  # type: ignore[no-any-return]

    def payload(self) -> bytes:
        return self.body.partition(DELIMITER)[2]

    def arrivals(self, marker: bytes) -> list[float]:
        """When each chunk containing ``marker`` arrived (seconds after the event was sent)."""
        return [at - self.sent_at for at, chunk in self.chunks if marker in chunk]


class RuntimeApiEmulator:
    def __init__(self) -> None:
        self._events: queue.Queue[tuple[str, bytes]] = queue.Queue()
        self.responses: dict[str, Response] = {}
        self.init_errors: list[dict[str, Any]] = []
        emulator = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                return

            def do_GET(self) -> None:
                if not self.path.endswith("/runtime/invocation/next"):
                    self.send_error(404)
                    return
                request_id, event = emulator._events.get()
                response = emulator.responses[request_id]
                response.sent_at = time.monotonic()
                self.send_response(200)
                self.send_header("Lambda-Runtime-Aws-Request-Id", request_id)
                self.send_header("Lambda-Runtime-Deadline-Ms", str(int(time.time() * 1000) + 900_000))
                self.send_header(
                    "Lambda-Runtime-Invoked-Function-Arn", "arn:aws:lambda:us-east-1:0:function:f"
                )
                self.send_header("Content-Length", str(len(event)))
                self.end_headers()
                self.wfile.write(event)

            def do_POST(self) -> None:
                if self.path.endswith("/runtime/init/error"):
                    emulator.init_errors.append(json.loads(self._whole_body()))
                    self._accepted()
                    return
                parts = self.path.split("/")
                request_id, kind = parts[-2], parts[-1]
                response = emulator.responses.get(request_id)
                if response is None:
                    self.send_error(404)
                    return
                response.headers = {k.lower(): v for k, v in self.headers.items()}
                if kind == "error":
                    response.error = json.loads(self._whole_body())
                elif self.headers.get("Transfer-Encoding", "").lower() == "chunked":
                    self._chunked(response)
                else:
                    response.chunks.append((time.monotonic(), self._whole_body()))
                self._accepted()
                response.done.set()

            def _whole_body(self) -> bytes:
                return self.rfile.read(int(self.headers.get("Content-Length") or 0))

            def _chunked(self, response: Response) -> None:
                while True:
                    size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                    if size == 0:
                        break
                    data = self.rfile.read(size)
                    self.rfile.readline()  # the CRLF after the chunk
                    response.chunks.append((time.monotonic(), data))
                    if response.client_leaves_after == len(response.chunks):
                        response.left_at = time.monotonic()
                    if response.hang_up_after is not None and len(response.chunks) >= response.hang_up_after:
                        self.close_connection = True
                        self.connection.shutdown(socket.SHUT_RDWR)
                        response.done.set()
                        raise ConnectionAbortedError("the caller went away")
                while (line := self.rfile.readline().strip()) != b"":
                    name, _, value = line.decode().partition(":")
                    response.trailers[name.strip().lower()] = value.strip()

            def _accepted(self) -> None:
                self.send_response(202)
                self.send_header("Content-Length", "0")
                self.end_headers()

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def address(self) -> str:
        host, port = self._server.server_address[:2]
        return f"{host}:{port}"

    def start(self) -> RuntimeApiEmulator:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def send(
        self,
        event: dict[str, Any],
        *,
        hang_up_after: int | None = None,
        client_leaves_after: int | None = None,
    ) -> Response:
        """Queue ``event`` for the function's next ``/next``; the response fills in as it arrives."""
        request_id = str(uuid.uuid4())
        response = Response(
            request_id,
            sent_at=time.monotonic(),
            hang_up_after=hang_up_after,
            client_leaves_after=client_leaves_after,
        )
        self.responses[request_id] = response
        self._events.put((request_id, json.dumps(event).encode()))
        return response

    def invoke(self, event: dict[str, Any], timeout: float = 60) -> Response:
        response = self.send(event)
        assert response.done.wait(timeout), f"no response within {timeout}s"
        return response


def rest_api_event(
    body: dict[str, Any] | None, headers: dict[str, str], *, method: str = "POST", path: str = "/mcp"
) -> dict[str, Any]:
    """An API Gateway REST API (payload 1.0) proxy event, as a streaming integration sends it."""
    return {
        "resource": "/{proxy+}",
        "path": path,
        "httpMethod": method,
        "headers": {"host": "localhost", **headers},
        "multiValueHeaders": {},
        "queryStringParameters": None,
        "multiValueQueryStringParameters": None,
        "pathParameters": {"proxy": path.lstrip("/")},
        "stageVariables": None,
        "requestContext": {
            "resourcePath": "/{proxy+}",
            "httpMethod": method,
            "path": f"/prod{path}",
            "stage": "prod",
            "domainName": "localhost",
            "identity": {"sourceIp": "127.0.0.1"},
            "requestId": str(uuid.uuid4()),
        },
        "body": json.dumps(body) if body is not None else None,
        "isBase64Encoded": False,
    }
