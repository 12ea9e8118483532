"""ApiFunction: API Gateway → Mangum → the Starlette app serving /mcp."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools import Logger, Metrics
from aws_lambda_powertools.utilities.typing import LambdaContext
from mangum import Mangum

from taskgate import wiring
from taskgate.http_app import create_app
from taskgate.observability import attach_library_logs, audit_hook

logger = Logger()
metrics = Metrics()
attach_library_logs(logger)
# No Powertools Tracer here: the X-Ray SDK it loads was the largest single item of
# this function's cold start. Lambda's active tracing still records the invocation,
# and StartExecution carries the trace header on to the execution and the worker.

# Validated at init: a misconfigured function fails its cold start, saying why.
_settings = wiring.settings()
# Built during init, which Lambda runs before the first request is timed.
_server = wiring.build_mcp_server(audit=audit_hook(logger, metrics))
app = create_app(
    lambda: _server,
    anonymous_owner=_settings.anonymous_owner,
    max_body_bytes=_settings.max_body_bytes,
    inline=True,
    security=wiring.transport_security(),
    # AuthMode JWT: tokens are checked here, not by API Gateway (see taskgate/auth).
    sign_in=wiring.sign_in(),
)
_mangum = Mangum(app, lifespan="off")


@logger.inject_lambda_context(clear_state=True)
@metrics.log_metrics(capture_cold_start_metric=True)
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    return _mangum(event, context)  # type: ignore[arg-type]
