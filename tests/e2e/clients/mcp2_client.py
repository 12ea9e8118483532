"""Drive taskgate's plain multi-round-trip calls with the released Python MCP SDK 2
(``mcp==2.3.0``, the 2026-07-28 core client; it has no tasks runtime).

Run with the venv that ``setup.sh`` makes (``.tools/clients/py-fastmcp``, where fastmcp
4.1.4 pins mcp 2.3.0): ``python mcp2_client.py URL SCENARIO``. Prints one JSON line; exits
0 whenever it could report (the test asserts on the JSON), 2 on usage.

Only the SDK's own APIs: ``Client(url, elicitation_callback=, sampling_callback=,
list_roots_callback=, logging_callback=, log_level=)`` whose ``call_tool`` answers every
``InputRequiredResult`` through those callbacks and retries with the echoed
``requestState``; and ``client.session.call_tool(..., allow_input_required=True)`` to
drive one round by hand (the tampered-state scenario).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import time
import traceback
from importlib.metadata import version
from typing import Any

from mcp import Client, types
from mcp.shared.exceptions import MCPError

SCENARIOS = ("mrtr", "tampered", "long_handle", "undeclared", "handle_turns", "handle_question")


class Recorder:
    def __init__(self) -> None:
        self.asked: list[dict[str, Any]] = []
        self.logs: list[dict[str, Any]] = []
        self.progress: list[float] = []
        self.wire: list[str] = []

    async def elicit(self, context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        schema = getattr(params, "requested_schema", None) or {}
        props = set(schema.get("properties", {}))
        self.asked.append({"kind": "elicitation", "message": params.message, "properties": sorted(props)})
        content: dict[str, Any] = {}
        if "confirm" in props:
            content["confirm"] = True
        if "name" in props:
            content["name"] = "Alice"
        if "color" in props:
            content["color"] = "blue"
        if "ok" in props:
            content["ok"] = True
        return types.ElicitResult(action="accept", content=content)

    async def sample(
        self, context: Any, params: types.CreateMessageRequestParams
    ) -> types.CreateMessageResult:
        first = params.messages[0].content
        self.asked.append(
            {"kind": "sampling", "text": getattr(first, "text", None), "maxTokens": params.max_tokens}
        )
        return types.CreateMessageResult(
            role="assistant", content=types.TextContent(type="text", text="Hello there!"), model="e2e-model"
        )

    async def roots(self, context: Any) -> types.ListRootsResult:
        self.asked.append({"kind": "roots"})
        return types.ListRootsResult(roots=[types.Root(uri="file:///e2e/root", name="e2e")])

    async def log(self, params: types.LoggingMessageNotificationParams) -> None:
        self.logs.append({"level": params.level, "data": params.data})

    async def on_progress(self, progress: float, total: float | None, message: str | None) -> None:
        self.progress.append(progress)


def _texts(result: Any) -> list[str]:
    return [c.text for c in result.content if getattr(c, "type", None) == "text"]


def _server(url: str) -> Any:
    """The URL, or (``TASKGATE_WAIT`` set) a transport that says how long this client waits for
    a call (the header ``Taskgate-Wait-Seconds``, as a host's user would configure it)."""
    wait = os.environ.get("TASKGATE_WAIT")
    if not wait:
        return url
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    return streamable_http_client(
        url, http_client=create_mcp_http_client(headers={"Taskgate-Wait-Seconds": wait})
    )


async def run(url: str, scenario: str) -> dict[str, Any]:
    rec = Recorder()
    out: dict[str, Any] = {"client": "mcp2", "version": version("mcp"), "scenario": scenario}
    async with Client(
        _server(url),
        elicitation_callback=rec.elicit,
        sampling_callback=rec.sample,
        list_roots_callback=rec.roots,
        logging_callback=rec.log,
        log_level="info",
        read_timeout_seconds=60,
    ) as client:
        out["protocolVersion"] = client.protocol_version
        if scenario == "mrtr":
            runs: dict[str, Any] = {}
            for name, arguments in (
                ("confirm_delete", {"filename": "a.txt"}),
                ("test_input_required_result_multi_round", {}),
                ("test_input_required_result_multiple_inputs", {}),
            ):
                rec.asked.clear()
                result = await client.call_tool(name, arguments)
                runs[name] = {"isError": result.is_error, "texts": _texts(result), "asked": list(rec.asked)}
            out["runs"] = runs
            result = await client.call_tool("test_tool_with_logging", {})
            out["logs"] = rec.logs
            result = await client.call_tool("test_tool_with_progress", {}, progress_callback=rec.on_progress)
            out["progress"] = rec.progress
        elif scenario == "tampered":
            name = "test_input_required_result_tampered_state"
            first = await client.session.call_tool(name, {}, allow_input_required=True)
            assert isinstance(first, types.InputRequiredResult), first
            state = first.request_state
            out["first"] = {"keys": sorted(first.input_requests or {}), "hasState": bool(state)}
            answers = {"confirm": types.ElicitResult(action="accept", content={"ok": True})}
            try:
                await client.session.call_tool(
                    name,
                    {},
                    input_responses=answers,
                    request_state=f"{state}-TAMPERED",
                    allow_input_required=True,
                )
                out["tampered"] = {"accepted": True}
            except MCPError as exc:
                out["tampered"] = {"code": exc.code, "message": exc.message}
            done = await client.session.call_tool(
                name, {}, input_responses=answers, request_state=state, allow_input_required=True
            )
            out["untouched"] = {"texts": _texts(done)}
        elif scenario == "long_handle":
            # A plain call of a long tool: this era may not hand it a task, and behind a
            # front that buffers nothing can hold it, so it answers at once with a task handle.
            started = time.monotonic()
            handed = await client.call_tool("slow_compute", {"seconds": 120, "label": "job"})
            out["answeredAt"] = round(time.monotonic() - started, 2)
            out["handed"] = {"texts": _texts(handed), "structured": handed.structured_content}
            handle = (handed.structured_content or {}).get("handle")
            status = await client.call_tool("taskgate_task_status", {"handle": handle})
            cancel = await client.call_tool("taskgate_task_cancel", {"handle": handle})
            out["status"] = status.structured_content
            out["cancel"] = cancel.structured_content
        elif scenario == "undeclared":
            # A 9 s tool that declares nothing (issue 27), behind a front that cuts at 7 s with a
            # 6 s function: the result or a task handle inside the cut, never the cut itself.
            started = time.monotonic()
            first = await client.call_tool("undeclared_work", {"seconds": 9, "run": "mcp2"})
            out["answeredAt"] = round(time.monotonic() - started, 2)
            out["first"] = {"texts": _texts(first), "structured": first.structured_content}
            handle = (first.structured_content or {}).get("handle")
            calls = 0
            while handle and calls < 20:
                calls += 1
                got = await client.call_tool("taskgate_task_result", {"handle": handle})
                if (got.structured_content or {}).get("status") in (None, "completed"):
                    out["result"] = {"texts": _texts(got), "structured": got.structured_content}
                    break
            out["resultCalls"] = calls
            out["finishedAt"] = round(time.monotonic() - started, 2)
        elif scenario == "handle_turns":
            # A tool that declares nothing, HANDLE_SECONDS long, driven to its result through its
            # handle as a model would: taskgate_task_result until it answers with the result.
            seconds = float(os.environ.get("HANDLE_SECONDS", "45"))
            started = time.monotonic()
            run_name = os.environ.get("HANDLE_RUN", "turns")
            first = await client.call_tool("undeclared_work", {"seconds": seconds, "run": run_name})
            out["answeredAt"] = round(time.monotonic() - started, 2)
            out["first"] = {"texts": _texts(first), "structured": first.structured_content}
            handle = (first.structured_content or {}).get("handle")
            calls: list[float] = []
            while handle and len(calls) < 60:
                got = await client.call_tool("taskgate_task_result", {"handle": handle})
                calls.append(round(time.monotonic() - started, 2))
                if (got.structured_content or {}).get("status") in (None, "completed"):
                    out["result"] = {"texts": _texts(got)}
                    break
            out["resultCalls"] = calls
        elif scenario == "handle_question":
            # A tool that asks after the call was handed over: the model sees the question in
            # taskgate_task_status, and nothing it could answer it with.
            first = await client.call_tool("half_way_question", {"steps": 18, "pause": 1.0})
            handle = (first.structured_content or {}).get("handle")
            out["handed"] = handle is not None
            status: Any = None
            for _ in range(40):
                status = await client.call_tool("taskgate_task_status", {"handle": handle})
                if (status.structured_content or {}).get("status") == "input_required":
                    break
                await asyncio.sleep(0.5)
            out["status"] = {"texts": _texts(status), "structured": status.structured_content}
            tools = await client.list_tools()
            out["handleSchemas"] = {
                t.name: sorted((t.input_schema or {}).get("properties", {}))
                for t in tools.tools
                if t.name.startswith("taskgate_task_")
            }
            await client.call_tool("taskgate_task_cancel", {"handle": handle})
    return out


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("url")
    parser.add_argument("scenario", choices=SCENARIOS)
    args = parser.parse_args()
    started = time.monotonic()
    try:
        out = asyncio.run(run(args.url, args.scenario))
        out["ok"] = True
    except BaseException as exc:  # report, don't crash: the test asserts on the JSON
        out = {
            "client": "mcp2",
            "scenario": args.scenario,
            "ok": False,
            "error": f"{type(exc).__name__}: {exc}",
            "trace": traceback.format_exc()[-4000:],
        }
    out["elapsed"] = round(time.monotonic() - started, 2)
    print(json.dumps(out, default=str))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
