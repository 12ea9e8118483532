"""Drive a job handed off (``run_pipeline``) with the released Python SDK (``mcp==1.30.0``),
as a 2025-11-25 task: what a person watching it sees while the pipeline runs elsewhere,
its result, and a cancel midway; then called plainly, as most hosts call tools (the call
becomes a hidden task on the call's own resumable stream), and abandoned midway.

Run with the venv that ``setup.sh`` makes (``.tools/clients2025/py``):
``python mcp_python_jobs.py URL SCENARIO [--token TOKEN]``. Prints one JSON line.
Only the SDK's own APIs: ``call_tool_as_task``, ``get_task``, ``get_task_result``,
``cancel_task``, and a plain ``call_tool``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
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

SCENARIOS = ("pipeline", "pipeline_cancel", "pipeline_plain", "pipeline_plain_cancel")


async def _messages_until(exp: Any, task_id: str, done: Any, timeout: float = 60) -> list[dict[str, Any]]:
    """The task's distinct (status, statusMessage) pairs, polled at its pollInterval, until ``done``."""
    seen: list[dict[str, Any]] = []
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        task = await exp.get_task(task_id)
        entry = {"status": task.status, "statusMessage": task.statusMessage}
        if not seen or seen[-1] != entry:
            seen.append(entry)
        if done(task):
            return seen
        await asyncio.sleep((task.pollInterval or 1000) / 1000)
    raise TimeoutError(f"task {task_id}: {seen}")


async def _runs(session: ClientSession) -> dict[str, str]:
    """The pipeline's executions (name -> status), as the server's AWS tells it (a test-only tool)."""
    runs = await session.call_tool("pipeline_runs", {})
    return {r["name"]: r["status"] for r in (runs.structuredContent or {})["runs"]}


async def _plain_call_abandoned(url: str, token: str, session: ClientSession) -> dict[str, Any]:
    """A plain call of a long pipeline in a session of its own, abandoned as a framework aborts
    a call (the asyncio task cancelled: the client closes its session) once the pipeline runs;
    then what became of the pipeline's execution."""
    before = await _runs(session)

    async def call() -> None:
        async with (
            streamablehttp_client(url, headers={"Authorization": f"Bearer {token}"}) as (read, write, _),
            ClientSession(read, write) as own,
        ):
            await own.initialize()
            await own.call_tool("run_pipeline", {"stage_seconds": 60, "source": "s3://abandoned/"})

    running = asyncio.create_task(call())
    new: list[str] = []
    deadline = time.monotonic() + 30
    while not new and time.monotonic() < deadline:
        await asyncio.sleep(0.5)
        new = [name for name, status in (await _runs(session)).items() if name not in before]
    running.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await running
    ended: dict[str, str] = {}
    deadline = time.monotonic() + 20
    while new and time.monotonic() < deadline:
        ended = {name: status for name, status in (await _runs(session)).items() if name in new}
        if all(status != "RUNNING" for status in ended.values()):
            break
        await asyncio.sleep(0.5)
    return {"started": new, "child": ended}


async def run(url: str, scenario: str, token: str) -> dict[str, Any]:
    out: dict[str, Any] = {"client": "mcp-python", "version": version("mcp"), "scenario": scenario}
    logged: list[Any] = []

    async def on_log(params: types.LoggingMessageNotificationParams) -> None:
        logged.append(params.data)

    async with (
        streamablehttp_client(url, headers={"Authorization": f"Bearer {token}"}) as (read, write, _),
        ClientSession(
            read, write, read_timeout_seconds=timedelta(seconds=90), logging_callback=on_log
        ) as session,
    ):
        await session.initialize()
        exp = session.experimental
        if scenario == "pipeline_plain":
            started = time.monotonic()
            result = await session.call_tool("run_pipeline", {"stage_seconds": 2, "source": "s3://plain/"})
            out["elapsed"] = round(time.monotonic() - started, 1)
            out["isError"] = result.isError
            out["structured"] = result.structuredContent
            out["logged"] = logged  # the pipeline's status, heard on the call's own stream
            return out
        if scenario == "pipeline_plain_cancel":
            out.update(await _plain_call_abandoned(url, token, session))
            return out
        if scenario == "pipeline":
            created = await exp.call_tool_as_task("run_pipeline", {"stage_seconds": 2, "source": "s3://e2e/"})
            task_id = created.task.taskId
            out["seen"] = await _messages_until(exp, task_id, lambda t: t.status != "working")
            result = await exp.get_task_result(task_id, types.CallToolResult)
            out["isError"] = result.isError
            out["structured"] = result.structuredContent
        else:
            created = await exp.call_tool_as_task("run_pipeline", {"stage_seconds": 60})
            task_id = created.task.taskId
            out["seen"] = await _messages_until(
                exp, task_id, lambda t: "RUNNING, in state" in (t.statusMessage or "")
            )
            cancelled = await exp.cancel_task(task_id)
            out["cancelled"] = cancelled.status
            out["status"] = (await exp.get_task(task_id)).status
            # The child, as the server's AWS tells it (a test-only tool reads it).
            deadline = time.monotonic() + 20
            while True:
                runs = await session.call_tool("pipeline_runs", {})
                child = [r for r in (runs.structuredContent or {})["runs"] if task_id in r["name"]]
                if (child and child[0]["status"] != "RUNNING") or time.monotonic() > deadline:
                    break
                await asyncio.sleep(0.5)
            out["child"] = child
        out["taskId"] = task_id
    return out


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("url")
    parser.add_argument("scenario", choices=SCENARIOS)
    parser.add_argument("--token", default="alice-token")
    args = parser.parse_args()
    try:
        out = asyncio.run(run(args.url, args.scenario, args.token))
    except BaseException as exc:  # report, don't crash: the test asserts on the JSON
        out = {
            "scenario": args.scenario,
            "error": f"{type(exc).__name__}: {exc}",
            "traceback": traceback.format_exc()[-4000:],
        }
    print(json.dumps(out, default=str))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
