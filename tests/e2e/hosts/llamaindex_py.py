"""LlamaIndex: ``BasicMCPClient(url)`` with its defaults (a 30 s timeout) and the
``FunctionTool``s ``McpToolSpec`` makes (``tool.acall``, what an agent calls). Its tools call
``call_tool`` without a progress callback, and it has no elicitation callback. Aborting =
cancelling the asyncio task that awaits ``acall``."""

from __future__ import annotations

from importlib.metadata import version
from typing import Any

from common import ProgressSink, answer_text, cancel_task_after, main
from llama_index.tools.mcp import BasicMCPClient, McpToolSpec


class LlamaIndex:
    name = "llamaindex"
    version = f"llama-index-tools-mcp {version('llama-index-tools-mcp')} (mcp {version('mcp')})"
    progress = "none: its tools call call_tool without a progress callback"
    elicitation = "none: no elicitation callback"

    async def open(self, url: str) -> None:
        self.client = BasicMCPClient(url)
        tools = await McpToolSpec(client=self.client).to_tool_list_async()
        self.tools = {tool.metadata.name: tool for tool in tools}

    async def close(self) -> None:
        return None  # each call opened and closed its own session

    async def list_tools(self) -> list[str]:
        return sorted(self.tools)

    async def call(self, tool: str, arguments: dict[str, Any], on_progress: ProgressSink | None) -> str:
        output = await self.tools[tool].acall(**arguments)
        if output.is_error:
            raise RuntimeError(f"ToolOutput is_error: {output.content}")
        return answer_text(output.raw_output)

    async def cancel(self, tool: str, arguments: dict[str, Any], after: float) -> str:
        return await cancel_task_after(self.tools[tool].acall(**arguments), after, "acall")


if __name__ == "__main__":
    main(LlamaIndex())
