"""PydanticAI: an ``MCPToolset`` for the URL, with its own elicitation and progress handlers,
called the way an agent run calls it (``get_tools`` then ``call_tool`` with a run context;
no model is asked anything). Aborting = cancelling the asyncio task that awaits the tool."""

from __future__ import annotations

from importlib.metadata import version
from typing import Any

from common import ProgressSink, answer_text, cancel_task_after, main
from pydantic_ai import RunContext
from pydantic_ai.mcp import MCPToolset
from pydantic_ai.models.test import TestModel
from pydantic_ai.usage import RunUsage


class PydanticAi:
    name = "pydantic-ai"
    version = f"pydantic-ai-slim {version('pydantic-ai-slim')} (fastmcp {version('fastmcp-slim')}, mcp {version('mcp')})"
    progress = "callback"
    elicitation = "callback"

    def __init__(self) -> None:
        self.sink: ProgressSink | None = None
        self.entered = False  # a toolset that failed to connect has nothing to exit

    async def open(self, url: str) -> None:
        async def on_elicitation(
            message: str, response_type: Any, params: Any, context: Any
        ) -> dict[str, Any]:
            return {"confirm": True}

        async def on_progress(progress: float, total: float | None, message: str | None) -> None:
            if self.sink is not None:
                self.sink(progress, total, message)

        # Defaults otherwise (prefer_tasks=True among them).
        self.toolset: MCPToolset[Any] = MCPToolset(
            url, elicitation_handler=on_elicitation, progress_handler=on_progress
        )
        await self.toolset.__aenter__()
        self.entered = True
        self.ctx = RunContext(deps=None, model=TestModel(), usage=RunUsage())
        self.tools = await self.toolset.get_tools(self.ctx)

    async def close(self) -> None:
        if self.entered:
            await self.toolset.__aexit__(None, None, None)

    async def list_tools(self) -> list[str]:
        return sorted(self.tools)

    async def call(self, tool: str, arguments: dict[str, Any], on_progress: ProgressSink | None) -> str:
        self.sink = on_progress
        return answer_text(await self.toolset.call_tool(tool, arguments, self.ctx, self.tools[tool]))

    async def cancel(self, tool: str, arguments: dict[str, Any], after: float) -> str:
        return await cancel_task_after(
            self.toolset.call_tool(tool, arguments, self.ctx, self.tools[tool]), after, "call_tool"
        )


if __name__ == "__main__":
    main(PydanticAi())
