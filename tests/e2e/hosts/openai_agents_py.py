"""OpenAI Agents SDK (Python): ``MCPServerStreamableHttp`` with its defaults (among them
``client_session_timeout_seconds=5``) and the ``FunctionTool`` an agent gets for each MCP tool
(``MCPUtil.to_function_tool``), invoked as the runner invokes it (``on_invoke_tool``). It has
no elicitation or progress callback. Aborting = cancelling the asyncio task that runs the
tool (what a cancelled run does)."""

from __future__ import annotations

import json
from importlib.metadata import version
from typing import Any

from agents import Agent, RunContextWrapper
from agents.mcp import MCPServerStreamableHttp, MCPUtil
from agents.tool_context import ToolContext
from common import ProgressSink, answer_text, cancel_task_after, main


class OpenAiAgentsPy:
    name = "openai-agents-py"
    version = f"openai-agents {version('openai-agents')} (mcp {version('mcp')})"
    progress = "none: no progress callback"
    elicitation = "none: no elicitation callback"

    async def open(self, url: str) -> None:
        self.server = MCPServerStreamableHttp({"url": url}, name="taskgate")
        await self.server.connect()
        self.agent = Agent(name="host", mcp_servers=[self.server])
        listed = await self.server.list_tools(RunContextWrapper(context=None), self.agent)
        self.tools = {
            # failure_error_function=None: the error itself, not the text the model would get
            # ("An error occurred while running the tool"), so the matrix can say what it was.
            tool.name: MCPUtil.to_function_tool(
                tool,
                self.server,
                convert_schemas_to_strict=False,
                agent=self.agent,
                failure_error_function=None,
            )
            for tool in listed
        }

    async def close(self) -> None:
        await self.server.cleanup()

    async def list_tools(self) -> list[str]:
        return sorted(self.tools)

    async def call(self, tool: str, arguments: dict[str, Any], on_progress: ProgressSink | None) -> str:
        text = json.dumps(arguments)
        ctx = ToolContext(
            context=None, tool_name=tool, tool_call_id=f"call-{tool}", tool_arguments=text, agent=self.agent
        )
        return answer_text(await self.tools[tool].on_invoke_tool(ctx, text))

    async def cancel(self, tool: str, arguments: dict[str, Any], after: float) -> str:
        return await cancel_task_after(self.call(tool, arguments, None), after, "on_invoke_tool")


if __name__ == "__main__":
    main(OpenAiAgentsPy())
