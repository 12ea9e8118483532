"""Audit lines and metrics for task events, through Powertools.

Every line carries the task ID and owner; none carries arguments or results,
which may hold the caller's data.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from aws_lambda_powertools import Logger, Metrics
from aws_lambda_powertools.metrics import MetricUnit

# Every metric the code emits, by name: the template's dashboard and alarms use these,
# and tests/unit/test_template.py keeps the two in step.
EMITTED_METRICS = {
    "TasksCreated",
    "CancelRequested",
    "InputSubmitted",
    "TaskAccessDenied",
    "ResultsFetched",
    "TasksCompleted",
    "TasksFailed",
    "InputRequested",
    "StepsContinued",
    "StepsWithoutChange",
    "TimeToTerminal",
    "TasksSwept",
    "TasksCancelled",
}

METRIC_FOR_EVENT = {
    "task_created": "TasksCreated",
    "cancel_requested": "CancelRequested",
    "input_submitted": "InputSubmitted",
    "denied": "TaskAccessDenied",
    "result_fetched": "ResultsFetched",
}
METRIC_FOR_STATUS = {
    "completed": "TasksCompleted",
    "failed": "TasksFailed",
    "input_required": "InputRequested",
    "continue": "StepsContinued",
}


def audit_hook(logger: Logger, metrics: Metrics) -> Callable[[str, dict[str, Any]], None]:
    def audit(event: str, fields: dict[str, Any]) -> None:
        logger.info(event, extra={"audit": event, **fields})
        metric = METRIC_FOR_EVENT.get(event)
        if metric:
            metrics.add_metric(name=metric, unit=MetricUnit.Count, value=1)
        if event == "cancel_requested" and fields.get("status") == "cancelled":
            metrics.add_metric(name="TasksCancelled", unit=MetricUnit.Count, value=1)

    return audit


def record_step(logger: Logger, metrics: Metrics, task_id: str, outcome: dict[str, Any]) -> None:
    kind = outcome.get("kind")
    status = kind if kind in {"input_required", "continue"} else outcome.get("status")
    extra: dict[str, Any] = {"audit": "step_finished", "taskId": task_id, "status": status}
    if "owner" in outcome:
        extra["owner"] = outcome["owner"]
    logger.info("step finished", extra=extra)
    metric = METRIC_FOR_STATUS.get(status or "")
    # Always emit something: an empty flush is a warning and a lost data point.
    metrics.add_metric(name=metric or "StepsWithoutChange", unit=MetricUnit.Count, value=1)
    if "ageMs" in outcome:
        metrics.add_metric(name="TimeToTerminal", unit=MetricUnit.Milliseconds, value=outcome["ageMs"])
