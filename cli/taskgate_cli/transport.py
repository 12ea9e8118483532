"""HTTP for the CLI, stdlib only: JSON-RPC POSTs answered with JSON or an SSE stream."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.client import HTTPResponse
from types import TracebackType
from typing import Any


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


def iter_sse(response: HTTPResponse) -> Iterator[SseEvent]:
    """Events of a ``text/event-stream`` body as they arrive (not after the stream ends)."""
    event_id: str | None = None
    data: list[str] = []
    retry: int | None = None
    seen_field = False
    while True:
        raw = response.readline()
        if not raw:
            break
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


@dataclass
class Reply:
    """One HTTP answer: a parsed JSON body, or an open event stream to iterate."""

    status: int
    headers: dict[str, str]
    body: Any = None
    _response: HTTPResponse | None = field(default=None, repr=False)

    @property
    def is_stream(self) -> bool:
        return self._response is not None

    def events(self) -> Iterator[SseEvent]:
        if self._response is None:
            return iter(())
        return iter_sse(self._response)

    def close(self) -> None:
        if self._response is not None:
            self._response.close()
            self._response = None

    def __enter__(self) -> Reply:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()


def _retry_after(headers: dict[str, str]) -> float | None:
    try:
        return float(headers["retry-after"])
    except (KeyError, ValueError):
        return None


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
            err_headers = {k.lower(): v for k, v in err.headers.items()}
            raw = err.read()
            status = err.code
            err.close()
            try:
                parsed = json.loads(raw) if raw else None
            except ValueError:
                parsed = None
            if isinstance(parsed, dict) and ("error" in parsed or "result" in parsed):
                return Reply(status, err_headers, parsed)
            retryable = status == 429 or status >= 500
            text = raw.decode("utf-8", errors="replace").strip()[:200]
            raise ConnectionTrouble(
                f"HTTP {status} from {self.url}" + (f": {text}" if text else ""),
                retryable=retryable,
                retry_after=_retry_after(err_headers),
            ) from None
        except urllib.error.URLError as err:
            raise ConnectionTrouble(f"cannot reach {self.url}: {err.reason}", retryable=True) from None
        except (TimeoutError, ConnectionError) as err:
            raise ConnectionTrouble(f"cannot reach {self.url}: {err}", retryable=True) from None
        resp_headers = {k.lower(): v for k, v in response.headers.items()}
        content_type = resp_headers.get("content-type", "")
        if content_type.startswith("text/event-stream"):
            return Reply(response.status, resp_headers, None, response)
        try:
            raw = response.read()
        except (TimeoutError, OSError) as err:
            raise ConnectionTrouble(f"connection to {self.url} broke: {err}", retryable=True) from None
        finally:
            response.close()
        if not raw:
            return Reply(response.status, resp_headers, None)
        try:
            return Reply(response.status, resp_headers, json.loads(raw))
        except ValueError:
            raise ConnectionTrouble(
                f"{self.url} answered HTTP {response.status} with something that is not JSON "
                f"({content_type or 'no content-type'}); is this an MCP endpoint?"
            ) from None
