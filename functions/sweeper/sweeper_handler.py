"""SweeperFunction: every few minutes, fail the tasks nothing else will finish."""

# ruff: noqa: E402 (the layers' architecture is checked before anything native is imported)
from __future__ import annotations

from taskgate.layer_check import check_layer_architecture

check_layer_architecture()

from taskgate.tuning import export_environment

export_environment()  # the Tuning's LogLevel, where Powertools reads it, before a logger is built

from typing import Any

from aws_lambda_powertools import Logger, Metrics, Tracer
from aws_lambda_powertools.metrics import MetricUnit
from aws_lambda_powertools.utilities.typing import LambdaContext

from taskgate import wiring
from taskgate.observability import attach_library_logs

logger = Logger()
tracer = Tracer()
metrics = Metrics()
attach_library_logs(logger)
# Validated at init: a misconfigured function fails its cold start, saying why.
_root = wiring.root()
_root.settings.require("state_machine_arn")


@logger.inject_lambda_context(clear_state=True)
@tracer.capture_lambda_handler
@metrics.log_metrics(capture_cold_start_metric=True)
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    report = _root.sweeper.sweep(context.get_remaining_time_in_millis)
    for task_id, reason in report.failed.items():
        logger.warning(
            "task failed by sweeper", extra={"audit": "status_changed", "taskId": task_id, "reason": reason}
        )
    if report.errors:
        # Each is retried at the next run; many in a row point at throttling or permissions.
        logger.warning(
            "tasks not checked this run",
            extra={"count": len(report.errors), "sample": dict(list(report.errors.items())[:5])},
        )
    metrics.add_metric(name="TasksSwept", unit=MetricUnit.Count, value=len(report.failed))
    return {
        "checked": report.checked,
        "judgedFromRow": report.judged_from_row,
        "described": report.described,
        "swept": len(report.failed),
        "errors": len(report.errors),
        "complete": report.complete,
    }
