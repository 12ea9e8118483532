"""Composition root: builds the adapters, services and app once per process.

Lambda keeps module state between invocations, so clients and registries are
made on the first use and reused; ``reset`` exists for tests and the local runtime.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from .adapters import aws_clients
from .adapters.dynamodb_sessions import DynamoDBSessionStore
from .adapters.dynamodb_store import DynamoDBTaskStore
from .adapters.s3_blobs import S3BlobStore
from .adapters.stepfunctions_workflow import StepFunctionsWorkflow
from .clock import now_ms
from .config import Settings
from .domain.service import Limits, TaskService
from .protocol.common import AuditHook
from .protocol.server import McpServer
from .sweeper import Sweeper
from .tools.registry import ToolRegistry, registry
from .worker import Worker


@functools.cache
def settings() -> Settings:
    return Settings.from_env()


@functools.cache
def tools() -> ToolRegistry:
    return registry.load(settings().tool_modules)


@functools.cache
def store() -> DynamoDBTaskStore:
    return DynamoDBTaskStore(aws_clients.client("dynamodb"), settings().table_name)


@functools.cache
def blobs() -> S3BlobStore | None:
    bucket = settings().result_bucket
    return S3BlobStore(lambda: aws_clients.client("s3"), bucket) if bucket else None


@functools.cache
def sessions() -> DynamoDBSessionStore:
    return DynamoDBSessionStore(aws_clients.client("dynamodb"), settings().table_name, now_ms)


@functools.cache
def workflow() -> StepFunctionsWorkflow:
    return StepFunctionsWorkflow(aws_clients.client("stepfunctions"), settings().state_machine_arn)


@functools.cache
def task_service() -> TaskService:
    s = settings()
    limits = Limits(
        default_ttl_ms=s.default_ttl_ms,
        max_ttl_ms=s.max_ttl_ms,
        poll_interval_ms=s.poll_interval_ms,
        max_active_per_owner=s.max_active_per_owner,
        max_argument_bytes=s.max_argument_bytes,
        max_input_response_bytes=s.max_input_response_bytes,
    )
    return TaskService(store(), workflow(), now_ms, limits, blobs())


def build_mcp_server(audit: AuditHook | None = None) -> McpServer:
    s = settings()
    return McpServer(
        task_service(),
        tools(),
        sessions=sessions(),
        anonymous_owner=s.anonymous_owner,
        stream_budget_seconds=s.stream_max_seconds,
        audit=audit,
    )


@functools.cache
def mcp_server() -> McpServer:
    return build_mcp_server()


@functools.cache
def worker() -> Worker:
    s = settings()
    return Worker(
        store(),
        tools(),
        now_ms,
        blobs=blobs(),
        max_inline_result_bytes=s.max_inline_result_bytes,
        max_runtime_ms=s.max_task_runtime_seconds * 1000,
        yield_margin_ms=s.step_yield_margin_ms,
    )


@functools.cache
def sweeper() -> Sweeper:
    s = settings()
    return Sweeper(
        store(),
        workflow(),
        task_service(),
        now_ms,
        stale_after_ms=s.stale_after_seconds * 1000,
        max_runtime_ms=s.max_task_runtime_seconds * 1000,
    )


class TaskgateInputRequired(Exception):
    """The step ended with questions stored: the state machine parks (its Catch)."""


class TaskgateContinue(Exception):
    """The step ended at a checkpoint: the state machine runs the next one (its Catch)."""


def run_worker_step(task_id: str, remaining_ms: Callable[[], int] | None = None) -> dict[str, Any]:
    """One RunTool step. Finishing is the plain return, which ends the execution in
    one state transition; parking and continuing leave RunTool through its Catch
    rules, by these two error names (see task.asl.json)."""
    outcome = worker().run_step(task_id, remaining_ms)
    if outcome["kind"] == "input_required":
        raise TaskgateInputRequired(task_id)
    if outcome["kind"] == "continue":
        raise TaskgateContinue(task_id)
    return outcome


def reset() -> None:
    for f in (settings, tools, store, blobs, sessions, workflow, task_service, mcp_server, worker, sweeper):
        f.cache_clear()
    aws_clients.reset()
