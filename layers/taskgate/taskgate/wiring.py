"""Composition root: builds the adapters, services and app once per process.

Lambda keeps module state between invocations, so clients and registries are
made on the first use and reused; ``reset`` exists for tests and the local runtime.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Sequence
from typing import TYPE_CHECKING

from .adapters import aws_clients
from .adapters.dynamodb_store import DynamoDBTaskStore
from .adapters.s3_blobs import S3BlobStore
from .adapters.secrets import SecretsManagerSecret
from .adapters.stepfunctions_workflow import StepFunctionsWorkflow
from .clock import now_ms
from .config import Settings
from .domain.limits import Limits
from .domain.results import ResultStore
from .domain.service import TaskService
from .protocol.deferred import DeferredEra
from .protocol.era import Era
from .protocol.request_state import RequestStates, ephemeral_keys
from .protocol.server import McpServer
from .protocol.shared import AuditHook, InlineSlots, Services
from .protocol.transport_security import TransportSecurity
from .protocol.v2026 import Era2026
from .tools.registry import ToolRegistry, registry

# Imported where they are built: each function loads its own part (the API never
# imports the worker's step or the sweeper; the 2025 era loads with its first request).
if TYPE_CHECKING:
    from .adapters.dynamodb_sessions import DynamoDBSessionStore
    from .auth.build import SignInPorts
    from .auth.resource import SignIn
    from .auth.state import SignInStore
    from .domain.sessions import SessionStore
    from .domain.sweeper import Sweeper
    from .domain.worker import Worker


@functools.cache
def settings() -> Settings:
    return Settings.from_env()


@functools.cache
def sign_in() -> SignIn | None:
    """AuthMode's callers (taskgate/auth), or None when every caller is anonymous. Only the
    metadata and the routes exist at a cold start: joserfc, Authlib and the clients they need
    come with the first request that uses them."""
    s = settings()
    if not s.auth_mode:
        return None
    from .auth.build import build_sign_in

    return build_sign_in(s, sign_in_ports(s))


def sign_in_ports(s: Settings) -> SignInPorts:
    """Sign-in's AWS adapters: its state in the task table, its keys and the upstream client's
    secret in Secrets Manager (without a signing secret, a key of this process's own)."""
    from .adapters.secrets import SecretsManagerSecret
    from .auth.build import SignInPorts
    from .auth.signing import ephemeral_source

    def store() -> SignInStore:
        from .adapters.dynamodb_signin import DynamoDBSignInStore

        return DynamoDBSignInStore(aws_clients.LazyClient("dynamodb"), s.task_table)

    def secret(arn: str) -> SecretsManagerSecret:
        return SecretsManagerSecret(lambda: aws_clients.client("secretsmanager"), arn)

    keys = secret(s.oauth_signing_secret_arn).versions if s.oauth_signing_secret_arn else ephemeral_source()
    upstream_arn = s.oauth_upstream_client_secret_arn
    return SignInPorts(
        store=store,
        signing_keys=keys,
        upstream_secret=(lambda: secret(upstream_arn).value().decode()) if upstream_arn else (lambda: None),
    )


@functools.cache
def tools() -> ToolRegistry:
    # Imported by the first request that looks at a tool (tools/list, tools/call, a
    # worker step): a tasks/get cold start builds no tool's model.
    return registry.defer(settings().tool_modules)


@functools.cache
def store() -> DynamoDBTaskStore:
    return DynamoDBTaskStore(aws_clients.LazyClient("dynamodb"), settings().task_table)


@functools.cache
def results() -> ResultStore:
    bucket = settings().result_bucket
    # A client factory: most requests never touch S3, so no cold start pays for one.
    blobs = S3BlobStore(lambda: aws_clients.client("s3"), bucket) if bucket else None
    return ResultStore(
        blobs,
        max_inline_bytes=settings().max_inline_result_bytes,
        max_delivered_bytes=settings().max_result_response_bytes,
    )


@functools.cache
def sessions() -> DynamoDBSessionStore:
    from .adapters.dynamodb_sessions import DynamoDBSessionStore  # the 2025 era's: built with it

    return DynamoDBSessionStore(aws_clients.LazyClient("dynamodb"), settings().task_table, now_ms)


@functools.cache
def workflow() -> StepFunctionsWorkflow:
    # Made on its first call: only tools/call, tasks/update and tasks/cancel start,
    # resume or stop an execution, so most cold starts never build this client.
    return StepFunctionsWorkflow(aws_clients.LazyClient("stepfunctions"), settings().state_machine_arn)


def limits(s: Settings) -> Limits:
    return Limits(
        default_ttl_ms=s.default_ttl_ms,
        max_ttl_ms=s.max_ttl_ms,
        poll_interval_ms=s.poll_interval_ms,
        max_active_per_owner=s.max_active_tasks_per_owner,
        max_argument_bytes=s.max_argument_bytes,
        max_input_response_bytes=s.max_input_response_bytes,
        max_checkpoint_bytes=s.max_checkpoint_bytes,
    )


@functools.cache
def transport_security() -> TransportSecurity:
    return TransportSecurity(settings().allowed_hosts, settings().allowed_origins)


def request_state_keys() -> Sequence[bytes]:
    """The key material that seals requestState: the stack's secret, read once (on the
    first plain call that needs it, not at every cold start); without one configured, a
    key of this process's own (right for one local server, wrong for many instances)."""
    arn = settings().request_state_secret_arn
    if not arn:
        logging.getLogger(__name__).warning(
            "REQUEST_STATE_SECRET_ARN is not set: requestState is sealed with a per-process key"
        )
        return ephemeral_keys()
    return [SecretsManagerSecret(lambda: aws_clients.client("secretsmanager"), arn).value()]


@functools.cache
def request_states() -> RequestStates:
    return RequestStates(request_state_keys, ttl_ms=settings().request_state_ttl_seconds * 1000, clock=now_ms)


@functools.cache
def task_service() -> TaskService:
    return TaskService(store(), workflow(), now_ms, limits(settings()), results())


def build_mcp_server(
    audit: AuditHook | None = None,
    *,
    tasks: TaskService | None = None,
    session_store: SessionStore | None = None,
) -> McpServer:
    """The server every function and the local runtime use; ``tasks`` and
    ``session_store`` replace the AWS-backed ones (the bench measures on fakes)."""
    s = settings()
    hook: AuditHook = audit or (lambda event, fields: None)
    services = Services(
        tasks or task_service(),
        tools(),
        hook,
        s.anonymous_owner,
        InlineSlots(s.max_inline_calls),
        request_states=request_states(),
    )

    def era2025() -> Era:
        from .protocol.v2025 import Era2025
        from .protocol.v2025.streams import ResultStreams

        len(services.tools)  # the tool modules register resources and prompts too: loaded first
        kept = session_store or sessions()
        streams = ResultStreams(
            services.tasks,
            kept,
            results=results(),
            slots=services.inline,
            budget_seconds=s.stream_max_seconds,
            log_retention_ms=s.stream_log_ttl_ms,
        )
        return Era2025(
            services, sessions=kept, streams=streams, clock=now_ms, session_ttl_ms=s.session_ttl_ms
        )

    # The order is the order eras are asked; 2025 serves whatever carries no later mark.
    return McpServer([Era2026(services), DeferredEra(era2025)], audit=hook)


@functools.cache
def mcp_server() -> McpServer:
    return build_mcp_server()


@functools.cache
def worker() -> Worker:
    from .domain.worker import Worker

    s = settings()
    return Worker(
        store(),
        tools(),
        now_ms,
        results(),
        limits=limits(s),
        max_runtime_ms=s.max_task_runtime_seconds * 1000,
        yield_margin_ms=s.step_yield_margin_ms,
    )


@functools.cache
def sweeper() -> Sweeper:
    from .domain.sweeper import Sweeper

    s = settings()
    return Sweeper(
        store(),
        workflow(),
        now_ms,
        stale_after_ms=s.stale_after_seconds * 1000,
        max_runtime_ms=s.max_task_runtime_seconds * 1000,
    )


def reset() -> None:
    for f in (
        settings,
        sign_in,
        tools,
        store,
        results,
        sessions,
        workflow,
        transport_security,
        request_states,
        task_service,
        mcp_server,
        worker,
        sweeper,
    ):
        f.cache_clear()
    aws_clients.reset()
