"""JSON-RPC 2.0 envelopes and the error codes MCP uses."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
# MCP 2026-07-28: routing headers that disagree with the body.
HEADER_MISMATCH = -32020
# MCP 2026-07-28: the request needs a client capability it did not declare.
MISSING_REQUIRED_CLIENT_CAPABILITY = -32021


class RpcError(Exception):
    """Raised anywhere below the dispatcher; becomes a JSON-RPC error response."""

    def __init__(self, code: int, message: str, data: Any = None, http_status: int = 200) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data
        self.http_status = http_status

    def to_error(self) -> dict[str, Any]:
        err: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.data is not None:
            err["data"] = self.data
        return err


@dataclass(frozen=True)
class Request:
    id: str | int | None
    method: str
    params: dict[str, Any]

    @property
    def is_notification(self) -> bool:
        return self.id is None


@dataclass(frozen=True)
class ClientResponse:
    """A response the client POSTs back (an answer to a server-to-client request)."""

    id: str | int
    result: Any
    error: Any


def parse_message(message: Any) -> Request | ClientResponse:
    """Validate one JSON-RPC message; raise RpcError(-32600) when it is not one."""
    if not isinstance(message, dict):
        raise RpcError(INVALID_REQUEST, "Invalid Request: expected a JSON-RPC object", http_status=400)
    if message.get("jsonrpc") != "2.0":
        raise RpcError(INVALID_REQUEST, 'Invalid Request: jsonrpc must be "2.0"', http_status=400)
    has_id = "id" in message
    msg_id = message.get("id")
    if has_id and (isinstance(msg_id, bool) or not isinstance(msg_id, (str, int))):
        raise RpcError(INVALID_REQUEST, "Invalid Request: id must be a string or an integer", http_status=400)
    if "method" in message:
        method = message["method"]
        if not isinstance(method, str) or not method:
            raise RpcError(
                INVALID_REQUEST, "Invalid Request: method must be a non-empty string", http_status=400
            )
        params = message.get("params", {})
        if params is None:
            params = {}
        if not isinstance(params, dict):
            raise RpcError(INVALID_REQUEST, "Invalid Request: params must be an object", http_status=400)
        return Request(id=msg_id if has_id else None, method=method, params=params)
    if isinstance(msg_id, (str, int)) and ("result" in message or "error" in message):
        return ClientResponse(id=msg_id, result=message.get("result"), error=message.get("error"))
    raise RpcError(INVALID_REQUEST, "Invalid Request: neither a request nor a response", http_status=400)


def success(msg_id: Any, result: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": msg_id, "result": result}


def failure(msg_id: Any, error: RpcError) -> dict[str, Any]:
    # MCP's schema has no null id: when the request's id is unknown (unparseable
    # body), the error goes out without one.
    out: dict[str, Any] = {"jsonrpc": "2.0", "error": error.to_error()}
    if msg_id is not None:
        out["id"] = msg_id
    return out
