"""Drive taskgate's logging and sampling with the released Python MCP SDK (``mcp==1.30.0``,
2025-11-25 era).

Run with the venv that ``setup.sh`` makes (``.tools/clients2025/py``):
``python mcp_python_tools.py URL SCENARIO``. Prints one JSON line with what happened;
exits 0 whenever it could report (the test asserts on the JSON), 2 on usage.

Only the SDK's own APIs: ``ClientSession(sampling_callback=..., logging_callback=...)``,
``session.set_logging_level``, ``session.call_tool`` (its ``progress_callback`` too),
``elicitation_callback``, ``message_handler`` and ``session.experimental.call_tool_as_task`` /
``get_task_result``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import time
import traceback
import warnings
from datetime import timedelta
from importlib.metadata import version
from typing import Any

from mcp import ClientSession, types
from mcp.client.streamable_http import streamablehttp_client
from mcp.shared.exceptions import McpError

warnings.simplefilter("ignore", DeprecationWarning)

SCENARIOS = (
    "logging",
    "sample_plain",
    "sample_task",
    "content",
    "no_sampling",
    "long_plain",
    "half_way_plain",
    "half_way_task",
    "undeclared_plain",
    "undeclared_abandoned",
    "undeclared_quick",
    "warm",
)
# The undeclared tool's runs (issue 27): its run name and seconds, by scenario.
UNDECLARED = {
    "undeclared_plain": ("py-plain", 9.0),
    # Longer than the hang-up (9 s at the least, with 2 s pieces) after which it must stop.
    "undeclared_abandoned": ("py-abandoned", 25.0),
    "undeclared_quick": ("py-quick", 1.5),
}
# The progress token a task's call carries (the SDK's call_tool_as_task takes none of its own).
TASK_TOKEN = "half-way-task"
CALL_TIMEOUT = timedelta(seconds=90)


class Recorder(logging.Handler):
    """What the SDK handed to the callbacks, and the warnings it logged (a dropped message)."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.logs: list[dict[str, Any]] = []
        self.sampled: list[dict[str, Any]] = []
        self.progress: list[float] = []
        self.warnings: list[str] = []
        self.exceptions: list[str] = []
        # Every progress notification the session saw (its message_handler), and the questions.
        self.notified: list[dict[str, Any]] = []
        self.asked: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.warnings.append(f"{record.name}: {record.getMessage()}"[:500])

    async def on_log(self, params: types.LoggingMessageNotificationParams) -> None:
        self.logs.append({"level": params.level, "data": params.data})

    async def on_sample(
        self, context: Any, params: types.CreateMessageRequestParams
    ) -> types.CreateMessageResult:
        first = params.messages[0].content
        self.sampled.append(
            {
                "text": getattr(first, "text", None),
                "maxTokens": params.maxTokens,
                "related": (params.meta.model_dump() if params.meta else {}).get(
                    "io.modelcontextprotocol/related-task"
                ),
            }
        )
        return types.CreateMessageResult(
            role="assistant",
            content=types.TextContent(type="text", text="Paris"),
            model="e2e-model",
            stopReason="endTurn",
        )

    async def on_progress(self, progress: float, total: float | None, message: str | None) -> None:
        self.progress.append(progress)

    async def on_message(self, message: Any) -> None:
        if isinstance(message, Exception):
            self.exceptions.append(f"{type(message).__name__}: {message}"[:500])
        elif isinstance(message, types.ServerNotification) and isinstance(
            message.root, types.ProgressNotification
        ):
            params = message.root.params
            self.notified.append({"token": params.progressToken, "progress": params.progress})

    async def on_elicit(self, context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        self.asked.append(params.message)
        return types.ElicitResult(action="accept", content={"ok": True})


def _texts(result: types.CallToolResult) -> list[str]:
    return [c.text for c in result.content if isinstance(c, types.TextContent)]


async def run(url: str, scenario: str) -> dict[str, Any]:
    rec = Recorder()
    logging.getLogger().addHandler(rec)
    out: dict[str, Any] = {"client": "mcp-python", "version": version("mcp"), "scenario": scenario}
    sampling = None if scenario == "no_sampling" else rec.on_sample
    async with (
        streamablehttp_client(url) as (read, write, _),
        ClientSession(
            read,
            write,
            read_timeout_seconds=CALL_TIMEOUT,
            sampling_callback=sampling,
            elicitation_callback=rec.on_elicit if scenario.startswith("half_way") else None,
            logging_callback=rec.on_log,
            message_handler=rec.on_message,
        ) as session,
    ):
        init = await session.initialize()
        out["protocolVersion"] = init.protocolVersion
        out["serverLogging"] = init.capabilities.logging is not None
        if scenario == "logging":
            await session.set_logging_level("debug")
            result = await session.call_tool("test_tool_with_logging", {})
            out["debug"] = {"texts": _texts(result), "logs": list(rec.logs)}
            rec.logs.clear()
            await session.set_logging_level("error")
            result = await session.call_tool("test_tool_with_logging", {})
            out["errorLevel"] = {"texts": _texts(result), "logs": list(rec.logs)}
            result = await session.call_tool("test_tool_with_progress", {}, progress_callback=rec.on_progress)
            out["progress"] = {"texts": _texts(result), "values": rec.progress}
        elif scenario == "sample_plain":
            result = await session.call_tool("test_sampling", {"prompt": "Capital of France?"})
            out.update(isError=result.isError, texts=_texts(result), sampled=rec.sampled)
        elif scenario == "sample_task":
            created = await session.experimental.call_tool_as_task("test_sampling", {"prompt": "Capital?"})
            task_id = created.task.taskId
            result = await session.experimental.get_task_result(task_id, types.CallToolResult)
            out.update(isError=result.isError, texts=_texts(result), sampled=rec.sampled)
            out["status"] = (await session.experimental.get_task(task_id)).status
            out["taskIdMatches"] = [s["related"] for s in rec.sampled] == [{"taskId": task_id}]
        elif scenario == "content":
            tools = {t.name: t for t in (await session.list_tools()).tools}
            out["types"] = {}
            for name in (
                "test_image_content",
                "test_audio_content",
                "test_embedded_resource",
                "test_multiple_content_types",
            ):
                result = await session.call_tool(name, {})
                out["types"][name] = [c.type for c in result.content]
            out["hasOutputSchema"] = tools["orders_report"].outputSchema is not None
        elif scenario == "long_plain":
            # A plain call of a tool declared long (14 s): a hidden task answered on the call's
            # own stream, which the SDK resumes with Last-Event-ID piece after piece.
            started = time.monotonic()
            times: list[list[float]] = []

            async def on_progress(progress: float, total: float | None, message: str | None) -> None:
                times.append([round(time.monotonic() - started, 2), progress, total or 0])

            result = await session.call_tool(
                "slow_compute", {"seconds": 14, "label": "py"}, progress_callback=on_progress
            )
            out.update(isError=result.isError, texts=_texts(result), progress=times)
            out["answeredAt"] = round(time.monotonic() - started, 2)
        elif scenario == "half_way_plain":
            # Asks half way through its loop, with no checkpoint: it runs again from the top
            # once answered; the progress_callback must see each value once, rising.
            result = await session.call_tool(
                "half_way_question", {"steps": 18, "pause": 0.3}, progress_callback=rec.on_progress
            )
            out.update(isError=result.isError, texts=_texts(result), progress=rec.progress, asked=rec.asked)
        elif scenario == "half_way_task":
            # mcp 1.30.0 hands a task's progress to no progress_callback (call_tool_as_task takes
            # none): the call carries a token, and the session's message handler sees them.
            created = await session.experimental.call_tool_as_task(
                "half_way_question", {"steps": 18, "pause": 0.3}, meta={"progressToken": TASK_TOKEN}
            )
            result = await session.experimental.get_task_result(created.task.taskId, types.CallToolResult)
            values = [n["progress"] for n in rec.notified if n["token"] == TASK_TOKEN]
            out.update(isError=result.isError, texts=_texts(result), progress=values, asked=rec.asked)
        elif scenario == "warm":
            # A short task of another tool: the worker has run (its code loaded), as in use.
            created = await session.experimental.call_tool_as_task(
                "long_work", {"seconds": 0.2, "run": "warm"}
            )
            result = await session.experimental.get_task_result(created.task.taskId, types.CallToolResult)
            out.update(isError=result.isError, texts=_texts(result))
        elif scenario in UNDECLARED:
            # A tool that declares nothing (as the README's first tool): not yet known to be
            # quick, so a hidden task on the call's own stream, whatever it turns out to take.
            run_name, seconds = UNDECLARED[scenario]
            started = time.monotonic()
            stamps: list[list[float]] = []

            async def on_stamp(progress: float, total: float | None, message: str | None) -> None:
                stamps.append([round(time.monotonic() - started, 2), progress, total or 0])

            result = await session.call_tool(
                "undeclared_work", {"seconds": seconds, "run": run_name}, progress_callback=on_stamp
            )
            out.update(isError=result.isError, texts=_texts(result), progress=stamps)
            out["answeredAt"] = round(time.monotonic() - started, 2)
        elif scenario == "no_sampling":
            try:
                await session.call_tool("test_sampling", {"prompt": "x"})
                out["refused"] = None
            except McpError as exc:
                out["refused"] = {"code": exc.error.code, "data": exc.error.data}
            out["sampled"] = rec.sampled
    out["warnings"] = rec.warnings
    out["exceptions"] = rec.exceptions
    return out


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("url")
    parser.add_argument("scenario", choices=SCENARIOS)
    args = parser.parse_args()
    started = time.monotonic()
    try:
        out = asyncio.run(run(args.url, args.scenario))
    except BaseException as exc:  # report, don't crash: the test asserts on the JSON
        out = {
            "client": "mcp-python",
            "scenario": args.scenario,
            "error": f"{type(exc).__name__}: {exc}",
            "traceback": traceback.format_exc()[-4000:],
        }
    out["elapsed"] = round(time.monotonic() - started, 2)
    print(json.dumps(out, default=str))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
