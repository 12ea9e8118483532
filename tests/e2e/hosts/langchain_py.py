"""LangChain (Python): ``langchain-mcp-adapters``' MultiServerMCPClient and the LangChain tools
it makes (``StructuredTool.ainvoke``), with its own progress and elicitation callbacks.
Aborting = cancelling the asyncio task that awaits ``ainvoke``."""

from __future__ import annotations

from importlib.metadata import version
from typing import Any

from common import ProgressSink, answer_text, cancel_task_after, main
from langchain_mcp_adapters.callbacks import CallbackContext, Callbacks
from langchain_mcp_adapters.client import MultiServerMCPClient
from mcp.types import ElicitRequestParams, ElicitResult


class LangChainPy:
    name = "langchain-py"
    version = f"langchain-mcp-adapters {version('langchain-mcp-adapters')} (mcp {version('mcp')})"
    progress = "callback"
    elicitation = "callback"

    def __init__(self) -> None:
        self.sink: ProgressSink | None = None
        self.tools: dict[str, Any] = {}

    async def open(self, url: str) -> None:
        async def on_progress(
            progress: float, total: float | None, message: str | None, ctx: CallbackContext
        ) -> None:
            if self.sink is not None:
                self.sink(progress, total, message)

        async def on_elicitation(
            mcp_ctx: Any, params: ElicitRequestParams, ctx: CallbackContext
        ) -> ElicitResult:
            return ElicitResult(action="accept", content={"confirm": True})

        callbacks = Callbacks(on_progress=on_progress, on_elicitation=on_elicitation)
        # The documented default connection: streamable HTTP, nothing else set.
        self.client = MultiServerMCPClient(
            {"taskgate": {"url": url, "transport": "streamable_http"}}, callbacks=callbacks
        )
        self.tools = {tool.name: tool for tool in await self.client.get_tools()}

    async def close(self) -> None:
        return None  # each tool call opened and closed its own session

    async def list_tools(self) -> list[str]:
        return sorted(self.tools)

    async def call(self, tool: str, arguments: dict[str, Any], on_progress: ProgressSink | None) -> str:
        self.sink = on_progress
        return answer_text(await self.tools[tool].ainvoke(arguments))

    async def cancel(self, tool: str, arguments: dict[str, Any], after: float) -> str:
        return await cancel_task_after(self.tools[tool].ainvoke(arguments), after, "ainvoke")


if __name__ == "__main__":
    main(LangChainPy())
