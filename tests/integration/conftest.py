from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from starlette.testclient import TestClient

from taskgate import wiring
from taskgate.config import EXAMPLE_TOOL_MODULES
from taskgate.http_app import create_app
from taskgate.local.dev_auth import DevAuthMiddleware
from taskgate.local.runtime import EmbeddedAws
from tests.mcp_client import Mcp

DEV_TOKENS = {"alice-token": "alice", "bob-token": "bob"}


@pytest.fixture
def aws(monkeypatch: pytest.MonkeyPatch) -> Iterator[EmbeddedAws]:
    """Fresh moto account with the table, the real state machine and the in-process worker."""
    for name in ("DEFAULT_TTL_MS", "MAX_TTL_MS", "POLL_INTERVAL_MS", "AWS_ENDPOINT_URL"):
        monkeypatch.delenv(name, raising=False)
    # The examples and the fixtures the tests call (a deployment serves taskgate_tools).
    monkeypatch.setenv("TOOL_MODULES", EXAMPLE_TOOL_MODULES)
    # Short streams keep the tests quick; resumption is what is under test.
    monkeypatch.setenv("STREAM_MAX_SECONDS", "1.5")
    # Callback URLs point at the tests' own client (the http fixture).
    monkeypatch.setenv("PUBLIC_URL", "http://localhost")
    runtime = EmbeddedAws().start()
    yield runtime
    runtime.stop()


@pytest.fixture
def retry_waits(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """The waits (seconds) the state machine's Retry rules ask for, recorded instead of
    slept: a test sees the backoff schedule without spending minutes on it."""
    from moto.stepfunctions.parser.asl.component.common.retry import retrier_decl

    waits: list[float] = []

    class _Time:
        @staticmethod
        def sleep(seconds: float) -> None:
            waits.append(seconds)

    monkeypatch.setattr(retrier_decl, "time", _Time)
    return waits


@pytest.fixture
def http(aws: EmbeddedAws) -> Iterator[TestClient]:
    # The process's root at each request: a test may change the environment and reset it.
    settings = wiring.root().settings
    app = create_app(
        lambda: wiring.root().server,
        anonymous_owner=settings.anonymous_owner,
        max_body_bytes=settings.max_body_bytes,
        callbacks=lambda: wiring.root().callbacks,
    )
    with TestClient(DevAuthMiddleware(app, DEV_TOKENS), base_url="http://localhost") as client:
        yield client


@pytest.fixture
def mcp(http: TestClient) -> Mcp:
    def post(body: Any, headers: dict[str, str]) -> tuple[int, Any]:
        resp = http.post("/mcp", content=json.dumps(body), headers=headers)
        return resp.status_code, resp.json() if resp.content else None

    return Mcp(post)


def active_ids() -> list[str]:
    """Every live task's id, as the sweeper pages through them."""
    return [task_id for page in wiring.root().store.active_pages() for task_id in page]


def owner_client(owner: str) -> Mcp:
    """A client whose requests carry ``owner`` as the authenticated caller."""

    def post(body: Any, headers: dict[str, str]) -> tuple[int, Any]:
        reply = wiring.root().server.handle(body, headers, owner)
        return reply.status, reply.body

    return Mcp(post)


def table_items(aws: EmbeddedAws) -> list[dict[str, Any]]:
    import boto3

    return boto3.client("dynamodb", region_name="us-east-1").scan(TableName=aws.table_name)["Items"]


def known_quick(*names: str) -> None:
    """Tools that have run before, quickly (domain/durations.py, in the table): their plain
    calls run inline, as a deployment's known-quick tools do."""
    root = wiring.root()
    for name in names:
        tool = root.tools.get(name)
        assert tool is not None, name
        root.durations.note(tool, 0.05)
