"""Large results outlive their tasks, and a result that is gone all the same is a
clear, permanent error: never a "please retry" that can never succeed."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from botocore.exceptions import ClientError
from starlette.testclient import TestClient

from taskgate.adapters.s3_blobs import S3BlobStore
from taskgate.codes import INTERNAL_ERROR
from taskgate.domain.errors import DependencyFailure, ResultUnavailable, ServiceUnavailable
from taskgate.domain.model import NewTask
from taskgate.domain.results import DAY_MS, RETENTION_CLASSES_DAYS, retention_days
from tests.fakes import World
from tests.mcp_client import Legacy
from tests.sse import result_over_streams

GONE = "The task's result is no longer stored; it cannot be returned"


def test_each_result_is_kept_at_least_as_long_as_its_task_row() -> None:
    assert retention_days(1) == 1
    assert retention_days(DAY_MS) == 2  # a day plus clock skew needs the next class
    assert retention_days(7 * DAY_MS - 120_000) == 7
    assert retention_days(365 * DAY_MS) == 366  # the longest TTL the template allows
    for keep_ms in (1, DAY_MS, 3 * DAY_MS, 40 * DAY_MS, 365 * DAY_MS):
        assert retention_days(keep_ms) * DAY_MS > keep_ms
    with pytest.raises(ValueError, match="no retention class"):
        retention_days(max(RETENTION_CLASSES_DAYS) * DAY_MS)


@pytest.mark.parametrize(("ttl_ms", "days"), [(3_600_000, 1), (7 * DAY_MS, 30), (2 * DAY_MS, 7)])
def test_the_worker_writes_a_large_result_with_its_tasks_retention(ttl_ms: int, days: int) -> None:
    world = World(max_inline_result_bytes=1_000, max_ttl_ms=365 * DAY_MS)
    record = world.tasks.create(
        NewTask(owner="ann", tool="big_result", arguments={"kilobytes": 4}, requested_ttl_ms=ttl_ms)
    )
    world.settle()
    ref = world.store.records[record.task_id].result_ref
    assert ref is not None and world.blobs.keep_days[ref] == days


def _gone_world() -> World:
    world = World(max_inline_result_bytes=1_000)

    def gone(key: str, *args: Any) -> Any:
        raise KeyError(key)  # what S3BlobStore raises for NoSuchKey

    world.blobs.get = gone  # type: ignore[method-assign]
    world.blobs.get_range = gone  # type: ignore[method-assign]
    return world


def test_a_vanished_result_is_a_clear_error_in_tasks_get_without_retry() -> None:
    world = _gone_world()
    mcp = world.mcp("ann")
    task_id = mcp.call("big_result", {"kilobytes": 4})["taskId"]
    reply = mcp.request("tasks/get", {"taskId": task_id})
    assert reply["error"] == {"code": INTERNAL_ERROR, "message": GONE}
    assert reply["_http_status"] != 503


@pytest.fixture
def gone_http() -> Iterator[tuple[World, TestClient]]:
    world = _gone_world()
    app = world.root.app()
    with TestClient(app, base_url="http://localhost") as client:
        yield world, client


def test_a_vanished_result_ends_tasks_result_with_that_error_in_the_2025_era(
    gone_http: tuple[World, TestClient],
) -> None:
    world, http = gone_http
    legacy = Legacy(http)
    legacy.initialize()
    params: dict[str, Any] = {"name": "big_result", "arguments": {"kilobytes": 4}, "task": {}}
    waited = legacy.result("tools/call", params)["task"]["taskId"]
    # Waiting on the stream while the task ends: the stream's answer is the error.
    message, streams = result_over_streams(legacy, waited)
    assert message["error"]["code"] == INTERNAL_ERROR and message["error"]["message"] == GONE
    assert streams
    # Asked after it ended: the same error as a plain JSON-RPC response.
    ended = legacy.result("tools/call", params)["task"]["taskId"]
    world.settle()
    error = legacy.request("tasks/result", {"taskId": ended})["error"]
    assert error == {"code": INTERNAL_ERROR, "message": GONE}


class _S3:
    def __init__(self, code: str, status: int) -> None:
        self.error = ClientError(
            {"Error": {"Code": code, "Message": "m"}, "ResponseMetadata": {"HTTPStatusCode": status}},
            "GetObject",
        )
        self.puts: list[dict[str, Any]] = []

    def get_object(self, **kwargs: Any) -> Any:
        raise self.error

    def put_object(self, **kwargs: Any) -> None:
        self.puts.append(kwargs)


@pytest.mark.parametrize(
    ("code", "status", "raised"),
    [
        ("NoSuchKey", 404, KeyError),  # the result store turns it into ResultUnavailable
        ("AccessDenied", 403, DependencyFailure),  # permanent: -32603, no retry
        ("SlowDown", 503, ServiceUnavailable),  # retryable: 503 + Retry-After
        ("InternalError", 500, ServiceUnavailable),
    ],
)
def test_s3_reads_fail_by_kind(code: str, status: int, raised: type[Exception]) -> None:
    blobs = S3BlobStore(lambda: _S3(code, status), "bucket")
    with pytest.raises(raised) as caught:
        blobs.get("results/t.json")
    assert not isinstance(caught.value, ResultUnavailable)
    with pytest.raises(raised):
        blobs.get_range("results/t.json", 0, 100)  # how results are read since large-result parts


def test_s3_writes_tag_the_retention_class_the_lifecycle_rules_match() -> None:
    s3 = _S3("x", 500)
    S3BlobStore(lambda: s3, "bucket").put("results/t.json", b"{}", keep_days=7)
    assert s3.puts[0]["Tagging"] == "retention=7d"
