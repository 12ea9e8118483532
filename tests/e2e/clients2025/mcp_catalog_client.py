"""Drive taskgate's resources, prompts and completion with the released Python SDK
``mcp==1.30.0`` (2025-11-25), through ``ClientSession``'s own API only.

Run with the venv ``setup.sh`` makes (``.tools/clients2025/py``):
``python mcp_catalog_client.py URL SCENARIO [KILOBYTES]``. Prints one JSON line; exits 0 whenever
it could report (the test asserts on the JSON), 2 on usage.

- ``catalog``: ``list_resources``, ``list_resource_templates``, ``read_resource`` (text, binary,
  template, missing), ``subscribe_resource`` and the ``notifications/resources/updated`` that
  arrives on an open ``tasks/result`` stream, ``unsubscribe_resource``, ``list_prompts``,
  ``get_prompt``, ``complete``.
- ``large``: a task whose result is larger than one response: ``get_task_result`` returns
  resource_links, each part is read with ``read_resource`` and the parts are joined.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
import sys
import time
import traceback
import warnings
from datetime import timedelta
from importlib.metadata import version
from typing import Any

from mcp import ClientSession, types
from mcp.client.streamable_http import streamablehttp_client
from mcp.shared.exceptions import McpError
from pydantic import AnyUrl

warnings.simplefilter("ignore", DeprecationWarning)

CALL_TIMEOUT = timedelta(seconds=120)


class Notes:
    def __init__(self) -> None:
        self.updated: list[str] = []

    async def handler(self, message: Any) -> None:
        if isinstance(message, types.ServerNotification) and isinstance(
            message.root, types.ResourceUpdatedNotification
        ):
            self.updated.append(str(message.root.params.uri))


def _dump(model: Any) -> Any:
    return model.model_dump(mode="json", by_alias=True, exclude_none=True)


async def catalog(session: ClientSession, notes: Notes) -> dict[str, Any]:
    out: dict[str, Any] = {}
    init_caps = session.get_server_capabilities()
    out["capabilities"] = _dump(init_caps) if init_caps else None
    out["resources"] = [str(r.uri) for r in (await session.list_resources()).resources]
    out["templates"] = [t.uriTemplate for t in (await session.list_resource_templates()).resourceTemplates]
    out["text"] = [_dump(c) for c in (await session.read_resource(AnyUrl("test://static-text"))).contents]
    blob = (await session.read_resource(AnyUrl("test://static-binary"))).contents[0]
    out["binary"] = {"mimeType": blob.mimeType, "bytes": len(base64.b64decode(getattr(blob, "blob", "")))}
    out["template"] = [
        _dump(c) for c in (await session.read_resource(AnyUrl("test://template/123/data"))).contents
    ]
    try:
        await session.read_resource(AnyUrl("test://no-such-resource"))
        out["missing"] = None
    except McpError as exc:
        out["missing"] = {"code": exc.error.code, "data": exc.error.data}
    # Subscribe, then wait on a task's result long enough for the watched resource to change.
    await session.subscribe_resource(AnyUrl("test://watched-resource"))
    exp = session.experimental
    created = await exp.call_tool_as_task("slow_compute", {"seconds": 4, "label": "watch"})
    started = time.monotonic()
    result = await exp.get_task_result(created.task.taskId, types.CallToolResult)
    out["waited"] = {"seconds": round(time.monotonic() - started, 1), "isError": result.isError}
    out["updated"] = list(notes.updated)
    await session.unsubscribe_resource(AnyUrl("test://watched-resource"))
    prompts = (await session.list_prompts()).prompts
    out["prompts"] = {p.name: [a.name for a in p.arguments or []] for p in prompts}
    got = await session.get_prompt("test_prompt_with_arguments", {"arg1": "alpha", "arg2": "beta"})
    out["withArgs"] = [_dump(m) for m in got.messages]
    embedded = await session.get_prompt("test_prompt_with_embedded_resource", {"resourceUri": "test://doc"})
    out["embedded"] = _dump(embedded.messages[0].content)
    image = await session.get_prompt("test_prompt_with_image")
    out["imageKinds"] = [m.content.type for m in image.messages]
    done = await session.complete(
        types.PromptReference(type="ref/prompt", name="test_prompt_with_arguments"),
        {"name": "arg1", "value": "test"},
    )
    out["completePrompt"] = _dump(done.completion)
    done = await session.complete(
        types.ResourceTemplateReference(type="ref/resource", uri="test://template/{id}/data"),
        {"name": "id", "value": "1"},
    )
    out["completeTemplate"] = _dump(done.completion)
    return out


async def large(session: ClientSession, kilobytes: int) -> dict[str, Any]:
    exp = session.experimental
    created = await exp.call_tool_as_task("big_result", {"kilobytes": kilobytes})
    started = time.monotonic()
    result = await exp.get_task_result(created.task.taskId, types.CallToolResult)
    out: dict[str, Any] = {"taskId": created.task.taskId, "waited": round(time.monotonic() - started, 1)}
    out["kinds"] = [c.type for c in result.content]
    links = [c for c in result.content if isinstance(c, types.ResourceLink)]
    out["firstLink"] = _dump(links[0]) if links else None
    out["note"] = next((c.text for c in result.content if isinstance(c, types.TextContent)), None)
    parts: list[str] = []
    for link in links:
        read = await session.read_resource(link.uri)
        [contents] = read.contents
        assert isinstance(contents, types.TextResourceContents)
        parts.append(contents.text)
    joined = "".join(parts)
    original = json.loads(joined)
    text = original["content"][0]["text"]
    out["parts"] = len(parts)
    out["largestPart"] = max((len(p.encode()) for p in parts), default=0)
    out["jsonBytes"] = len(joined.encode())
    out["textBytes"] = len(text.encode())
    out["textSha256"] = hashlib.sha256(text.encode()).hexdigest()
    out["isError"] = original.get("isError")
    return out


async def run(url: str, scenario: str, kilobytes: int) -> dict[str, Any]:
    notes = Notes()
    out: dict[str, Any] = {"client": "mcp-python", "version": version("mcp"), "scenario": scenario}
    async with (
        streamablehttp_client(url) as (read, write, _),
        ClientSession(
            read, write, read_timeout_seconds=CALL_TIMEOUT, message_handler=notes.handler
        ) as session,
    ):
        init = await session.initialize()
        out["protocolVersion"] = init.protocolVersion
        if scenario == "catalog":
            out.update(await catalog(session, notes))
        elif scenario == "large":
            out.update(await large(session, kilobytes))
        else:
            raise ValueError(f"unknown scenario {scenario}")
    out["ok"] = True
    return out


if __name__ == "__main__":
    if len(sys.argv) not in (3, 4):
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    kb = int(sys.argv[3]) if len(sys.argv) == 4 else 10_240
    try:
        report = asyncio.run(run(sys.argv[1], sys.argv[2], kb))
    except Exception as exc:  # report, so the test shows what the library did
        report = {"client": "mcp-python", "ok": False, "error": repr(exc), "trace": traceback.format_exc()}
    print(json.dumps(report))
