"""The local server's uvicorn ``Server``, which says it serves only once it does.

The start line (``taskgate serving http://…/mcp``, with the tools it serves) is printed after
uvicorn has built the app, which imports the tool modules, and bound the port: a tool module
that fails to import, or a port already taken, ends the start with that error and no line
claiming success before it. With ``--reload`` the line comes again after every restart.
"""

from __future__ import annotations

import socket

import uvicorn
from uvicorn.supervisors import ChangeReload

from .. import wiring


def start_line(host: str, port: int) -> str:
    names = [tool.name for tool in wiring.root().tools]
    listed = ", ".join(names) if len(names) <= 8 else ", ".join(names[:8]) + f" and {len(names) - 8} more"
    return f"taskgate serving http://{host}:{port}/mcp ({len(names)} tools: {listed or 'none'})"


class AnnouncingServer(uvicorn.Server):
    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets=sockets)
        if self.started:  # uvicorn exits instead when it cannot bind
            print(start_line(self.config.host, self.config.port), flush=True)


def run(config: uvicorn.Config) -> None:
    """``uvicorn.run`` for a built ``config``, with the announcing server (and, when the config
    reloads, uvicorn's own reloading supervisor around it, as ``uvicorn.run`` does)."""
    server = AnnouncingServer(config)
    if config.should_reload:
        ChangeReload(config, target=server.run, sockets=[config.bind_socket()]).run()
    else:
        server.run()
