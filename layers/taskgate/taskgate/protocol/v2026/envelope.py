"""What every 2026-07-28 request must carry: the protocol version in a header and
in ``_meta`` (agreeing), the client's capabilities in ``_meta``, and routing
headers that agree with the body."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ...codes import HEADER_MISMATCH, INVALID_PARAMS, UNSUPPORTED_PROTOCOL_VERSION
from ...tools.input import ClientCapabilities
from ...tools.peer import LOG_LEVELS
from ..wire.errors import RpcError
from ..wire.headers import check_routing_headers
from ..wire.jsonrpc import Request
from ..wire.params import ToolCall
from ..wire.versions import is_stateless
from . import wire as w

if TYPE_CHECKING:
    from ..calls.outcomes import Invocation


def claims(headers: Mapping[str, str], meta: Mapping[str, Any]) -> bool:
    """A request is 2026-07-28 when its header or its ``_meta`` says so."""
    return is_stateless(headers, meta)


def check_envelope(headers: Mapping[str, str], request: Request, name_field: str | None) -> None:
    meta = request.meta
    header_version = headers.get("mcp-protocol-version")
    if header_version is None:
        raise RpcError(HEADER_MISMATCH, "Header mismatch: the MCP-Protocol-Version header is required")
    if w.META_PROTOCOL_VERSION not in meta or w.META_CLIENT_CAPABILITIES not in meta:
        raise RpcError(
            INVALID_PARAMS,
            f"Invalid params: _meta must carry {w.META_PROTOCOL_VERSION} and {w.META_CLIENT_CAPABILITIES}",
        )
    if meta[w.META_PROTOCOL_VERSION] != header_version:
        raise RpcError(HEADER_MISMATCH, "Header mismatch: MCP-Protocol-Version does not match _meta")
    if header_version != w.PROTOCOL_VERSION:
        raise RpcError(
            UNSUPPORTED_PROTOCOL_VERSION,
            "Unsupported protocol version",
            {"supported": [w.PROTOCOL_VERSION], "requested": header_version},
        )
    check_routing_headers(headers, request, name_field)
    level = meta.get(w.META_LOG_LEVEL)
    if level is not None and level not in LOG_LEVELS:
        raise RpcError(INVALID_PARAMS, f"Invalid params: _meta {w.META_LOG_LEVEL} is not a log level")


def capabilities(meta: Mapping[str, Any]) -> ClientCapabilities:
    """What the client declared in this request's ``_meta`` (each request says it again)."""
    declared = meta.get(w.META_CLIENT_CAPABILITIES)
    return ClientCapabilities(declared if isinstance(declared, dict) else {})


def invocation(params: ToolCall) -> Invocation:
    """A ``tools/call`` as this era carries it: a round's answers and the sealed state the
    round before handed out, the log level in ``_meta``, arguments mirrored in headers."""
    from ..calls.outcomes import Invocation  # with the first tools/call

    meta = params.meta or {}
    sent_null = "inputResponses" in params.model_fields_set and params.inputResponses is None
    return Invocation(
        params.name,
        params.arguments,
        answers=None if sent_null else params.inputResponses or {},
        request_state=params.requestState,
        progress_token=params.progress_token(),
        log_level=meta.get(w.META_LOG_LEVEL),
        param_headers=True,
    )
