"""ApiFunction: API Gateway → Mangum → the Starlette app serving /mcp."""

# ruff: noqa: E402 (the collector is off before the first import)
from __future__ import annotations

import gc

# Init allocates a few hundred thousand long-lived objects (modules, classes, botocore's
# models); the cyclic collector would walk them again and again as they arrive. Off for
# init, then gc.freeze() files them as permanent, so no later collection walks them
# either (bench/run.py section 1 measures the cold start).
gc.disable()

from taskgate.layer_check import check_layer_architecture

# Before anything native is imported: layers built for the other architecture fail here, saying so.
check_layer_architecture()

from taskgate.tuning import export_environment

export_environment()  # the Tuning's LogLevel, where Powertools reads it, before a logger is built

from typing import TYPE_CHECKING, Any

from aws_lambda_powertools import Logger, Metrics
from mangum import Mangum

from taskgate import snapstart, wiring
from taskgate.adapters import aws_clients
from taskgate.http_app import oversized_event
from taskgate.observability import attach_library_logs, audit_hook

if TYPE_CHECKING:
    from aws_lambda_powertools.utilities.typing import LambdaContext

logger = Logger()
metrics = Metrics()
attach_library_logs(logger)
# No Powertools Tracer here: the X-Ray SDK it loads was the largest single item of
# this function's cold start. Lambda's active tracing still records the invocation,
# and StartExecution carries the trace header on to the execution and the worker.

# Validated at init: a misconfigured function fails its cold start, saying why.
_root = wiring.root()
_root.settings.require("state_machine_arn")
_root.on_audit(audit_hook(logger, metrics))
# Built during init: what every request needs, and nothing else - the DynamoDB client
# (every method reads or writes the table), the dispatchers, the app and Mangum. The
# Step Functions and S3 clients and the tool modules (their pydantic models and
# schemas) are built by the first request that uses them, so a tasks/get cold start
# never pays for them. AuthMode JWT: tokens are checked here, not by API Gateway.
_built = (_root.server, _root.era2026, _root.tasks)
app = _root.app(inline=True)
_mangum = Mangum(app, lifespan="off")
aws_clients.client("dynamodb")  # every request reads the table
snapstart.install()  # with SnapStart: fresh clients and random state in each restored environment
gc.freeze()
gc.enable()


@logger.inject_lambda_context(clear_state=True)
@metrics.log_metrics(capture_cold_start_metric=True)
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    snapstart.before_invocation()
    # The event holds the body whole: a body past MaxBodyBytes is refused before Mangum decodes it.
    refused = oversized_event(event, _root.settings.max_body_bytes)
    if refused is not None:
        return refused
    return _mangum(event, context)  # type: ignore[arg-type]
