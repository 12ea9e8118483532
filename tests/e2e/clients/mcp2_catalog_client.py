"""Drive taskgate's resources, prompts and completion with the released Python SDK v2
(``mcp==2.3.0``, a 2026-07-28 client), through its own ``Client`` API only.

Run with the venv ``setup.sh`` makes (``.tools/clients/py-fastmcp``, where fastmcp 4.1.4 pins
``mcp==2.3.0``): ``python mcp2_catalog_client.py URL``. Prints one JSON line with what happened;
exits 0 whenever it could report (the test asserts on the JSON), 2 on usage.

``test_input_required_result_prompt`` asks the user before its messages exist: the client's
multi-round-trip handling answers it through ``elicitation_callback`` and retries by itself.
"""

from __future__ import annotations

import asyncio
import base64
import json
import sys
import traceback
from importlib.metadata import version
from typing import Any

from mcp import Client, types
from mcp.shared.exceptions import MCPError


def _contents(result: types.ReadResourceResult) -> list[dict[str, Any]]:
    return [c.model_dump(mode="json", by_alias=True, exclude_none=True) for c in result.contents]


async def main(url: str) -> dict[str, Any]:
    asked: list[dict[str, Any]] = []

    async def elicit(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        asked.append({"message": params.message, "schema": getattr(params, "requested_schema", None)})
        return types.ElicitResult(action="accept", content={"context": "from the mcp 2.3.0 client"})

    out: dict[str, Any] = {"client": "mcp-python-2", "versions": {"mcp": version("mcp")}}
    async with Client(url, elicitation_callback=elicit) as client:
        out["protocolVersion"] = client.session.protocol_version
        resources = await client.list_resources()
        out["resources"] = [r.uri for r in resources.resources]
        templates = await client.list_resource_templates()
        out["templates"] = [t.uri_template for t in templates.resource_templates]
        out["text"] = _contents(await client.read_resource("test://static-text"))
        binary = _contents(await client.read_resource("test://static-binary"))
        out["binary"] = {"mimeType": binary[0]["mimeType"], "bytes": len(base64.b64decode(binary[0]["blob"]))}
        out["template"] = _contents(await client.read_resource("test://template/42/data"))
        try:
            await client.read_resource("test://no-such-resource")
            out["missing"] = None
        except MCPError as exc:
            out["missing"] = {"code": exc.error.code, "data": exc.error.data}
        prompts = await client.list_prompts()
        out["prompts"] = {p.name: [a.name for a in p.arguments or []] for p in prompts.prompts}
        with_args = await client.get_prompt("test_prompt_with_arguments", {"arg1": "one", "arg2": "two"})
        out["withArgs"] = [m.model_dump(mode="json", exclude_none=True) for m in with_args.messages]
        image = await client.get_prompt("test_prompt_with_image")
        out["imageKinds"] = [m.content.type for m in image.messages]
        embedded = await client.get_prompt("test_prompt_with_embedded_resource", {"resourceUri": "test://x"})
        out["embedded"] = embedded.messages[0].content.model_dump(mode="json", exclude_none=True)
        asking = await client.get_prompt("test_input_required_result_prompt")
        out["asked"] = asked
        out["afterAsking"] = [m.model_dump(mode="json", exclude_none=True) for m in asking.messages]
        done = await client.complete(
            types.PromptReference(type="ref/prompt", name="test_prompt_with_arguments"),
            {"name": "arg1", "value": "test"},
        )
        out["completePrompt"] = done.completion.values
        done = await client.complete(
            types.ResourceTemplateReference(type="ref/resource", uri="test://template/{id}/data"),
            {"name": "id", "value": "7"},
        )
        out["completeTemplate"] = done.completion.values
    out["ok"] = True
    return out


if __name__ == "__main__":
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    try:
        result = asyncio.run(main(sys.argv[1]))
    except Exception as exc:  # report, so the test shows what the library did
        result = {"client": "mcp-python-2", "ok": False, "error": repr(exc), "trace": traceback.format_exc()}
    print(json.dumps(result))
