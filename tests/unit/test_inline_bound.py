"""Plain tool calls must not freeze a server that serves many requests in one process
(the local server): 40 concurrent plain calls of a slow tool took every thread of
the pool, and another owner's ``tasks/get`` waited 10 s (issue 12, item 7). Inline
work now has its own bound (``MAX_INLINE_CALLS``): past it a plain call is refused
at once, 503 with Retry-After and a message that says what to do, and every other
request still finds a thread.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
from pydantic import BaseModel
from starlette.testclient import TestClient

from taskgate.tools import ToolContext, ToolRegistry
from taskgate.tools.registry import Tool
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
    task_id = world.tasks.create(owner="anonymous", tool="quick", arguments={}).task_id
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
