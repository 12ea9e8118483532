"""Streamable HTTP routing headers (SEP-2243): they must agree with the body.

Intermediaries route on ``Mcp-Method`` / ``Mcp-Name`` / ``Mcp-Param-*`` without
parsing JSON, so a server that let them disagree with the body would let a
request be routed as one thing and executed as another.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Mapping
from typing import Any

from ..codes import HEADER_MISMATCH
from .errors import RpcError
from .jsonrpc import Request

_BASE64 = re.compile(r"=\?base64\?(.*)\?=")


def _mismatch(message: str) -> RpcError:
    return RpcError(HEADER_MISMATCH, f"Header mismatch: {message}")


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
