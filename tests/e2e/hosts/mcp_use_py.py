"""mcp-use (Python): ``MCPClient`` from a config, and the LangChain tools its own
``LangChainAdapter`` makes (what ``MCPAgent`` hands its model), with its elicitation callback.
It passes no progress callback to ``call_tool``. Aborting = cancelling the asyncio task
that awaits the tool."""

from __future__ import annotations

import os
from importlib.metadata import version
from typing import Any

os.environ.setdefault("MCP_USE_ANONYMIZED_TELEMETRY", "false")  # no network beyond the registries

from common import ProgressSink, answer_text, cancel_task_after, main
from mcp.types import ElicitRequestParams, ElicitResult
from mcp_use import MCPClient
from mcp_use.agents.adapters import LangChainAdapter


class McpUsePy:
    name = "mcp-use"
    version = f"mcp-use {version('mcp-use')} (mcp {version('mcp')})"
    progress = "none: its tools call call_tool without a progress callback"
    elicitation = "callback"

    async def open(self, url: str) -> None:
        async def on_elicitation(ctx: Any, params: ElicitRequestParams) -> ElicitResult:
            return ElicitResult(action="accept", content={"confirm": True})

        self.client = MCPClient(
            {"mcpServers": {"taskgate": {"url": url}}}, elicitation_callback=on_elicitation
        )
        await self.client.create_all_sessions()
        self.tools = {tool.name: tool for tool in await LangChainAdapter().create_tools(self.client)}

    async def close(self) -> None:
        await self.client.close_all_sessions()

    async def list_tools(self) -> list[str]:
        return sorted(self.tools)

    async def call(self, tool: str, arguments: dict[str, Any], on_progress: ProgressSink | None) -> str:
        return answer_text(await self.tools[tool].ainvoke(arguments))

    async def cancel(self, tool: str, arguments: dict[str, Any], after: float) -> str:
        return await cancel_task_after(self.tools[tool].ainvoke(arguments), after, "ainvoke")


if __name__ == "__main__":
    main(McpUsePy())
