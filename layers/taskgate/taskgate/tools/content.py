"""Content blocks a tool result is made of: text, image, audio, an embedded resource, a link
to a resource. Return a list of them (or a ``result(...)``) from a tool.

    from taskgate.tools import content as c

    return [c.text("Chart attached"), c.image(png_bytes, "image/png")]
    return c.result([c.text("Done")], structured={"rows": 12})
"""

from __future__ import annotations

import base64
from typing import Any

Block = dict[str, Any]


def _b64(data: bytes | str) -> str:
    # Bytes are encoded; a str is taken to be base64 already.
    return base64.b64encode(data).decode("ascii") if isinstance(data, bytes) else data


def _with(block: Block, annotations: dict[str, Any] | None, meta: dict[str, Any] | None) -> Block:
    if annotations:
        block["annotations"] = annotations
    if meta:
        block["_meta"] = meta
    return block


def text(
    value: str, *, annotations: dict[str, Any] | None = None, meta: dict[str, Any] | None = None
) -> Block:
    return _with({"type": "text", "text": value}, annotations, meta)


def image(
    data: bytes | str,
    mime_type: str,
    *,
    annotations: dict[str, Any] | None = None,
    meta: dict[str, Any] | None = None,
) -> Block:
    """``data``: the image's bytes, or its base64 text."""
    return _with({"type": "image", "data": _b64(data), "mimeType": mime_type}, annotations, meta)


def audio(
    data: bytes | str,
    mime_type: str,
    *,
    annotations: dict[str, Any] | None = None,
    meta: dict[str, Any] | None = None,
) -> Block:
    """``data``: the audio's bytes, or its base64 text."""
    return _with({"type": "audio", "data": _b64(data), "mimeType": mime_type}, annotations, meta)


def embedded(
    uri: str,
    *,
    text: str | None = None,
    blob: bytes | str | None = None,
    mime_type: str | None = None,
    annotations: dict[str, Any] | None = None,
    meta: dict[str, Any] | None = None,
) -> Block:
    """An embedded resource: its contents travel in the result (``text`` or ``blob``)."""
    if (text is None) == (blob is None):
        raise ValueError("an embedded resource has exactly one of text or blob")
    resource: dict[str, Any] = {"uri": uri}
    if mime_type:
        resource["mimeType"] = mime_type
    if text is not None:
        resource["text"] = text
    else:
        assert blob is not None
        resource["blob"] = _b64(blob)
    return _with({"type": "resource", "resource": resource}, annotations, meta)


def resource_link(
    uri: str,
    name: str,
    *,
    title: str | None = None,
    description: str | None = None,
    mime_type: str | None = None,
    size: int | None = None,
    annotations: dict[str, Any] | None = None,
    meta: dict[str, Any] | None = None,
) -> Block:
    """A link to a resource the client may read (``resources/read``); its contents stay behind."""
    block: Block = {"type": "resource_link", "uri": uri, "name": name}
    for key, value in (
        ("title", title),
        ("description", description),
        ("mimeType", mime_type),
        ("size", size),
    ):
        if value is not None:
            block[key] = value
    return _with(block, annotations, meta)


def result(
    blocks: list[Block],
    *,
    structured: dict[str, Any] | None = None,
    is_error: bool = False,
    meta: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """A whole ``CallToolResult``: content blocks, and ``structuredContent`` for a tool
    with an output schema."""
    out: dict[str, Any] = {"content": list(blocks), "isError": is_error}
    if structured is not None:
        out["structuredContent"] = structured
    if meta:
        out["_meta"] = meta
    return out
