"""Drive an ``async def`` tool (tests/fixture_tools.py ``async_rollout``) with the released
Python MCP SDK (``mcp==1.30.0``, 2025-11-25): as a plain call and as a task, its question
answered through ``elicitation_callback``, its progress and logs recorded.

Run with the venv ``setup.sh`` makes (``.tools/clients2025/py``):
``python mcp_async_tool.py URL plain|plain_ask|task``. Prints one JSON line; exits 0 whenever it could
report (the test asserts on the JSON).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time
import traceback
import warnings
from datetime import timedelta
from importlib.metadata import version
from typing import Any

from mcp import ClientSession, types
from mcp.client.streamable_http import streamablehttp_client

warnings.simplefilter("ignore", DeprecationWarning)

TERMINAL = {"completed", "failed", "cancelled"}
TASK_TOKEN = "rollout"


class Seen:
    def __init__(self) -> None:
        self.asked: list[str] = []
        self.progress: list[dict[str, Any]] = []
        self.logs: list[Any] = []
        self.notifications: list[str] = []
        # The task's statuses as the server told them (notifications/tasks/status), beside the
        # ones its polling saw: a poll can fall between two quick changes, a notification not.
        self.told: list[tuple[str | None, str | None]] = []

    async def on_elicit(self, context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        self.asked.append(params.message)
        return types.ElicitResult(action="accept", content={"ok": True})

    async def on_progress(self, progress: float, total: float | None, message: str | None) -> None:
        self.progress.append({"progress": progress, "total": total, "message": message})

    async def on_log(self, params: types.LoggingMessageNotificationParams) -> None:
        self.logs.append(params.data)

    async def on_message(self, message: Any) -> None:
        if isinstance(message, types.ServerNotification):
            self.notifications.append(message.root.method)
            if message.root.method == "notifications/tasks/status":
                params = message.root.params
                self.told.append((getattr(params, "status", None), getattr(params, "statusMessage", None)))
            # A task's progress comes on tasks/result's stream, under the token the task was
            # created with: the SDK has no callback for it, so it is read here.
            if (
                isinstance(message.root, types.ProgressNotification)
                and message.root.params.progressToken == TASK_TOKEN
            ):
                params = message.root.params
                self.progress.append(
                    {"progress": params.progress, "total": params.total, "message": params.message}
                )


async def run(url: str, scenario: str) -> dict[str, Any]:
    seen = Seen()
    out: dict[str, Any] = {"client": "mcp-python", "version": version("mcp"), "scenario": scenario}
    async with (
        streamablehttp_client(url) as (read, write, _),
        ClientSession(
            read,
            write,
            read_timeout_seconds=timedelta(seconds=60),
            elicitation_callback=seen.on_elicit,
            logging_callback=seen.on_log,
            message_handler=seen.on_message,
        ) as session,
    ):
        await session.initialize()
        await session.set_logging_level("info")
        if scenario.startswith("plain"):
            arguments = {"service": "api", "waves": 3, "confirm": scenario == "plain_ask"}
            result = await session.call_tool("async_rollout", arguments, progress_callback=seen.on_progress)
        else:
            created = await session.experimental.call_tool_as_task(
                "async_rollout",
                {"service": "jobs", "waves": 3, "pause": 1.0},
                meta={"progressToken": TASK_TOKEN},
            )
            task_id = created.task.taskId
            statuses: list[tuple[str, str | None]] = []

            async def watch() -> None:
                while True:
                    task = await session.experimental.get_task(task_id)
                    if not statuses or statuses[-1] != (task.status, task.statusMessage):
                        statuses.append((task.status, task.statusMessage))
                    if task.status in TERMINAL:
                        return
                    await asyncio.sleep(0.2)

            watcher = asyncio.create_task(watch())
            # The question arrives on tasks/result's stream; the callback answers it.
            result = await session.experimental.get_task_result(task_id, types.CallToolResult)
            await watcher
            out["statuses"] = statuses
            out["told"] = seen.told
        out["isError"] = result.isError
        out["texts"] = [c.text for c in result.content if isinstance(c, types.TextContent)]
    out.update(asked=seen.asked, progress=seen.progress, logs=seen.logs, notifications=seen.notifications)
    return out


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("url")
    parser.add_argument("scenario", choices=("plain", "plain_ask", "task"))
    args = parser.parse_args()
    started = time.monotonic()
    try:
        out = asyncio.run(run(args.url, args.scenario))
    except BaseException as exc:  # report, don't crash: the test asserts on the JSON
        out = {
            "scenario": args.scenario,
            "error": f"{type(exc).__name__}: {exc}",
            "traceback": traceback.format_exc()[-4000:],
        }
    out["elapsed"] = round(time.monotonic() - started, 2)
    print(json.dumps(out, default=str))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
