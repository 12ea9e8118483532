"""What every Python host driver shares (stdlib only: each driver runs in its framework's
own venv under .tools/hosts/). A driver wraps its framework's own MCP tool wrapper in an
``Adapter`` and hands it to :func:`main`, which runs one phase and prints one JSON line per
scenario (tests/e2e/test_hosts.py reads them):

- ``main``: list the tools; a quick call (``greet``); an elicitation answered through the
  framework's callback (``confirm_delete``), where it has one; the 45 s tool (``long_work``)
  called the framework's default way, with the progress it reports, where it exposes any.
- ``cancel``: the 45 s tool again, aborted the framework's own way after ``ABORT_AFTER``
  seconds; then the driver exits (hangs up), and the test looks at the tool on the server.
  A call answered at once with a task handle (a host that cannot wait that long) has nothing
  left to abort: the model cancels the task, through the framework, with ``taskgate_task_cancel``.

    driver.py URL main|cancel RUN SECONDS
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import sys
import time
import traceback
from collections.abc import Awaitable, Callable
from typing import Any, Protocol

ABORT_AFTER = 3.0
# The 45 s tool: the fixture ``long_work`` (tests/fixture_tools.py), ``undeclared_work`` (the same,
# declaring nothing: issue 27), or where only the deployed tools exist (sam local start-api on the
# built layer) the conformance fixture ``slow_compute``.
LONG_TOOL = os.environ.get("HOSTS_LONG_TOOL", "long_work")
QUICK_NAME = "host"
ELICIT_FILE = "report.csv"
ProgressSink = Callable[[float, float | None, str | None], None]


class Adapter(Protocol):
    name: str
    version: str
    # "callback", or why there is none (printed in the matrix)
    progress: str
    elicitation: str

    async def open(self, url: str) -> None: ...

    async def close(self) -> None: ...

    async def list_tools(self) -> list[str]: ...

    async def call(self, tool: str, arguments: dict[str, Any], on_progress: ProgressSink | None) -> str:
        """The tool's text through the framework's own wrapper; raises what the framework raises."""
        ...

    async def cancel(self, tool: str, arguments: dict[str, Any], after: float) -> str:
        """Start the call, abort it after ``after`` s the framework's way; say how."""
        ...


HANDLE_CANCEL = "taskgate_task_cancel"


async def cancel_task_after(call: Awaitable[Any], after: float, how: str) -> str:
    """Abort as Python frameworks do: the asyncio task awaiting ``call`` cancelled after
    ``after`` seconds. Says how it ended: cancelled (``how``: what was cancelled), or what the
    call finished with first (a task handle, for a call answered at once)."""
    task = asyncio.ensure_future(call)
    await asyncio.sleep(after)
    task.cancel()
    try:
        result = await task
    except asyncio.CancelledError:
        return f"task.cancel() on {how}: CancelledError"
    return f"finished before the abort: {answer_text(result)}"


def task_handle(text: str) -> str | None:
    """The task handle a plain call was answered with ("tasks as tools"), if it was."""
    match = re.search(r"background task ([0-9a-f-]{36})", text)
    return match.group(1) if match and HANDLE_CANCEL in text else None


def emit(scenario: str, **fields: Any) -> None:
    print(json.dumps({"scenario": scenario, **fields}, default=str), flush=True)


def failure(exc: BaseException) -> dict[str, Any]:
    chain, seen = [], exc
    while seen is not None and len(chain) < 4:
        chain.append(f"{type(seen).__name__}: {seen}"[:300])
        seen = seen.__cause__ or seen.__context__  # type: ignore[assignment]
    if isinstance(exc, BaseExceptionGroup):
        chain += [f"{type(e).__name__}: {e}"[:300] for e in exc.exceptions[:3]]
    return {"ok": False, "error": " <- ".join(chain), "trace": traceback.format_exc()[-1500:]}


async def timed(scenario: str, work: Callable[[], Awaitable[Any]], **extra: Any) -> bool:
    """Run one scenario and print its line; False if it raised."""
    start = time.time()
    try:
        value = await work()
    except (Exception, asyncio.CancelledError) as exc:  # a framework may raise anything: the matrix shows it
        end = time.time()
        emit(scenario, start=start, end=end, seconds=round(end - start, 2), **extra, **failure(exc))
        return False
    end = time.time()
    emit(scenario, ok=True, start=start, end=end, seconds=round(end - start, 2), value=value, **extra)
    return True


async def run(adapter: Adapter, url: str, phase: str, run_name: str, seconds: float) -> None:
    emit(
        "client",
        name=adapter.name,
        version=adapter.version,
        progress=adapter.progress,
        elicitation=adapter.elicitation,
    )
    if not await timed("open", lambda: adapter.open(url)):
        await adapter.close()
        return
    try:
        name_key = "label" if LONG_TOOL == "slow_compute" else "run"
        long_args = {"seconds": seconds, name_key: run_name}
        if phase == "cancel":

            async def abort() -> str:
                how = await adapter.cancel(LONG_TOOL, long_args, ABORT_AFTER)
                handle = task_handle(how)
                if handle is None:
                    return how
                done = await adapter.call(HANDLE_CANCEL, {"handle": handle}, None)
                return f"handed a task handle, then {HANDLE_CANCEL}: {done[:120]}"

            await timed("cancel", abort)
            return
        await timed("list", adapter.list_tools)
        await timed("quick", lambda: adapter.call("greet", {"name": QUICK_NAME}, None))
        if adapter.elicitation == "callback":
            await timed("elicit", lambda: adapter.call("confirm_delete", {"filename": ELICIT_FILE}, None))
        progress: list[dict[str, Any]] = []

        def seen(value: float, total: float | None, message: str | None) -> None:
            progress.append({"at": time.time(), "progress": value, "total": total})

        sink = seen if adapter.progress == "callback" else None
        start = time.time()
        await timed("long", lambda: adapter.call(LONG_TOOL, long_args, sink))
        # When the progress arrived: as it happened, or all at once with the result.
        arrivals = [p["at"] for p in progress]
        emit(
            "progress",
            count=len(arrivals),
            start=start,
            arrivals=[round(a - start, 2) for a in arrivals[:: max(1, len(arrivals) // 40)]],
            first=arrivals[0] if arrivals else None,
            last=arrivals[-1] if arrivals else None,
        )
    finally:
        await timed("close", adapter.close)


def main(adapter: Adapter) -> None:
    url, phase, run_name, seconds = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4])
    asyncio.run(run(adapter, url, phase, run_name, seconds))


def answer_text(result: Any) -> str:
    """The text of an MCP CallToolResult-like object or of a framework's own result."""
    if isinstance(result, str):
        return result
    content = getattr(result, "content", None)
    if isinstance(content, list):
        return "".join(getattr(part, "text", "") or "" for part in content)
    if isinstance(result, list):
        return "".join(answer_text(part) for part in result)
    if isinstance(result, dict) and "text" in result:
        return str(result["text"])
    text = getattr(result, "text", None)
    return str(text) if text is not None else str(result)
