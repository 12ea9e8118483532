"""Drive taskgate with the real FastMCP 4 client (fastmcp + fastmcp-tasks, 2026-07-28 era).

Run with the venv that ``setup.sh`` makes (``.tools/clients/py-fastmcp``), never the
project's own: ``python fastmcp_client.py URL SCENARIO``. Prints one JSON line with what
happened; exits 0 whenever it could report (the test asserts on the JSON), 2 on usage.

The task APIs used are fastmcp-tasks' own: ``call_tool_task`` returns a ``ToolTask``
(``status`` / ``wait`` / ``result`` / ``cancel``) and ``ToolTask.result()`` answers
``input_required`` through the ``Client``'s ``elicitation_handler`` with ``tasks/update``.

Known library bug (fastmcp-tasks 4.1.4): its ``tasks/*`` request models
(``fastmcp_tasks/client_models.py``, ``GetTaskRequest`` / ``UpdateTaskRequest`` /
``CancelTaskRequest``) do not set ``name_param = "taskId"``, the ``mcp_types.Request``
ClassVar that ``mcp.client.session.ClientSession.send_request`` reads to add the
``Mcp-Name`` header. So the library sends ``tasks/get`` / ``tasks/update`` /
``tasks/cancel`` without ``Mcp-Name``, which the tasks spec says a client MUST send
("Streamable HTTP: Routing Headers") and a 2026-07-28 server rejects (400, -32020).
By default this script sets that ClassVar (``--shim``, the one-line fix) so the rest
of the library's task flow can be exercised; ``--no-shim`` runs the library as shipped.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
import traceback
from importlib.metadata import version
from typing import Any

from fastmcp import Client
from fastmcp_tasks import call_tool_task

SCENARIOS = (
    "discover",
    "greet",
    "slow",
    "slow_transparent",
    "confirm",
    "cancel",
    "failing",
    "protocol_error",
    "mrtr",
)


def _texts(result: Any) -> list[str]:
    return [c.text for c in result.content if getattr(c, "type", None) == "text"]


class Recorder:
    """What the elicitation handler was asked, and what it answered."""

    def __init__(self) -> None:
        self.asked: list[dict[str, Any]] = []

    async def handler(self, message: str, response_type: Any, params: Any, context: Any) -> Any:
        schema = getattr(params, "requested_schema", None)
        self.asked.append({"message": message, "requestedSchema": schema})
        if "confirm" in (schema or {}).get("properties", {}):
            return {"confirm": True}
        return {"name": "Alice"}


async def run(url: str, scenario: str) -> dict[str, Any]:
    recorder = Recorder()
    out: dict[str, Any] = {"client": "fastmcp", "scenario": scenario}
    async with Client(url, elicitation_handler=recorder.handler, timeout=60) as client:
        out["protocolVersion"] = client.protocol_version
        if scenario == "discover":
            out["serverName"] = client.server_info.name if client.server_info else None
            caps = client.server_capabilities
            out["extensions"] = sorted((caps.extensions or {}) if caps else {})
        elif scenario == "greet":
            result = await client.call_tool("greet", {"name": "Ada"})
            out.update(isError=result.is_error, texts=_texts(result))
        elif scenario == "slow":
            task = await call_tool_task(client, "slow_compute", {"seconds": 1, "label": "x"})
            out["created"] = {
                "status": task.create_result.status,
                "resultType": task.create_result.result_type,
            }
            seen = await task.status()
            out["firstPoll"] = {"status": seen.status, "statusMessage": seen.status_message}
            final = await task.wait(timeout=30)
            out["status"] = final.status
            result = await task.result()
            out.update(isError=result.is_error, texts=_texts(result))
        elif scenario == "slow_transparent":
            # Plain call_tool: fastmcp-tasks' ResultClaim resolves the CreateTaskResult.
            result = await client.call_tool("slow_compute", {"seconds": 1, "label": "y"})
            out.update(isError=result.is_error, texts=_texts(result))
        elif scenario == "confirm":
            task = await call_tool_task(client, "confirm_delete", {"filename": "a.txt"})
            parked = await task.wait(state="input_required", timeout=30)
            out["parked"] = {"status": parked.status, "inputRequestKeys": sorted(parked.input_requests or {})}
            result = await task.result()  # answers via elicitation_handler -> tasks/update
            out["status"] = (await task.status()).status
            out.update(isError=result.is_error, texts=_texts(result), asked=recorder.asked)
        elif scenario == "cancel":
            task = await call_tool_task(client, "slow_compute", {"seconds": 60, "label": "long"})
            out["created"] = {"status": task.create_result.status}
            started = time.monotonic()
            await task.cancel()
            final = await task.wait(timeout=30)
            out.update(status=final.status, statusMessage=final.status_message)
            out["secondsToTerminal"] = round(time.monotonic() - started, 2)
        elif scenario == "failing":
            task = await call_tool_task(client, "failing_job", {}, raise_on_error=False)
            final = await task.wait(timeout=30)
            out["status"] = final.status
            result = await task.result()
            out.update(isError=result.is_error, texts=_texts(result))
        elif scenario == "protocol_error":
            task = await call_tool_task(client, "protocol_error_job", {}, raise_on_error=False)
            final = await task.wait(timeout=30)
            out.update(status=final.status, taskError=final.error, statusMessage=final.status_message)
            result = await task.result()
            out.update(isError=result.is_error, texts=_texts(result))
        elif scenario == "mrtr":
            # input_required before the task exists (MRTR on tools/call), then the task.
            result = await client.call_tool("test_tool_with_task", {})
            out.update(isError=result.is_error, texts=_texts(result), asked=recorder.asked)
    return out


def apply_mcp_name_shim() -> None:
    """Make fastmcp-tasks' tasks/* requests carry ``Mcp-Name: <taskId>`` (see module doc)."""
    from fastmcp_tasks import client_models

    for model in (
        client_models.GetTaskRequest,
        client_models.UpdateTaskRequest,
        client_models.CancelTaskRequest,
    ):
        model.name_param = "taskId"


def main() -> int:
    args = sys.argv[1:]
    shim = "--no-shim" not in args
    args = [a for a in args if a not in ("--shim", "--no-shim")]
    if len(args) != 2 or args[1] not in SCENARIOS:
        print(f"usage: {sys.argv[0]} URL {{{'|'.join(SCENARIOS)}}} [--no-shim]", file=sys.stderr)
        return 2
    url, scenario = args
    if shim:
        apply_mcp_name_shim()
    versions = {name: version(name) for name in ("fastmcp", "fastmcp-tasks", "mcp", "mcp-types")}
    try:
        out = asyncio.run(run(url, scenario))
        out["ok"] = True
    except BaseException as exc:  # report, the test decides
        out = {
            "client": "fastmcp",
            "scenario": scenario,
            "ok": False,
            "error": f"{type(exc).__name__}: {exc}",
            "errorCode": getattr(exc, "code", None),
            "trace": traceback.format_exc()[-3000:],
        }
    out["versions"] = versions
    out["mcpNameShim"] = shim
    print(json.dumps(out, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
