"""Plain calls carried on in rounds (issue 28), driven by 2026-07-28 hosts that did not opt in
to tasks, each through its own MCP wrapper and its own elicitation handler (no LLM):

- ``mcp2``: mcp's ``Client(url, elicitation_callback=)`` (its ``call_tool`` drives every
  ``input_required`` round, 10 at most);
- ``strands``: Strands Agents' ``MCPClient(url=, elicitation_callback=)`` and the
  ``MCPAgentTool`` an agent runs (``tool.stream``);
- ``pydantic-ai``: PydanticAI's ``MCPToolset(url, elicitation_handler=)`` on mcp 2.x
  (FastMCP 4's client), called as an agent run calls it;
- ``openai-agents``: the OpenAI Agents SDK's ``MCPServerStreamableHttp`` and the
  ``FunctionTool`` an agent gets (no elicitation hook; it raises on any input_required).

    rounds_py.py FRAMEWORK URL SCENARIO SECONDS RUN

Scenarios: ``ask`` (``long_ask``: works, asks half-way through the handler, finishes; no
outputSchema, so where the call is handed to the model as a task handle, this driver plays the
model and calls ``taskgate_task_result`` until the result, and the question reaches the host's
handler through that call), ``report`` (``long_structured``: a structured result, its
outputSchema checked by the client), ``newcomer`` (``long_structured`` that also asks half-way),
``replay`` (mcp2 by hand: a round's state replayed, a question's state answered twice and
moved to another call; each refused, and the call then finishes as if nothing happened),
``abandon`` (``long_structured`` given up after 3 s: the host never comes back for its next round).
Prints one JSON line; exits 0 whenever it could report.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
import traceback
from importlib.metadata import version
from typing import Any


class Handler:
    """The host's elicitation handler: records what it was asked, then says yes."""

    def __init__(self) -> None:
        self.asked: list[dict[str, Any]] = []

    def saw(self, message: str, schema: Any) -> dict[str, Any]:
        self.asked.append({"at": time.time(), "message": message})
        properties = (schema or {}).get("properties", {}) if isinstance(schema, dict) else {}
        return {name: True for name in properties} or {"confirm": True}

    async def mcp(self, context: Any, params: Any) -> Any:
        import mcp_types as types

        content = self.saw(params.message, getattr(params, "requested_schema", None))
        return types.ElicitResult(action="accept", content=content)

    async def pydantic_ai(
        self, message: str, response_type: Any, params: Any, context: Any
    ) -> dict[str, Any]:
        return self.saw(message, getattr(params, "requested_schema", None))


def _result(result: Any) -> dict[str, Any]:
    """A CallToolResult-like object, or a framework's own shape, as plain JSON."""
    if isinstance(result, dict) and "content" not in result and "tool_result" not in result:
        return {"texts": [], "structured": result}  # PydanticAI hands over the structured content itself
    if isinstance(result, dict):
        content = result.get("content", [])
        return {
            "texts": [c.get("text", "") for c in content if isinstance(c, dict) and "text" in c],
            "structured": result.get("structuredContent"),
            "status": result.get("status"),
        }
    content = getattr(result, "content", None)
    if isinstance(content, list):
        return {
            "texts": [getattr(c, "text", "") for c in content if getattr(c, "type", None) == "text"],
            "structured": getattr(result, "structured_content", None),
            "isError": getattr(result, "is_error", None),
        }
    return {
        "texts": [result if isinstance(result, str) else json.dumps(result, default=str)],
        "structured": result,
    }


class Mcp2:
    name = "mcp2"

    def version(self) -> str:
        return f"mcp {version('mcp')}"

    async def open(self, url: str, handler: Handler) -> None:
        from mcp import Client

        self._cm = Client(url, elicitation_callback=handler.mcp, read_timeout_seconds=120)
        self.client = await self._cm.__aenter__()

    async def call(self, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
        return _result(await self.client.call_tool(tool, arguments))

    async def close(self) -> None:
        await self._cm.__aexit__(None, None, None)


class Strands:
    name = "strands"

    def version(self) -> str:
        return f"strands-agents {version('strands-agents')} (mcp {version('mcp')})"

    async def open(self, url: str, handler: Handler) -> None:
        from strands.tools.mcp import MCPClient

        self.client = MCPClient(url=url, elicitation_callback=handler.mcp)
        await asyncio.to_thread(self.client.start)
        self.tools = {tool.tool_name: tool for tool in await asyncio.to_thread(self.client.list_tools_sync)}

    async def call(self, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
        import threading

        from strands_py import _AgentState  # what MCPAgentTool.stream reads of the running agent

        last: Any = None
        use = {"toolUseId": f"use-{tool}", "name": tool, "input": arguments}
        async for event in self.tools[tool].stream(use, {"agent": _AgentState(threading.Event())}):
            last = event
        return _result(last.tool_result if hasattr(last, "tool_result") else last["tool_result"])

    async def close(self) -> None:
        await asyncio.to_thread(self.client.stop, None, None, None)


class PydanticAi:
    name = "pydantic-ai"

    def version(self) -> str:
        return f"pydantic-ai-slim {version('pydantic-ai-slim')} (fastmcp {version('fastmcp-slim')}, mcp {version('mcp')})"

    async def open(self, url: str, handler: Handler) -> None:
        from pydantic_ai import RunContext
        from pydantic_ai.mcp import MCPToolset
        from pydantic_ai.models.test import TestModel
        from pydantic_ai.usage import RunUsage

        # Its defaults otherwise: prefer_tasks=True, but without fastmcp-tasks it calls plainly.
        self.toolset: Any = MCPToolset(url, elicitation_handler=handler.pydantic_ai)
        await self.toolset.__aenter__()
        self.ctx = RunContext(deps=None, model=TestModel(), usage=RunUsage())
        self.tools = await self.toolset.get_tools(self.ctx)

    async def call(self, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
        return _result(await self.toolset.call_tool(tool, arguments, self.ctx, self.tools[tool]))

    async def close(self) -> None:
        await self.toolset.__aexit__(None, None, None)


class OpenAiAgents:
    name = "openai-agents"

    def version(self) -> str:
        return f"openai-agents {version('openai-agents')} (mcp {version('mcp')})"

    async def open(self, url: str, handler: Handler) -> None:
        from openai_agents_py import OpenAiAgentsPy  # its defaults: a 5 s session timeout

        self.host = OpenAiAgentsPy()
        await self.host.open(url)

    async def call(self, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
        return _result(await self.host.call(tool, arguments, None))

    async def close(self) -> None:
        await self.host.close()


FRAMEWORKS = {f.name: f for f in (Mcp2, Strands, PydanticAi, OpenAiAgents)}


async def drive(host: Any, tool: str, arguments: dict[str, Any], out: dict[str, Any]) -> dict[str, Any]:
    """The call's result; a task handle (the call was handed to the model) is driven with
    ``taskgate_task_result`` as a model would, until it gives the tool's own result."""
    from common import task_handle

    def handle_of(result: dict[str, Any]) -> str | None:
        # Frameworks that hand the model structured content (PydanticAI) show the handle there.
        structured = result.get("structured")
        if isinstance(structured, dict) and isinstance(structured.get("handle"), str):
            return str(structured["handle"])
        return task_handle(" ".join(result.get("texts") or []))

    result = await host.call(tool, arguments)
    handle = handle_of(result)
    out["handleCalls"] = 0
    while handle and out["handleCalls"] < 30:
        out["handleCalls"] += 1
        result = await host.call("taskgate_task_result", {"handle": handle})
        text = " ".join(result.get("texts") or [])
        structured = result.get("structured")
        waiting = isinstance(structured, dict) and structured.get("handle") == handle
        ended = "failed" in text or (isinstance(structured, dict) and structured.get("status") == "failed")
        if ended or not (waiting or f"Task {handle} " in text):
            break  # the tool's own result, or how the task ended
    return result


async def replay(url: str, handler: Handler, seconds: float, run: str) -> dict[str, Any]:
    """mcp's session driven one round at a time, as a client that persists its state would."""
    import mcp_types as types
    from mcp import Client
    from mcp.shared.exceptions import MCPError

    out: dict[str, Any] = {}

    async def refused(tool: str, arguments: dict[str, Any], **round_: Any) -> dict[str, Any]:
        try:
            await client.session.call_tool(tool, arguments, allow_input_required=True, **round_)
        except MCPError as exc:
            return {"code": exc.code, "message": exc.message}
        return {"accepted": True}

    async def finish(tool: str, arguments: dict[str, Any], first: Any) -> tuple[Any, int]:
        current, rounds = first, 0
        while isinstance(current, types.InputRequiredResult):
            rounds += 1
            current = await client.session.call_tool(
                tool, arguments, request_state=current.request_state, allow_input_required=True
            )
        return current, rounds

    async with Client(url, elicitation_callback=handler.mcp, read_timeout_seconds=120) as client:
        opened()
        report = {"seconds": seconds, "run": run, "ask": True}
        first = await client.session.call_tool("long_structured", report, allow_input_required=True)
        assert isinstance(first, types.InputRequiredResult) and not first.input_requests, first
        # A round that asks nothing, taken; then the same state again.
        asked = await client.session.call_tool(
            "long_structured", report, request_state=first.request_state, allow_input_required=True
        )
        out["replayed"] = await refused("long_structured", report, request_state=first.request_state)
        while isinstance(asked, types.InputRequiredResult) and not asked.input_requests:
            asked = await client.session.call_tool(
                "long_structured", report, request_state=asked.request_state, allow_input_required=True
            )
        assert isinstance(asked, types.InputRequiredResult), asked
        (key,) = asked.input_requests
        yes = {key: types.ElicitResult(action="accept", content={"confirm": True})}
        no = {key: types.ElicitResult(action="decline")}
        state = asked.request_state
        out["question"] = asked.input_requests[key].params.message
        answered = await client.session.call_tool(
            "long_structured", report, input_responses=yes, request_state=state, allow_input_required=True
        )
        out["answeredTwice"] = await refused(
            "long_structured", report, input_responses=no, request_state=state
        )
        other = {**report, "run": f"{run}-other"}
        out["anotherCall"] = await refused("long_structured", other, input_responses=yes, request_state=state)
        done, _ = await finish("long_structured", report, answered)
        out["report"] = _result(done)
    return out


def opened() -> None:
    """Say the client is connected (tests/e2e/client_starts.py starts the next one then)."""
    print(json.dumps({"open": True}), flush=True)


async def run(framework: str, url: str, scenario: str, seconds: float, run_name: str) -> dict[str, Any]:
    handler = Handler()
    host = FRAMEWORKS[framework]()
    out: dict[str, Any] = {"framework": framework, "version": host.version(), "scenario": scenario}
    started = time.time()
    out["start"] = started
    try:
        if scenario == "replay":
            out.update(await replay(url, handler, seconds, run_name))
        elif scenario == "abandon":
            # The host gives up on the call after 3 s (its task cancelled, as an aborted agent run
            # does) and goes away: it never comes back for the call's next round.
            await host.open(url, handler)
            opened()
            call = asyncio.ensure_future(host.call("long_structured", {"seconds": seconds, "run": run_name}))
            await asyncio.sleep(3)
            call.cancel()
            out["abortedAt"] = time.time()
            try:
                await call
            except asyncio.CancelledError:
                out["abandoned"] = True
            await host.close()
        else:
            await host.open(url, handler)
            opened()
            try:
                tool = "long_ask" if scenario == "ask" else "long_structured"
                arguments = {"seconds": seconds, "run": run_name, "ask": scenario != "report"}
                calling = time.time()
                try:
                    out["result"] = await drive(host, tool, arguments, out)
                finally:
                    out["callSeconds"] = round(time.time() - calling, 2)
            finally:
                await host.close()
        out["ok"] = True
    except BaseException as exc:  # a framework may raise anything: the test reads what it was
        chain, seen = [], exc
        while seen is not None and len(chain) < 4:
            chain.append(f"{type(seen).__name__}: {seen}"[:600])
            seen = seen.__cause__ or seen.__context__  # type: ignore[assignment]
        if isinstance(exc, BaseExceptionGroup):
            chain += [f"{type(e).__name__}: {e}"[:600] for e in exc.exceptions[:3]]
        out.update(ok=False, error=" <- ".join(chain), trace=traceback.format_exc()[-2000:])
    out["asked"] = handler.asked
    out["seconds"] = round(time.time() - started, 2)
    return out


def main() -> int:
    framework, url, scenario, seconds, run_name = sys.argv[1:6]
    print(
        json.dumps(asyncio.run(run(framework, url, scenario, float(seconds), run_name)), default=str),
        flush=True,
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
