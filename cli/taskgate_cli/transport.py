"""HTTP for the CLI, stdlib only: JSON-RPC POSTs answered with JSON or an SSE stream.

The protocol clients talk to a ``Transport``: anything that sends one request and
returns a ``Reply``. ``Http`` is the CLI's (urllib); tests and the bench plug in their
own (Starlette's TestClient, an in-process call, httpx) and build replies with
``reply_of`` so that every transport reads an answer the same way.
"""

from __future__ import annotations

import io
import json
import urllib.error
import urllib.request
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from http.client import HTTPResponse
from types import TracebackType
from typing import Any, Protocol


class ConnectionTrouble(Exception):
    """The server could not be reached or answered something that is not JSON-RPC.

    ``retryable`` marks what a poll may simply try again (refused or dropped
    connections, timeouts, HTTP 429 and 5xx).
    """

    def __init__(self, message: str, *, retryable: bool = False, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.retryable = retryable
        self.retry_after = retry_after


class RpcError(Exception):
    """A JSON-RPC error the server answered."""

    def __init__(self, code: int, message: str, data: Any = None, http_status: int = 200) -> None:
        super().__init__(f"{message} ({code})")
        self.code = code
        self.message = message
        self.data = data
        self.http_status = http_status

    @classmethod
    def from_error(cls, error: Any, http_status: int = 200) -> RpcError:
        if not isinstance(error, dict):
            return cls(-32603, f"malformed error: {error!r}", None, http_status)
        code = error.get("code")
        return cls(
            code if isinstance(code, int) else -32603,
            str(error.get("message", "unknown error")),
            error.get("data"),
            http_status,
        )


@dataclass
class SseEvent:
    id: str | None
    data: str
    retry_ms: int | None = None

    def message(self) -> dict[str, Any] | None:
        """The JSON-RPC message the event carries; None for a priming (empty) event."""
        if not self.data.strip():
            return None
        parsed = json.loads(self.data)
        return parsed if isinstance(parsed, dict) else None


def iter_sse(lines: Iterable[bytes]) -> Iterator[SseEvent]:
    """Events of a ``text/event-stream`` body, line by line as they arrive (not after
    the stream ends)."""
    event_id: str | None = None
    data: list[str] = []
    retry: int | None = None
    seen_field = False
    for raw in lines:
        line = raw.decode("utf-8", errors="replace").rstrip("\r\n")
        if not line:
            if seen_field:
                yield SseEvent(event_id, "\n".join(data), retry)
            event_id, data, retry, seen_field = None, [], None, False
            continue
        if line.startswith(":"):
            continue
        name, _, value = line.partition(":")
        value = value.removeprefix(" ")
        seen_field = True
        if name == "data":
            data.append(value)
        elif name == "id":
            event_id = value
        elif name == "retry" and value.isdigit():
            retry = int(value)
    if seen_field:
        yield SseEvent(event_id, "\n".join(data), retry)


def parse_sse(body: bytes | str) -> list[SseEvent]:
    """Every event of a complete ``text/event-stream`` body."""
    data = body.encode() if isinstance(body, str) else body
    return list(iter_sse(io.BytesIO(data)))


@dataclass
class Reply:
    """One HTTP answer: a parsed JSON body, or an event stream's lines to read as
    events (``closer`` releases the connection under them)."""

    status: int
    headers: dict[str, str]
    body: Any = None
    lines: Iterator[bytes] | None = field(default=None, repr=False)
    closer: Callable[[], None] | None = field(default=None, repr=False)

    @property
    def is_stream(self) -> bool:
        return self.lines is not None

    def events(self) -> Iterator[SseEvent]:
        if self.lines is None:
            return iter(())
        return iter_sse(self.lines)

    def close(self) -> None:
        if self.closer is not None:
            self.closer()
            self.closer = None

    def __enter__(self) -> Reply:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()


class Transport(Protocol):
    """Sends one request to the MCP endpoint. ``body`` is a JSON value (None for
    GET/DELETE); ``headers`` are lower-case names."""

    def send(
        self, method: str, headers: dict[str, str], body: Any = None, *, timeout: float | None = None
    ) -> Reply: ...


def _retry_after(headers: dict[str, str]) -> float | None:
    try:
        return float(headers["retry-after"])
    except (KeyError, ValueError):
        return None


def reply_of(status: int, headers: dict[str, str], raw: bytes, where: str = "the server") -> Reply:
    """What a complete answer means: an event stream, a JSON body (a JSON-RPC error
    too, whatever the status), or ``ConnectionTrouble`` (retryable for 429 and 5xx)."""
    headers = {k.lower(): v for k, v in headers.items()}
    content_type = headers.get("content-type", "")
    if status < 400 and content_type.startswith("text/event-stream"):
        return Reply(status, headers, lines=io.BytesIO(raw))
    try:
        parsed, is_json = (json.loads(raw) if raw else None), True
    except ValueError:
        parsed, is_json = None, False
    if status >= 400:
        if isinstance(parsed, dict) and ("error" in parsed or "result" in parsed):
            return Reply(status, headers, parsed)
        text = raw.decode("utf-8", errors="replace").strip()[:200]
        raise ConnectionTrouble(
            f"HTTP {status} from {where}" + (f": {text}" if text else ""),
            retryable=status == 429 or status >= 500,
            retry_after=_retry_after(headers),
        )
    if not is_json:
        raise ConnectionTrouble(
            f"{where} answered HTTP {status} with something that is not JSON "
            f"({content_type or 'no content-type'}); is this an MCP endpoint?"
        )
    return Reply(status, headers, parsed)


class Http:
    """POST/GET/DELETE to one MCP endpoint with fixed extra headers (auth, …)."""

    def __init__(self, url: str, headers: dict[str, str], timeout: float = 60.0) -> None:
        self.url = url
        self.headers = headers
        self.timeout = timeout

    def send(
        self,
        method: str,
        headers: dict[str, str],
        body: Any = None,
        *,
        timeout: float | None = None,
    ) -> Reply:
        data = None if body is None else json.dumps(body).encode()
        all_headers = {**self.headers, **headers}
        request = urllib.request.Request(self.url, data, all_headers, method=method)
        try:
            response: HTTPResponse = urllib.request.urlopen(request, timeout=timeout or self.timeout)
        except urllib.error.HTTPError as err:
            err_headers = dict(err.headers.items())
            raw = err.read()
            err.close()
            return reply_of(err.code, err_headers, raw, self.url)
        except urllib.error.URLError as err:
            raise ConnectionTrouble(f"cannot reach {self.url}: {err.reason}", retryable=True) from None
        except (TimeoutError, ConnectionError) as err:
            raise ConnectionTrouble(f"cannot reach {self.url}: {err}", retryable=True) from None
        resp_headers = {k.lower(): v for k, v in response.headers.items()}
        if resp_headers.get("content-type", "").startswith("text/event-stream"):
            return Reply(
                response.status, resp_headers, lines=iter(response.readline, b""), closer=response.close
            )
        try:
            raw = response.read()
        except (TimeoutError, OSError) as err:
            raise ConnectionTrouble(f"connection to {self.url} broke: {err}", retryable=True) from None
        finally:
            response.close()
        return reply_of(response.status, resp_headers, raw, self.url)
