"""A request's body, read within a bound: below every app that reads one (the MCP endpoint,
callbacks, sign-in's forms)."""

from __future__ import annotations

from starlette.requests import Request


def too_large(max_body_bytes: int) -> str:
    return f"Request body larger than {max_body_bytes} bytes"


async def bounded_body(request: Request, max_body_bytes: int) -> bytes | None:
    """The body, or None as soon as it is known to pass ``max_body_bytes``: from its
    declared ``Content-Length`` before a byte is read, else while reading, so a huge
    body (declared or streamed chunked) costs at most the bound in memory. The server
    reads from the socket only as the app asks (uvicorn's flow control), so the rest
    is never received."""
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > max_body_bytes:
        return None
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > max_body_bytes:
            return None
        chunks.append(chunk)
    return b"".join(chunks)
