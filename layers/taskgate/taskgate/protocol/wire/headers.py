"""The headers MCP defines: well-formed bytes, one of each, and routing headers
(SEP-2243) that agree with the body.

Intermediaries route on ``Mcp-Method`` / ``Mcp-Name`` / ``Mcp-Param-*`` without
parsing JSON, so a server that let them disagree with the body would let a
request be routed as one thing and executed as another; nor may a header be sent
twice, with a proxy reading one copy and this server another.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Mapping
from typing import Any

from ...codes import HEADER_MISMATCH, INVALID_REQUEST
from .errors import RpcError
from .jsonrpc import Request

_BASE64 = re.compile(r"=\?base64\?(.*)\?=")
# RFC 9110 field values: visible ASCII, space and horizontal tab (what SEP-2243
# requires of MCP's headers; anything else travels Base64-encoded).
_FIELD_VALUE = re.compile(rb"[\t\x20-\x7e]*")
_ROUTING = ("mcp-method", "mcp-name", "mcp-param-")
# Headers this server reads as one value each.
_SINGLE = (
    "mcp-method",
    "mcp-name",
    "mcp-protocol-version",
    "mcp-session-id",
    "last-event-id",
    "authorization",
)


def _mismatch(message: str) -> RpcError:
    return RpcError(HEADER_MISMATCH, f"Header mismatch: {message}")


def _defined_by_mcp(name: str) -> bool:
    return name.startswith(("mcp-", "last-event-id"))


def header_problem(raw: list[tuple[bytes, bytes]]) -> RpcError | None:
    """What is wrong with a request's raw header bytes, if anything (answered with
    HTTP 400): a name or value that is not UTF-8; a header MCP defines that carries
    more than visible ASCII; one of those, or ``Authorization``, sent twice.
    Routing headers get -32020 (SEP-2243's HeaderMismatch), the others -32600."""
    seen: set[str] = set()
    for raw_name, raw_value in raw:
        try:
            name = raw_name.decode("ascii").lower()
            raw_value.decode("utf-8")
        except UnicodeDecodeError:
            shown = raw_name.decode("latin-1")[:64]
            return RpcError(INVALID_REQUEST, f"Invalid Request: the {shown!r} header is not valid UTF-8")
        routing = name.startswith(_ROUTING)
        if _defined_by_mcp(name) and not _FIELD_VALUE.fullmatch(raw_value):
            what = f"{name} carries characters outside visible ASCII (send them as =?base64?…?=)"
            return _mismatch(what) if routing else RpcError(INVALID_REQUEST, f"Invalid Request: {what}")
        if name in seen and (name in _SINGLE or name.startswith("mcp-param-")):
            what = f"{name} appears more than once"
            return _mismatch(what) if routing else RpcError(INVALID_REQUEST, f"Invalid Request: {what}")
        seen.add(name)
    return None


def check_routing_headers(headers: Mapping[str, str], request: Request, field: str | None) -> None:
    """``field``: the params field ``Mcp-Name`` mirrors for this method (the
    method's registry entry says which), or None."""
    method = headers.get("mcp-method")
    if method is None:
        raise _mismatch("the Mcp-Method header is required")
    if method.strip() != request.method:
        raise _mismatch("Mcp-Method does not match the request's method")
    if field and isinstance(request.params.get(field), str):
        name = headers.get("mcp-name")
        if name is None:
            raise _mismatch(f"the Mcp-Name header is required for {request.method}")
        if _decoded(name.strip(), "Mcp-Name") != request.params[field]:
            raise _mismatch(f"Mcp-Name does not match params.{field}")


def _decoded(raw: str, header: str) -> str:
    """A header value, with the Base64 sentinel form (``=?base64?…?=``) decoded: how a
    value that is not plain ASCII (a URI with non-ASCII characters) travels."""
    encoded = _BASE64.fullmatch(raw)
    if not encoded:
        return raw
    try:
        return base64.b64decode(encoded.group(1), validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError) as exc:
        raise _mismatch(f"{header} is not valid Base64") from exc


def _header_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def check_param_headers(
    headers: Mapping[str, str], input_schema: dict[str, Any], arguments: dict[str, Any]
) -> None:
    """Arguments annotated ``x-mcp-header: Name`` must be mirrored in ``Mcp-Param-Name``."""
    for prop, schema in (input_schema.get("properties") or {}).items():
        if not isinstance(schema, dict) or "x-mcp-header" not in schema:
            continue
        if arguments.get(prop) is None:
            continue
        header = f"mcp-param-{str(schema['x-mcp-header']).lower()}"
        raw = headers.get(header)
        if raw is None:
            raise _mismatch(f"the Mcp-Param-{schema['x-mcp-header']} header is required")
        raw = _decoded(raw.strip(), f"Mcp-Param-{schema['x-mcp-header']}")
        if raw != _header_value(arguments[prop]):
            raise _mismatch(f"Mcp-Param-{schema['x-mcp-header']} does not match arguments.{prop}")
