"""The process's composition root, built from the environment with the AWS adapters.

Lambda keeps module state between invocations: ``root()`` is built by the first
caller (a function's init) and reused. ``reset()`` forgets it (the local runtime points
the environment at other endpoints); ``reset(to=root)`` serves a root built elsewhere
(the bench and tests run the Lambda handlers on the in-memory ports).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import TYPE_CHECKING

from .adapters import aws_clients
from .adapters.dynamodb_store import DynamoDBTaskStore
from .adapters.s3_blobs import S3BlobStore
from .adapters.stepfunctions_workflow import StepFunctionsWorkflow
from .config import Settings
from .lazy import Lazy
from .protocol.wire.request_state import ephemeral_source
from .root import Ports, Taskgate

if TYPE_CHECKING:
    from collections.abc import Callable

    from .auth.build import SignInPorts
    from .auth.state import SignInStore
    from .domain.durations import DurationStore
    from .domain.sessions import SessionStore
    from .domain.wake_ups import EventPublisher
    from .jobs.vocabulary import JobProgress, Jobs, PendingJob


class JobsOnFirstUse:
    """The jobs' adapters (and the jobs' vocabulary with them), imported by the first task
    that waits on a job: a cold start whose request touches none pays for none."""

    def __init__(self, build: Callable[[], Jobs]) -> None:
        self._jobs = Lazy(build)

    def describe(self, task_id: str, job: PendingJob, execution: str | None = None) -> JobProgress | None:
        return self._jobs().describe(task_id, job, execution)

    def stop(self, task_id: str, job: PendingJob, reason: str, execution: str | None = None) -> None:
        self._jobs().stop(task_id, job, reason, execution)


def aws_ports(settings: Settings) -> Ports:
    """The AWS adapters over this process's clients, each client built by its first call."""

    def dynamodb() -> object:
        return aws_clients.client("dynamodb")

    def sessions() -> SessionStore:
        from .adapters.dynamodb_sessions import DynamoDBSessionStore  # the 2025 era's: built with it

        return DynamoDBSessionStore(dynamodb, settings.task_table, ports.clock)

    def durations() -> DurationStore:
        from .adapters.dynamodb_durations import DynamoDBDurationStore  # with the first plain call

        return DynamoDBDurationStore(dynamodb, settings.task_table, ports.clock)

    def events() -> EventPublisher:
        from .adapters.eventbridge_events import EventBridgePublisher  # the events function's

        return EventBridgePublisher(lambda: aws_clients.client("events"), settings.task_event_bus)

    own_key = ephemeral_source()

    def request_state_keys() -> Sequence[bytes]:
        """The stack's secret, its current value (which seals) and its previous one (which
        still opens: a rotation breaks no call in flight); without one configured, a key of
        this process's own (right for one local server, wrong for many instances)."""
        arn = settings.request_state_secret_arn
        if not arn:
            logging.getLogger(__name__).warning(
                "REQUEST_STATE_SECRET_ARN is not set: requestState is sealed with a per-process key"
            )
            return own_key()
        from .adapters.secrets import SecretsManagerSecret

        return SecretsManagerSecret(lambda: aws_clients.client("secretsmanager"), arn).versions()

    def aws_jobs() -> Jobs:
        # Each kind's adapter, with the first read of a waiting task of that kind.
        from .adapters.aws_jobs import (
            AwsJobs,
            ChildExecutions,
            SubmittedBatchJobs,
            SubmittedEcsTasks,
            SubmittedGlueRuns,
        )
        from .adapters.batch_jobs import BatchJobs
        from .adapters.ecs_tasks import EcsTasks
        from .adapters.glue_jobs import GlueJobs
        from .adapters.stepfunctions_workflow import StepFunctionsJobs
        from .jobs.vocabulary import JobKind

        machine = settings.state_machine_arn.replace(":stateMachine:", ":execution:", 1)
        executions = StepFunctionsJobs(
            lambda: aws_clients.client("stepfunctions"), lambda task_id: f"{machine}:{task_id}"
        )
        return AwsJobs(
            {
                JobKind.EXECUTION: lambda: ChildExecutions(executions),
                JobKind.BATCH: lambda: SubmittedBatchJobs(
                    executions, BatchJobs(lambda: aws_clients.client("batch"))
                ),
                JobKind.ECS: lambda: SubmittedEcsTasks(
                    executions, EcsTasks(lambda: aws_clients.client("ecs"))
                ),
                JobKind.GLUE: lambda: SubmittedGlueRuns(
                    executions, GlueJobs(lambda: aws_clients.client("glue"))
                ),
            }
        )

    def tool_secret(arn: str) -> bytes:
        """A tool's secret (taskgate.tools.secret), read through the worker's role."""
        from .adapters.secrets import SecretsManagerSecret

        return SecretsManagerSecret(lambda: aws_clients.client("secretsmanager"), arn).value()

    bucket = settings.result_bucket
    ports = Ports(
        store=lambda: DynamoDBTaskStore(dynamodb, settings.task_table),
        workflow=lambda: StepFunctionsWorkflow(
            lambda: aws_clients.client("stepfunctions"),
            settings.state_machine_arn,
            settings.previous_state_machine_arns,
        ),
        sessions=sessions,
        durations=durations,
        blobs=lambda: S3BlobStore(lambda: aws_clients.client("s3"), bucket) if bucket else None,
        request_state_keys=request_state_keys,
        jobs=lambda: JobsOnFirstUse(aws_jobs),
        sign_in=lambda: sign_in_ports(settings),
        tool_secrets=tool_secret,
        events=events if settings.task_event_bus else None,
    )
    return ports


def sign_in_ports(settings: Settings) -> SignInPorts:
    """Sign-in's AWS adapters: its state in the task table, the key the stack's tokens are
    signed with and the upstream client's secret in Secrets Manager (without a signing
    secret, a key of this process's own: one local server)."""
    from .adapters.secrets import SecretsManagerSecret
    from .auth.build import SignInPorts
    from .auth.signing import ephemeral_source

    def store() -> SignInStore:
        from .adapters.dynamodb_signin import DynamoDBSignInStore

        return DynamoDBSignInStore(lambda: aws_clients.client("dynamodb"), settings.task_table)

    def secret(arn: str) -> SecretsManagerSecret:
        return SecretsManagerSecret(lambda: aws_clients.client("secretsmanager"), arn)

    signing = settings.sign_in.oauth_signing_secret_arn
    upstream = settings.sign_in.oauth_upstream_client_secret_arn
    return SignInPorts(
        store=store,
        signing_keys=secret(signing).versions if signing else ephemeral_source(),
        upstream_secret=(lambda: secret(upstream).value().decode()) if upstream else (lambda: None),
    )


def from_env() -> Taskgate:
    settings = Settings.from_env()
    return Taskgate(settings, aws_ports(settings))


_root: Lazy[Taskgate] = Lazy(from_env)


def root() -> Taskgate:
    """This process's root: built from the environment by the first call."""
    return _root()


def reset(to: Taskgate | None = None) -> None:
    """Forget the root and the AWS clients: the next ``root()`` builds them again from the
    environment; or, given ``to``, serve that root from now on."""
    global _root
    _root = Lazy(lambda: to) if to is not None else Lazy(from_env)
    aws_clients.reset()
