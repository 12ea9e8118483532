"""Audit lines and metrics for task events, through Powertools.

Every line carries the task ID and owner; none carries arguments or results,
which may hold the caller's data.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from aws_lambda_powertools import Logger, Metrics
from aws_lambda_powertools.logging.utils import copy_config_to_registered_loggers
from aws_lambda_powertools.metrics import MetricUnit

if TYPE_CHECKING:
    from .domain.worker import StepOutcome

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
    "hand_off": "JobsHandedOff",
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


def record_step(logger: Logger, metrics: Metrics, task_id: str, outcome: StepOutcome) -> None:
    status = outcome.reported_status
    extra: dict[str, Any] = {"audit": "step_finished", "taskId": task_id, "status": status}
    if outcome.owner is not None:
        extra["owner"] = outcome.owner
    if outcome.reason is not None:
        # The dashboard's "tasks that failed, and why" reads this key.
        extra["reason"] = outcome.reason
    logger.info("step finished", extra=extra)
    metric = METRIC_FOR_STATUS.get(status or "")
    # Always emit something: an empty flush is a warning and a lost data point.
    metrics.add_metric(name=metric or "StepsWithoutChange", unit=MetricUnit.Count, value=1)
    if outcome.age_ms is not None:
        metrics.add_metric(name="TimeToTerminal", unit=MetricUnit.Milliseconds, value=outcome.age_ms)


def attach_library_logs(logger: Logger) -> None:
    """Send the library's own log lines (stdlib loggers named ``taskgate.…``) through
    ``logger``'s Powertools handler, whatever the service is called.

    Powertools names its logger after the service; ``taskgate.…`` loggers are its
    children only in a stack named ``taskgate``. In ``taskgate-prod`` they would
    otherwise print plain text without the task's keys."""
    # Registered now, so the copy below finds it whatever has been imported so far.
    logging.getLogger("taskgate")
    copy_config_to_registered_loggers(source_logger=logger, include={"taskgate"})
