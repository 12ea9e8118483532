"""Results larger than one response (issue 12, item 3): delivered as resource_links to
parts of their JSON, each read with resources/read by the task's owner only, in both
eras; the parts join to exactly the stored result, whatever characters they split."""

from __future__ import annotations

import json
from typing import Any

import pytest
from starlette.testclient import TestClient

from taskgate.domain.model import Outcome, TaskRecord, TaskStatus
from taskgate.domain.results import ResultStore
from taskgate.http_app import create_app
from taskgate.testing.memory import MemoryBlobs
from tests.fakes import World
from tests.mcp_client import Legacy, Mcp

THRESHOLD = 16_384  # parts of 8 KiB


def _world() -> World:
    return World(max_inline_result_bytes=4_096, max_result_response_bytes=THRESHOLD)


def _join(client: Mcp | Legacy, result: dict[str, Any]) -> dict[str, Any]:
    links = [c for c in result["content"] if c["type"] == "resource_link"]
    texts = []
    for link in links:
        read = client.result("resources/read", {"uri": link["uri"]})
        [contents] = read["contents"]
        assert contents["uri"] == link["uri"] and contents["mimeType"] == "application/json"
        assert len(contents["text"].encode()) <= THRESHOLD // 2 + 3
        texts.append(contents["text"])
    return json.loads("".join(texts))  # type: ignore[no-any-return]


def test_tasks_get_links_a_large_result_and_its_parts_join_to_it() -> None:
    world = _world()
    alice = world.mcp("alice")
    task_id = alice.call("big_result", {"kilobytes": 64})["taskId"]
    world.settle()
    stored = json.loads(world.blobs.objects[f"results/{task_id}.json"])
    result = alice.get(task_id)["result"]
    note, *links = result["content"]
    total = len(world.blobs.objects[f"results/{task_id}.json"])
    assert note["type"] == "text" and f"{total} bytes" in note["text"]
    assert result["isError"] is False and "structuredContent" not in result
    assert len(links) == -(-total // (THRESHOLD // 2))
    assert links[0] == {
        "type": "resource_link",
        "uri": f"taskgate://tasks/{task_id}/result/1",
        "name": f"result-part-1-of-{len(links)}",
        "title": f"Result of task {task_id}, part 1 of {len(links)}",
        "mimeType": "application/json",
        "size": THRESHOLD // 2,
    }
    assert sum(link["size"] for link in links) == total
    assert _join(alice, result) == stored
    assert stored["content"][0]["text"].startswith("00000000:")


def test_only_the_owner_reads_the_parts_and_there_are_no_others() -> None:
    world = _world()
    alice, bob = world.mcp("alice"), world.mcp("bob")
    task_id = alice.call("big_result", {"kilobytes": 64})["taskId"]
    world.settle()
    parts = len(alice.get(task_id)["result"]["content"]) - 1
    first = f"taskgate://tasks/{task_id}/result/1"
    assert bob.request("resources/read", {"uri": first})["error"] == {
        "code": -32602,
        "message": "Resource not found",
        "data": {"uri": first},
    }
    for uri in (
        f"taskgate://tasks/{task_id}/result/{parts + 1}",
        f"taskgate://tasks/{task_id}/result/0",
        f"taskgate://tasks/{task_id}/result/x",
        "taskgate://tasks/00000000-0000-4000-8000-000000000000/result/1",
        f"taskgate://tasks/{'x' * 300}/result/1",
    ):
        assert alice.request("resources/read", {"uri": uri})["error"]["data"] == {"uri": uri}, uri


def test_the_2025_tasks_result_delivers_the_same_links() -> None:
    world = _world()
    app = create_app(lambda: world.server, anonymous_owner="anonymous", max_body_bytes=1_048_576)
    with TestClient(app, base_url="http://localhost") as client:
        legacy = Legacy(client)
        legacy.initialize()
        created = legacy.result(
            "tools/call", {"name": "big_result", "arguments": {"kilobytes": 40}, "task": {}}
        )
        task_id = created["task"]["taskId"]
        world.settle()
        result = legacy.result("tasks/result", {"taskId": task_id})
        assert result["_meta"]["io.modelcontextprotocol/related-task"] == {"taskId": task_id}
        assert [c["type"] for c in result["content"]][:2] == ["text", "resource_link"]
        assert _join(legacy, result) == json.loads(world.blobs.objects[f"results/{task_id}.json"])
        # The 2025 error for a part that is not there is the 2025 not-found code.
        missing = f"taskgate://tasks/{task_id}/result/99"
        assert legacy.request("resources/read", {"uri": missing})["error"]["code"] == -32002


def test_a_small_result_is_delivered_whole(world: World) -> None:
    alice = world.mcp("alice")
    task_id = alice.call("big_result", {"kilobytes": 8})["taskId"]
    world.settle()
    result = alice.get(task_id)["result"]
    assert [c["type"] for c in result["content"]] == ["text"]
    # Its single part is readable too, and is the whole JSON.
    part = alice.result("resources/read", {"uri": f"taskgate://tasks/{task_id}/result/1"})
    assert json.loads(part["contents"][0]["text"])["content"] == result["content"]


def _record(result: dict[str, Any] | None, ref: str | None = None, **changes: Any) -> TaskRecord:
    fields: dict[str, Any] = dict(
        task_id="t1",
        owner="o",
        tool="x",
        arguments={},
        status=TaskStatus.COMPLETED,
        created_at_ms=0,
        last_updated_at_ms=0,
        ttl_ms=1,
        poll_interval_ms=1,
        expires_at_ms=1,
        retention_ms=1,
        result=result,
        result_ref=ref,
        outcome=Outcome.SUCCESS,
    )
    fields.update(changes)
    return TaskRecord(**fields)


TEXTS = [
    "a" * 5000,
    "\u00e9" * 3000,  # 2-byte characters
    "\u20ac\u00e9a" * 1500,  # 3-, 2- and 1-byte characters mixed
    "\U0001f600" * 1200,  # 4-byte characters
    '"\\' * 2000,  # what JSON escapes
]


@pytest.mark.parametrize("text", TEXTS, ids=["ascii", "two-byte", "mixed", "four-byte", "escaped"])
@pytest.mark.parametrize("limit", [2_048, 2_051, 3_001, 4_099])
def test_parts_split_between_characters_and_join_exactly(text: str, limit: int) -> None:
    blobs = MemoryBlobs()
    store = ResultStore(blobs, max_inline_bytes=100, max_delivered_bytes=limit)
    result = {"content": [{"type": "text", "text": text}], "isError": False}
    placed = store.place("t1", result, 0, keep_ms=3_600_000)
    assert placed.ref is not None
    record = _record(None, placed.ref)
    delivered = store.attach(record).result
    assert delivered is not None
    links = [c for c in delivered["content"] if c["type"] == "resource_link"]
    parts = [store.read_part(record, n) for n in range(1, len(links) + 1)]
    assert all(p is not None and p.parts == len(links) for p in parts)
    assert json.loads("".join(p.text for p in parts if p)) == result
    assert store.read_part(record, len(links) + 1) is None
    # The same parts come from a result kept in the row.
    inline = _record(result)
    assert "".join(p.text for n in range(1, len(links) + 1) if (p := store.read_part(inline, n))) == (
        json.dumps(result, separators=(",", ":"), ensure_ascii=False)
    )


def test_a_tool_error_stays_an_error_and_unfinished_tasks_have_no_parts() -> None:
    store = ResultStore(MemoryBlobs(), max_inline_bytes=10**6, max_delivered_bytes=2_048)
    big = {"content": [{"type": "text", "text": "e" * 5000}], "isError": True}
    linked = store.attach(_record(big, outcome=Outcome.TOOL_ERROR)).result
    assert linked is not None and linked["isError"] is True
    assert [c["type"] for c in linked["content"]][:2] == ["text", "resource_link"]
    assert store.read_part(_record(big, status=TaskStatus.WORKING), 1) is None
    assert store.read_part(_record(None, status=TaskStatus.FAILED), 1) is None
