"""JSON-RPC 2.0 envelopes: what a message is, and how replies are built."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ...codes import INVALID_REQUEST
from .errors import RpcError


@dataclass(frozen=True)
class Request:
    """A JSON-RPC request or notification, as parsed."""

    id: str | int | None
    method: str
    params: dict[str, Any]

    @property
    def is_notification(self) -> bool:
        return self.id is None

    @property
    def meta(self) -> dict[str, Any]:
        meta = self.params.get("_meta")
        return meta if isinstance(meta, dict) else {}


@dataclass(frozen=True)
class ClientResponse:
    """A response the client POSTs back (an answer to a server-to-client request)."""

    id: str | int
    result: Any
    error: Any


def parse_message(message: Any) -> Request | ClientResponse:
    """Validate one JSON-RPC message; raise RpcError(-32600) when it is not one."""
    if not isinstance(message, dict):
        raise RpcError(INVALID_REQUEST, "Invalid Request: expected a JSON-RPC object")
    if message.get("jsonrpc") != "2.0":
        raise RpcError(INVALID_REQUEST, 'Invalid Request: jsonrpc must be "2.0"')
    has_id = "id" in message
    msg_id = message.get("id")
    if has_id and (isinstance(msg_id, bool) or not isinstance(msg_id, (str, int))):
        raise RpcError(INVALID_REQUEST, "Invalid Request: id must be a string or an integer")
    if "method" in message:
        method = message["method"]
        if not isinstance(method, str) or not method:
            raise RpcError(INVALID_REQUEST, "Invalid Request: method must be a non-empty string")
        params = message.get("params", {})
        if params is None:
            params = {}
        if not isinstance(params, dict):
            raise RpcError(INVALID_REQUEST, "Invalid Request: params must be an object")
        return Request(id=msg_id if has_id else None, method=method, params=params)
    if isinstance(msg_id, (str, int)) and ("result" in message or "error" in message):
        return ClientResponse(id=msg_id, result=message.get("result"), error=message.get("error"))
    raise RpcError(INVALID_REQUEST, "Invalid Request: neither a request nor a response")


def request_id(message: Any) -> str | int | None:
    """The id to answer with, read leniently: an invalid message still gets its id back."""
    msg_id = message.get("id") if isinstance(message, dict) else None
    if isinstance(msg_id, bool) or not isinstance(msg_id, (str, int)):
        return None
    return msg_id


def success(msg_id: Any, result: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": msg_id, "result": result}


def failure(msg_id: Any, error: RpcError) -> dict[str, Any]:
    # MCP's schema has no null id: when the request's id is unknown (unparseable
    # body), the error goes out without one.
    out: dict[str, Any] = {"jsonrpc": "2.0", "error": error.to_error()}
    if msg_id is not None:
        out["id"] = msg_id
    return out
