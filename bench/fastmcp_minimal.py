"""The minimal FastMCP 4 server bench/run.py times at import (cold start, run with the
.tools/bench/fastmcp venv): one tool, ``FastMCP(...)`` and its stateless HTTP ASGI app
built, not served. No tasks extension (``fastmcp_server.py`` is the one with it)."""

from __future__ import annotations

from fastmcp import FastMCP

mcp = FastMCP("bench-minimal")


@mcp.tool
def slow_compute(seconds: float = 0, label: str = "compute") -> str:
    """Return at once (the cold-start figure only builds the server)."""
    return f"{label} finished after {seconds:g} seconds"


app = mcp.http_app(path="/mcp", stateless_http=True, json_response=True)
