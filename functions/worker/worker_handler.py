"""WorkerFunction: runs one step of a task's tool for the state machine's RunTool state."""

# ruff: noqa: E402 (the layers' architecture is checked before anything native is imported)
from __future__ import annotations

from taskgate.layer_check import check_layer_architecture

check_layer_architecture()

from taskgate.tuning import export_environment

export_environment()  # the Tuning's LogLevel, where Powertools reads it, before a logger is built

from typing import Any

from aws_lambda_powertools import Logger, Metrics, Tracer
from aws_lambda_powertools.utilities.typing import LambdaContext
from pydantic import BaseModel, Field

from taskgate import snapstart, wiring
from taskgate.adapters import aws_clients
from taskgate.observability import attach_library_logs, record_step

logger = Logger()
tracer = Tracer()
metrics = Metrics()
attach_library_logs(logger)
# Validated at init: a misconfigured function fails its cold start, saying why.
_root = wiring.root()
# What every step uses, built at init (in the snapshot, with SnapStart): the tools and
# their models, the DynamoDB client.
_worker = _root.worker
len(_root.tools)
aws_clients.client("dynamodb")
snapstart.install()


class WorkerEvent(BaseModel):
    taskId: str = Field(min_length=1, max_length=80)
    executionArn: str | None = None
    # $$.State.RetryCount: earlier attempts of this step that Step Functions retried.
    retryCount: int = Field(default=0, ge=0)


@logger.inject_lambda_context(clear_state=True)
@tracer.capture_lambda_handler
@metrics.log_metrics(capture_cold_start_metric=True)
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    snapstart.before_invocation()
    step = WorkerEvent.model_validate(event)
    task_id = step.taskId
    # Every line of this invocation names the task and its execution, so one search
    # in CloudWatch Logs follows a task across the API, the worker and the state machine.
    # Thread-safe keys: one Lambda runs one step at a time, but the local runtime runs
    # many steps in threads of one process, and shared keys would cross between them.
    logger.thread_safe_clear_keys()
    logger.thread_safe_append_keys(taskId=task_id, executionArn=step.executionArn)
    # A ServiceUnavailable raised here reaches the state machine as that error name,
    # which RunTool retries with backoff and jitter (statemachines/task.asl.json).
    outcome = _worker.run_step(task_id, context.get_remaining_time_in_millis, retries=step.retryCount)
    record_step(logger, metrics, task_id, outcome)
    # Parking and continuing leave RunTool through its Catch rules (task.asl.json).
    outcome.raise_signal()
    return outcome.payload()
