"""The callback route's edges (red team round three, informational): the Bearer secret its
docstring promised, NaN refused, control characters kept out of the status a client reads,
and a task id no task has refused without asking the table."""

from __future__ import annotations

from typing import Any

import pytest
from starlette.testclient import TestClient

from tests.fakes import World
from tests.fixture_tools import CALLBACK_URLS
from tests.mcp_client import Mcp

BASE = "https://tasks.example.com"


@pytest.fixture
def cb_world() -> World:
    return World(public_url=BASE)


def _waiting(world: World) -> tuple[Mcp, str, str, str]:
    mcp = world.mcp()
    task_id: str = mcp.call("wait_for_callback", {})["taskId"]
    world.settle()
    path, _, query = CALLBACK_URLS[task_id][0].removeprefix(BASE).partition("?")
    return mcp, task_id, path, query.removeprefix("secret=")


def test_the_secret_may_come_as_a_bearer_token(cb_world: World) -> None:
    mcp, task_id, path, secret = _waiting(cb_world)
    with TestClient(cb_world.root.app(), base_url="http://localhost") as http:
        wrong = http.post(path, json={"status": "succeeded"}, headers={"Authorization": "Bearer nope"})
        assert wrong.status_code == 404
        ok = http.post(
            path, json={"status": "succeeded", "output": 1}, headers={"Authorization": f"Bearer {secret}"}
        )
        assert ok.status_code == 200, ok.text
    cb_world.settle()
    assert mcp.get(task_id)["result"]["structuredContent"] == {"output": 1}


@pytest.mark.parametrize(
    "body", ['{"status":"succeeded","output":NaN}', '{"status":"heartbeat","progress":Infinity}']
)
def test_nan_and_infinity_are_refused(cb_world: World, body: str) -> None:
    mcp, task_id, path, secret = _waiting(cb_world)
    with TestClient(cb_world.root.app(), base_url="http://localhost") as http:
        reply = http.post(
            f"{path}?secret={secret}", content=body, headers={"content-type": "application/json"}
        )
    assert reply.status_code == 400
    cb_world.settle()
    assert mcp.get(task_id)["status"] == "working"


def test_a_heartbeats_text_reaches_the_client_without_control_characters(cb_world: World) -> None:
    mcp, task_id, path, secret = _waiting(cb_world)
    message = "step 2\x1b[31m of 3\u202e\x07"
    reply = cb_world.root.callbacks.deliver(
        path.rsplit("/", 1)[1], secret, {"status": "heartbeat", "message": message}
    )
    assert reply.status == 200
    status: Any = mcp.get(task_id)["statusMessage"]
    assert status.startswith("step 2") and not any(ch in status for ch in "\x1b\u202e\x07")


def test_a_task_id_longer_than_any_is_no_such_callback_without_a_lookup(cb_world: World) -> None:
    asked: list[str] = []
    store = cb_world.root.callbacks._store  # type: ignore[attr-defined]
    real = store.get

    def get(task_id: str, *args: Any, **kwargs: Any) -> Any:
        asked.append(task_id)
        return real(task_id, *args, **kwargs)

    store.get = get
    reply = cb_world.root.callbacks.deliver("x" * 3000, "secret", {"status": "succeeded"})
    assert (reply.status, reply.body) == (404, {"error": "No such callback."}) and asked == []
