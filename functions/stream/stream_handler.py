"""StreamFunction: the same app as ApiFunction, behind a front that streams responses.

API Gateway's REST API (integration ResponseTransferMode STREAM) passes this
function's bytes on as they are written, for up to 15 minutes; the HTTP API in front
of ApiFunction cuts every response at 30 seconds. So here a plain call of a long tool
can be held and its progress streamed as it happens. The Python runtime cannot
stream, so ``taskgate-stream-runtime`` (AWS_LAMBDA_EXEC_WRAPPER) runs taskgate's own
runtime loop (taskgate.lambda_stream), which imports ``app`` from here.
"""

# ruff: noqa: E402 (the layers' architecture is checked before the first native import)
from __future__ import annotations

from taskgate.layer_check import check_layer_architecture

# Before anything native is imported: layers built for the other architecture fail here, saying so.
check_layer_architecture()

from taskgate.tuning import export_environment

export_environment()  # the Tuning's LogLevel, where Powertools reads it, before a logger is built

from aws_lambda_powertools import Logger, Metrics

from taskgate import wiring
from taskgate.adapters import aws_clients
from taskgate.observability import attach_library_logs, audit_hook

logger = Logger()
metrics = Metrics()
attach_library_logs(logger)

# Validated at init: a misconfigured function fails its cold start, saying why.
_root = wiring.root()
_root.settings.require("state_machine_arn")
_root.on_audit(audit_hook(logger, metrics))
_built = (_root.server, _root.era2026, _root.tasks)
# The body comes whole inside the event (Lambda's 6 MB payload): MaxBodyBytes is checked by the app.
app = _root.app(inline=True)
aws_clients.client("dynamodb")  # every request reads the table


def after_invocation() -> None:
    """Called by the runtime loop after each invocation: the audit metrics go out."""
    metrics.flush_metrics()
