"""Drive taskgate's ``subscriptions/listen`` with the released Python MCP SDK 2 (``mcp==2.3.0``):
``Client.listen()``, its typed events, its graceful end and a re-listen.

Run with the venv that ``setup.sh`` makes (``.tools/clients/py-fastmcp``):
``python mcp2_listen.py SCENARIO URL TOKEN [...]``. Prints one JSON line; exits 0 whenever it
could report (the test asserts on the JSON), 2 on usage.

- ``catalog URL TOKEN``: listen for ``test://watched-resource`` (its version moves every 3 s)
  and the resource list; run an ``orders_report`` task (a finished report joins the caller's
  resource list); collect the events, re-listening whenever a stream ends on purpose, until a
  resource update and a list change have both arrived and one stream has ended and been followed.
- ``cap URL TOKEN OTHER_TOKEN``: open listens one after another until the server refuses one;
  another owner's listen; then one closed and the refused one tried again.
- ``buffered URL TOKEN SECONDS``: listen behind a front that buffers (the HTTP API), then go on
  as an application whose listen honoured nothing does: read the resource every 3 s (its
  version interval) for SECONDS. The test counts what reached the front.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
import traceback
import urllib.request
from importlib.metadata import version
from typing import Any

from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.client.subscriptions import ResourcesListChanged, ResourceUpdated, SubscriptionLost
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.shared.exceptions import MCPError

WATCHED = "test://watched-resource"
SCENARIOS = ("catalog", "cap", "buffered")


def _client(url: str, token: str) -> Client:
    http = create_mcp_http_client(headers={"authorization": f"Bearer {token}"})
    return Client(streamable_http_client(url, http_client=http))


def _honoured(sub: Any) -> dict[str, Any]:
    return dict(sub.honored.model_dump(by_alias=True, exclude_none=True))


def _start_report(url: str, token: str) -> str:
    """An orders_report task, started as any tasks client of the same user would (mcp 2.3.0 has
    no tasks client): a raw tools/call that declares the tasks extension."""
    meta = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "e2e-raw", "version": "0"},
        "io.modelcontextprotocol/clientCapabilities": {"extensions": {"io.modelcontextprotocol/tasks": {}}},
    }
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "orders_report", "arguments": {"year": 2024, "orders": 100}, "_meta": meta},
    }
    request = urllib.request.Request(
        url,
        data=json.dumps(body).encode(),
        headers={
            "content-type": "application/json",
            "accept": "application/json, text/event-stream",
            "mcp-protocol-version": "2026-07-28",
            "mcp-method": "tools/call",
            "mcp-name": "orders_report",
            "authorization": f"Bearer {token}",
        },
    )
    with urllib.request.urlopen(request, timeout=30) as resp:
        return str(json.loads(resp.read())["result"]["taskId"])


async def catalog(url: str, token: str) -> dict[str, Any]:
    out: dict[str, Any] = {"streams": [], "events": []}
    started = time.monotonic()
    async with _client(url, token) as client:
        out["serverCapabilities"] = client.session.server_capabilities.resources.model_dump(exclude_none=True)  # type: ignore[union-attr]
        report: str | None = None
        stream = 0
        while time.monotonic() - started < 45:
            stream += 1
            opened = time.monotonic()
            end = "graceful"
            async with client.listen(resources_list_changed=True, resource_subscriptions=[WATCHED]) as sub:
                honoured = _honoured(sub)
                if report is None:
                    report = await asyncio.to_thread(_start_report, url, token)
                try:
                    async for event in sub:
                        if isinstance(event, ResourceUpdated):
                            # A consumer refetches what changed: read it.
                            read = await client.read_resource(event.uri)
                            text = getattr(read.contents[0], "text", "")
                            out["events"].append(
                                {"stream": stream, "kind": "updated", "uri": event.uri, "text": text}
                            )
                        elif isinstance(event, ResourcesListChanged):
                            listed = await client.list_resources()
                            uris = [r.uri for r in listed.resources]
                            out["events"].append({"stream": stream, "kind": "list_changed", "listed": uris})
                except SubscriptionLost:
                    end = "lost"
            out["streams"].append(
                {"honoured": honoured, "end": end, "seconds": round(time.monotonic() - opened, 2)}
            )
            kinds = {e["kind"] for e in out["events"]}
            later = any(e["stream"] > 1 for e in out["events"])
            if {"updated", "list_changed"} <= kinds and later:
                break
        out["report"] = report
    return out


async def cap(url: str, token: str, other: str) -> dict[str, Any]:
    out: dict[str, Any] = {"opened": [], "refused": None}
    async with _client(url, token) as client, _client(url, other) as other_client:
        contexts = []
        for _ in range(5):
            context = client.listen(resource_subscriptions=[WATCHED])
            try:
                sub = await context.__aenter__()
            except MCPError as refused:
                out["refused"] = {
                    "code": refused.error.code,
                    "message": refused.error.message,
                    "data": refused.error.data,
                }
                break
            contexts.append(context)
            out["opened"].append(_honoured(sub))
        async with other_client.listen(resource_subscriptions=[WATCHED]) as theirs:
            out["otherOwner"] = _honoured(theirs)
        await contexts.pop().__aexit__(None, None, None)  # one stream closed by its client
        # Deployed, nothing tells the streaming function its client left: the stream (and its
        # place) lasts to its end. Try again until a place is free, and say when it was.
        closed = time.monotonic()
        out["afterClose"] = None
        while out["afterClose"] is None and time.monotonic() - closed < 15:
            context = client.listen(resource_subscriptions=[WATCHED])
            try:
                out["afterClose"] = _honoured(await context.__aenter__())
                out["freeAfterSeconds"] = round(time.monotonic() - closed, 1)
                contexts.append(context)
            except MCPError:
                await asyncio.sleep(0.5)
        for context in contexts:
            await context.__aexit__(None, None, None)
    return out


async def buffered(url: str, token: str, seconds: float) -> dict[str, Any]:
    out: dict[str, Any] = {"reads": 0}
    async with _client(url, token) as client:
        out["serverCapabilities"] = client.session.server_capabilities.resources.model_dump(exclude_none=True)  # type: ignore[union-attr]
        ended = "open"
        async with client.listen(resources_list_changed=True, resource_subscriptions=[WATCHED]) as sub:
            out["honoured"] = _honoured(sub)
            try:
                out["events"] = [type(e).__name__ async for e in sub]
                ended = "graceful"
            except SubscriptionLost:
                ended = "lost"
        out["end"] = ended
        # Nothing is pushed here: the application reads what it needs at its own pace.
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            await client.read_resource(WATCHED)
            out["reads"] += 1
            await asyncio.sleep(3)
    return out


def main(argv: list[str]) -> int:
    if len(argv) < 4 or argv[1] not in SCENARIOS:
        print(f"usage: mcp2_listen.py {{{'|'.join(SCENARIOS)}}} URL TOKEN [...]", file=sys.stderr)
        return 2
    scenario, url, token, *rest = argv[1:]
    out: dict[str, Any] = {"client": "mcp", "version": version("mcp"), "scenario": scenario}
    try:
        if scenario == "catalog":
            out.update(asyncio.run(catalog(url, token)))
        elif scenario == "cap":
            out.update(asyncio.run(cap(url, token, rest[0])))
        else:
            out.update(asyncio.run(buffered(url, token, float(rest[0]))))
        out["ok"] = True
    except BaseException as exc:  # report everything: the test asserts on the JSON
        out.update(ok=False, error=f"{type(exc).__name__}: {exc}", traceback=traceback.format_exc()[-3000:])
    print(json.dumps(out, default=str))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
