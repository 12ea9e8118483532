"""Plain tool calls must not freeze a server that serves many requests in one process
(the local server): 40 concurrent plain calls of a slow tool took every thread of
the pool, and another owner's ``tasks/get`` waited 10 s (issue 12, item 7). Inline
work now has its own bound (``MAX_INLINE_CALLS``): past it a plain call is refused
at once, 503 with Retry-After and a message that says what to do, and every other
request still finds a thread.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
from pydantic import BaseModel
from starlette.testclient import TestClient

from taskgate.domain.model import NewTask
from taskgate.tools import ToolContext, ToolRegistry
from taskgate.tools.registry import Tool
from tests.asgi import exchange
from tests.fakes import World
from tests.mcp_client import envelope, headers_for

CALLS = 40
INLINE = 8
release = threading.Event()


class NoInput(BaseModel):
    pass


def _slow(args: Any, ctx: ToolContext) -> str:
    release.wait(10)
    return "done"


def _quick(args: Any, ctx: ToolContext) -> str:
    return "quick"


@pytest.fixture
def world() -> World:
    tools = ToolRegistry()
    tools.add(Tool("slow", "blocks until released", NoInput, _slow, task_support="forbidden"))
    tools.add(Tool("quick", "returns at once", NoInput, _quick))
    return World(tools, max_inline_calls=INLINE)


@pytest.fixture
def http(world: World) -> Iterator[TestClient]:
    app = world.root.app()
    with TestClient(app, base_url="http://localhost") as client:
        try:
            yield client
        finally:
            release.set()  # before the client waits for the calls still running


def _post(http: TestClient, method: str, params: dict[str, Any], *, tasks: bool = True) -> Any:
    body = json.dumps(envelope(method, params, 1, tasks=tasks))
    return http.post("/mcp", content=body, headers=headers_for(method, params))


def test_slow_plain_calls_leave_other_requests_a_thread(http: TestClient, world: World) -> None:
    release.clear()
    task_id = world.tasks.create(NewTask(owner="anonymous", tool="quick", arguments={})).task_id
    replies: list[Any] = []

    def plain_call() -> None:
        replies.append(_post(http, "tools/call", {"name": "slow", "arguments": {}}, tasks=False))

    callers = [threading.Thread(target=plain_call) for _ in range(CALLS)]
    for t in callers:
        t.start()
    # Everyone past the bound is told at once, with what to do.
    deadline = time.monotonic() + 10
    while len(replies) < CALLS - INLINE and time.monotonic() < deadline:
        time.sleep(0.01)
    refused = list(replies)
    assert len(refused) == CALLS - INLINE
    for resp in refused:
        assert resp.status_code == 503 and resp.headers["retry-after"] == "1"
        error = resp.json()["error"]
        assert error["code"] == -32603
        assert error["message"].startswith(f"Server busy: {INLINE} tool calls are already running here")
    # While the others hold their slots, a tasks/get and a task creation answer at once.
    for method, params in (("tasks/get", {"taskId": task_id}), ("tools/call", {"name": "quick"})):
        started = time.monotonic()
        resp = _post(http, method, params)
        assert resp.status_code == 200, resp.text
        assert time.monotonic() - started < 2, method
    release.set()
    for t in callers:
        t.join(20)
    done = [r for r in replies if r.status_code == 200]
    assert len(done) == INLINE and all(r.json()["result"]["content"][0]["text"] == "done" for r in done)
    # The slots are free again.
    assert _post(http, "tools/call", {"name": "quick", "arguments": {}}, tasks=False).status_code == 200


# -- issue 21 (N7): one owner took all 16 slots and kept them after hanging up; every
# other owner got 503. Each owner now has a share (MAX_INLINE_CALLS_PER_OWNER, 4 by
# default), and a caller that goes away frees its slot at the tool's next progress report.

TOKENS = {"mallory-token": "mallory", "alice-token": "alice", "bob-token": "bob"}


@pytest.fixture
def signed_in(world: World) -> Iterator[TestClient]:
    from taskgate.local.dev_auth import DevAuthMiddleware

    app = world.root.app()
    with TestClient(DevAuthMiddleware(app, TOKENS), base_url="http://localhost") as client:
        try:
            yield client
        finally:
            release.set()


def _as(http: TestClient, token: str, name: str) -> Any:
    params = {"name": name, "arguments": {}}
    headers = {**headers_for("tools/call", params), "authorization": f"Bearer {token}"}
    return http.post(
        "/mcp", content=json.dumps(envelope("tools/call", params, 1, tasks=False)), headers=headers
    )


def test_one_owner_cannot_take_every_slot(signed_in: TestClient, world: World) -> None:
    release.clear()
    replies: list[Any] = []
    hog = [
        threading.Thread(target=lambda: replies.append(_as(signed_in, "mallory-token", "slow")))
        for _ in range(INLINE)
    ]
    for t in hog:
        t.start()
    share = 4  # the default MAX_INLINE_CALLS_PER_OWNER
    deadline = time.monotonic() + 10
    while len(replies) < INLINE - share and time.monotonic() < deadline:
        time.sleep(0.01)
    assert len(replies) == INLINE - share, [r.status_code for r in replies]
    for resp in replies:
        assert resp.status_code == 503
        assert resp.json()["error"]["message"].startswith(
            f"Server busy: you already have {share} tool calls running here"
        )
    # Other owners still find slots while mallory holds her share.
    for token in ("alice-token", "bob-token"):
        resp = _as(signed_in, token, "quick")
        assert resp.status_code == 200, resp.text
        assert resp.json()["result"]["content"][0]["text"] == "quick"
    release.set()
    for t in hog:
        t.join(20)
    assert sorted(r.status_code for r in replies).count(200) == share
    assert world.slots.in_use == 0


def _plain_call_that_hangs_up(world: World, tool: str) -> int:
    """A plain call over ASGI whose client disconnects once the tool has started; its status."""
    app = world.root.app()
    params = {"name": tool, "arguments": {}}
    body = json.dumps(envelope("tools/call", params, 1, tasks=False)).encode()
    messages = [{"type": "http.request", "body": body, "more_body": False}]

    async def receive() -> dict[str, Any]:
        if messages:
            return messages.pop(0)
        # The client hangs up as soon as the tool runs.
        await asyncio.to_thread(started.wait, 10)
        return {"type": "http.disconnect"}

    headers = [(k.encode(), v.encode()) for k, v in headers_for("tools/call", params).items()]
    return exchange(app, "POST", headers, receive).status_code


started = threading.Event()
seen: dict[str, Any] = {}


def _works_until_told(args: Any, ctx: ToolContext) -> str:
    """Reports progress until its call is over (or 10 s pass: the call was never told)."""
    started.set()
    deadline = time.monotonic() + 10
    try:
        while time.monotonic() < deadline:
            ctx.progress("working")
            time.sleep(0.01)
    except Exception as exc:
        seen["stopped_by"] = type(exc).__name__
        raise
    seen["stopped_by"] = "its own deadline"
    return "finished"


def test_a_caller_that_hangs_up_frees_its_slot(world: World) -> None:
    world.tools.add(Tool("works", "reports progress", NoInput, _works_until_told, task_support="forbidden"))
    started.clear()
    seen.clear()
    _plain_call_that_hangs_up(world, "works")
    # The disconnect reached the tool's context: its next progress report stopped it.
    assert seen["stopped_by"] == "TaskCancelled"
    assert world.slots.in_use == 0
