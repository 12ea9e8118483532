"""Strands Agents: ``MCPClient(url=...)`` with its elicitation and progress callbacks, and the
``MCPAgentTool`` wrappers it lists (``tool.stream(tool_use, invocation_state)``, what an agent
runs). Tasks stay off (its ``tasks_config`` opt-in is not set). Aborting = the call's
``cancel_signal`` (what ``Agent.cancel()`` sets for the tools it runs)."""

from __future__ import annotations

import asyncio
import threading
from importlib.metadata import version
from typing import Any

import mcp_types as types
from common import ProgressSink, answer_text, main
from strands.tools.mcp import MCPClient


class Strands:
    name = "strands"
    version = f"strands-agents {version('strands-agents')} (mcp {version('mcp')})"
    progress = "callback"
    elicitation = "callback"

    def __init__(self) -> None:
        self.sink: ProgressSink | None = None
        self.cancel_signal = threading.Event()

    async def open(self, url: str) -> None:
        async def on_elicitation(context: Any, params: Any) -> types.ElicitResult:
            return types.ElicitResult(action="accept", content={"confirm": True})

        async def on_progress(progress: float, total: float | None, message: str | None) -> None:
            if self.sink is not None:
                self.sink(progress, total, message)

        self.client = MCPClient(url=url, elicitation_callback=on_elicitation, progress_callback=on_progress)
        await asyncio.to_thread(self.client.start)
        self.tools = {tool.tool_name: tool for tool in await asyncio.to_thread(self.client.list_tools_sync)}

    async def close(self) -> None:
        await asyncio.to_thread(self.client.stop, None, None, None)

    async def list_tools(self) -> list[str]:
        return sorted(self.tools)

    async def _stream(self, tool: str, arguments: dict[str, Any]) -> str:
        agent = _AgentState(self.cancel_signal)
        last: Any = None
        async for event in self.tools[tool].stream(
            {"toolUseId": f"use-{tool}", "name": tool, "input": arguments}, {"agent": agent}
        ):
            last = event
        result = last.tool_result if hasattr(last, "tool_result") else last["tool_result"]
        text = answer_text([{"text": part.get("text", "")} for part in result["content"]])
        if result.get("status") == "error":
            raise RuntimeError(f"tool result status=error: {text}")
        return text

    async def call(self, tool: str, arguments: dict[str, Any], on_progress: ProgressSink | None) -> str:
        self.sink = on_progress
        return await self._stream(tool, arguments)

    async def cancel(self, tool: str, arguments: dict[str, Any], after: float) -> str:
        call = asyncio.create_task(self._stream(tool, arguments))
        await asyncio.sleep(after)
        self.cancel_signal.set()
        try:
            text = await call
        except RuntimeError as exc:
            return f"cancel_signal set: {exc}"
        finally:
            # Strands: "Clear the event before reusing it for another call" (the model's next one).
            self.cancel_signal.clear()
        return f"finished: {text}"


class _AgentState:
    """What ``MCPAgentTool.stream`` reads from the running agent: its cancel signal."""

    def __init__(self, signal: threading.Event) -> None:
        self._cancel_signal = signal


if __name__ == "__main__":
    main(Strands())
