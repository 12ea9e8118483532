"""Drive taskgate with the released Python MCP SDK (``mcp==1.30.0``), 2025-11-25 Tasks era.

Run with the venv that ``setup.sh`` makes (``.tools/clients2025/py``), never the project's
own: ``python mcp_python_client.py URL SCENARIO [--token TOKEN]``. Prints one JSON line
with what happened; exits 0 whenever it could report (the test asserts on the JSON), 2 on
usage.

Only the SDK's own APIs are used: ``streamablehttp_client`` + ``ClientSession`` (with an
``elicitation_callback``) and ``session.experimental.call_tool_as_task`` / ``poll_task`` /
``get_task`` / ``get_task_result`` / ``list_tasks`` / ``cancel_task``. The long waits on
``tasks/result`` ride on the transport's own SSE resumption (GET + Last-Event-ID).
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

import httpx
from mcp import ClientSession, types
from mcp.client.streamable_http import streamablehttp_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.shared.exceptions import McpError

# The SDK marks its 2025-11-25 tasks client (and the old transport name) deprecated.
warnings.simplefilter("ignore", DeprecationWarning)

SCENARIOS = ("slow", "list", "anonymous_list", "confirm", "plain_confirm", "cancel", "long_wait", "failing")
RELATED = "io.modelcontextprotocol/related-task"
CALL_TIMEOUT = timedelta(seconds=90)


def _texts(result: types.CallToolResult) -> list[str]:
    return [c.text for c in result.content if isinstance(c, types.TextContent)]


def _related(result: types.Result) -> Any:
    return (result.meta or {}).get(RELATED)


class Elicitations:
    """Records what the elicitation_callback was asked and answers it."""

    def __init__(self) -> None:
        self.asked: list[dict[str, Any]] = []

    async def callback(self, context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        self.asked.append(
            {
                "message": params.message,
                "requestedSchema": getattr(params, "requestedSchema", None),
                "related": (params.meta.model_dump() if params.meta else {}).get(RELATED),
                "at": time.monotonic(),
            }
        )
        return types.ElicitResult(action="accept", content={"confirm": True})


class WireLog:
    """What the SDK's transport put on the wire (observation only, via httpx event hooks).

    Installed through ``streamablehttp_client(httpx_client_factory=...)``, wrapping the
    SDK's own ``create_mcp_http_client``; nothing is sent or changed by this class.
    """

    def __init__(self) -> None:
        self.entries: list[dict[str, Any]] = []

    def factory(
        self,
        headers: dict[str, str] | None = None,
        timeout: httpx.Timeout | None = None,
        auth: httpx.Auth | None = None,
    ) -> httpx.AsyncClient:
        client = create_mcp_http_client(headers=headers, timeout=timeout, auth=auth)
        client.event_hooks = {"request": [self._request], "response": [self._response]}
        return client

    async def _request(self, request: httpx.Request) -> None:
        entry: dict[str, Any] = {"http": request.method}
        if request.method == "POST":
            try:
                body = json.loads(request.content or b"null")
            except ValueError:
                body = None
            if isinstance(body, dict):
                entry["rpc"] = body.get("method") or ("response" if "result" in body else "error")
                if "method" not in body:
                    entry["id"] = body.get("id")
        if "last-event-id" in request.headers:
            entry["lastEventId"] = request.headers["last-event-id"]
        request.extensions["taskgate_log"] = entry
        self.entries.append(entry)

    async def _response(self, response: httpx.Response) -> None:
        entry = response.request.extensions.get("taskgate_log")
        if entry is not None:
            entry["status"] = response.status_code
            entry["type"] = response.headers.get("content-type", "").split(";")[0]

    def resumes(self) -> list[str]:
        """Last-Event-IDs of the GETs that resumed a stream."""
        return [e["lastEventId"] for e in self.entries if e["http"] == "GET" and "lastEventId" in e]


class Observed(logging.Handler):
    """Server messages the SDK passed to message_handler, and the warnings it logged.

    The SDK logs (and drops) a server request/notification that fails its schema
    validation ("Failed to validate ..."), so warnings here point at a wrong message shape.
    """

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.notifications: list[str] = []
        self.exceptions: list[str] = []
        self.warnings: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.warnings.append(f"{record.name}: {record.getMessage()}"[:500])

    async def message_handler(self, message: Any) -> None:
        if isinstance(message, Exception):
            self.exceptions.append(f"{type(message).__name__}: {message}"[:500])
        elif isinstance(message, types.ServerNotification):
            self.notifications.append(message.root.method)


async def _poll(session: ClientSession, task_id: str) -> list[str]:
    seen: list[str] = []
    async for status in session.experimental.poll_task(task_id):
        seen.append(status.status)
    return seen


async def run(url: str, scenario: str, token: str | None, stream_max: float) -> dict[str, Any]:
    elicitations = Elicitations()
    wire = WireLog()
    observed = Observed()
    logging.getLogger().addHandler(observed)
    out: dict[str, Any] = {"client": "mcp-python", "version": version("mcp"), "scenario": scenario}
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    async with (
        streamablehttp_client(url, headers=headers, httpx_client_factory=wire.factory) as (
            read,
            write,
            get_session_id,
        ),
        ClientSession(
            read,
            write,
            read_timeout_seconds=CALL_TIMEOUT,
            elicitation_callback=elicitations.callback,
            message_handler=observed.message_handler,
        ) as session,
    ):
        init = await session.initialize()
        out["protocolVersion"] = init.protocolVersion
        out["sessionId"] = get_session_id() is not None
        tasks_caps = init.capabilities.tasks
        out["serverTasksCapability"] = tasks_caps.model_dump(exclude_none=True) if tasks_caps else None
        exp = session.experimental

        if scenario == "slow":
            tools = await session.list_tools()
            out["taskSupport"] = {
                t.name: (t.execution.taskSupport if t.execution else None) for t in tools.tools
            }
            created = await exp.call_tool_as_task("slow_compute", {"seconds": 1, "label": "py"}, ttl=60_000)
            task = created.task
            out["created"] = {
                "status": task.status,
                "ttl": task.ttl,
                "pollInterval": task.pollInterval,
                "hasCreatedAt": task.createdAt is not None,
            }
            out["polled"] = await _poll(session, task.taskId)
            result = await exp.get_task_result(task.taskId, types.CallToolResult)
            out.update(isError=result.isError, texts=_texts(result), related=_related(result))
            out["taskIdMatches"] = (out["related"] or {}).get("taskId") == task.taskId
            got = await exp.get_task(task.taskId)
            out["got"] = {"status": got.status, "related": _related(got)}

        elif scenario == "list":
            created = await exp.call_tool_as_task("slow_compute", {"seconds": 0, "label": "ls"})
            task_id = created.task.taskId
            await _poll(session, task_id)
            ids: list[str] = []
            statuses: dict[str, str] = {}
            cursor: str | None = None
            pages = 0
            while True:
                page = await exp.list_tasks(cursor)
                pages += 1
                ids += [t.taskId for t in page.tasks]
                statuses.update({t.taskId: t.status for t in page.tasks})
                cursor = page.nextCursor
                if not cursor or pages > 50:
                    break
            out.update(found=task_id in ids, status=statuses.get(task_id), count=len(ids), pages=pages)

        elif scenario == "anonymous_list":
            created = await exp.call_tool_as_task("slow_compute", {"seconds": 0, "label": "anon"})
            out["created"] = created.task.status
            try:
                await exp.list_tasks()
                out["list"] = {"error": None}
            except McpError as exc:
                out["list"] = {"code": exc.error.code, "message": exc.error.message}

        elif scenario == "confirm":
            created = await exp.call_tool_as_task("confirm_delete", {"filename": "a.txt"})
            task_id = created.task.taskId
            # Wait until the task asks (poll_task yields every status, input_required included).
            parked = None
            async for status in exp.poll_task(task_id):
                if status.status == "input_required":
                    parked = status.status
                    break
            out["parked"] = parked
            # tasks/result: the server sends elicitation/create on this stream; the SDK hands
            # it to elicitation_callback, POSTs the answer, and resumes the stream.
            result = await exp.get_task_result(task_id, types.CallToolResult)
            out.update(isError=result.isError, texts=_texts(result), related=_related(result))
            out["status"] = (await exp.get_task(task_id)).status
            out["asked"] = [{k: v for k, v in a.items() if k != "at"} for a in elicitations.asked]
            out["taskId"] = task_id

        elif scenario == "plain_confirm":
            # A plain call_tool, no task: the server's elicitation/create arrives on the
            # call's own stream, and the result after the SDK resumes it.
            result = await session.call_tool("confirm_delete", {"filename": "b.txt"})
            out.update(isError=result.isError, texts=_texts(result), related=_related(result))
            out["asked"] = [{k: v for k, v in a.items() if k != "at"} for a in elicitations.asked]

        elif scenario == "cancel":
            created = await exp.call_tool_as_task("slow_compute", {"seconds": 60, "label": "c"})
            task_id = created.task.taskId
            cancelled = await exp.cancel_task(task_id)
            out["cancelled"] = {
                "taskIdMatches": cancelled.taskId == task_id,
                "status": cancelled.status,
                "related": _related(cancelled),
            }
            out["status"] = (await exp.get_task(task_id)).status
            try:
                await exp.cancel_task(task_id)
                out["again"] = {"error": None}
            except McpError as exc:
                out["again"] = {"code": exc.error.code, "message": exc.error.message}
            try:
                await exp.get_task_result(task_id, types.CallToolResult)
                out["result"] = {"error": None}
            except McpError as exc:
                data = exc.error.data if isinstance(exc.error.data, dict) else {}
                out["result"] = {"code": exc.error.code, "related": data.get(RELATED)}
            out["taskId"] = task_id

        elif scenario == "long_wait":
            seconds = round(stream_max * 2 + 1.5, 1)
            created = await exp.call_tool_as_task("slow_compute", {"seconds": seconds, "label": "lw"})
            task_id = created.task.taskId
            started = time.monotonic()
            # No polling: one tasks/result that outlives several SSE streams.
            result = await exp.get_task_result(task_id, types.CallToolResult)
            out["waited"] = round(time.monotonic() - started, 2)
            out.update(
                seconds=seconds, isError=result.isError, texts=_texts(result), related=_related(result)
            )
            out["status"] = (await exp.get_task(task_id)).status
            out["taskId"] = task_id

        elif scenario == "failing":
            created = await exp.call_tool_as_task("failing_job", {})
            task_id = created.task.taskId
            out["polled"] = await _poll(session, task_id)
            result = await exp.get_task_result(task_id, types.CallToolResult)
            out.update(isError=result.isError, texts=_texts(result), related=_related(result))
            out["taskId"] = task_id
    out["wire"] = wire.entries
    out["notifications"] = sorted(set(observed.notifications))
    out["exceptions"] = observed.exceptions
    out["warnings"] = observed.warnings
    out["resumes"] = wire.resumes()
    return out


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("url")
    parser.add_argument("scenario", choices=SCENARIOS)
    parser.add_argument("--token", default="alice-token", help="bearer token ('' for anonymous)")
    parser.add_argument("--stream-max", type=float, default=3.0, help="the server's STREAM_MAX_SECONDS")
    args = parser.parse_args()
    started = time.monotonic()
    try:
        out = asyncio.run(run(args.url, args.scenario, args.token or None, args.stream_max))
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
