"""The FastMCP 4 comparison server for bench/run.py (run it with the .tools/bench/fastmcp venv).

    python bench/fastmcp_server.py PORT    serve /mcp on 127.0.0.1:PORT

Importing it builds the app without serving (the cold-start figure "+ tasks").

One task-capable tool equivalent to taskgate's ``slow_compute``, the SEP-2663 tasks
extension on its in-memory Docket backend (``memory://``), stateless HTTP with JSON
responses (taskgate answers plain JSON too). Loopback only.
"""

from __future__ import annotations

import asyncio
import sys

from fastmcp import FastMCP
from fastmcp_tasks import TasksExtension

mcp = FastMCP("bench-fastmcp")
mcp.add_extension(TasksExtension(url="memory://"))


@mcp.tool(task=True)
async def slow_compute(seconds: float = 0, label: str = "compute") -> str:
    """Work for a number of seconds (0: return at once)."""
    if seconds > 0:
        await asyncio.sleep(seconds)
    return f"{label} finished after {seconds:g} seconds"


app = mcp.http_app(path="/mcp", stateless_http=True, json_response=True)


def main() -> None:
    import uvicorn

    port = int(sys.argv[1])
    print(f"fastmcp serving http://127.0.0.1:{port}/mcp", flush=True)
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning")


if __name__ == "__main__":
    main()
