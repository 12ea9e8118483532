"""The floor under a tasks/get cold start on this project's required stack: what a real
tasks/get needs of it, imported, initialised and used once, and no taskgate code.

A botocore DynamoDB client (botocore's own data, as any client makes it) that answers
one GetItem, Powertools Logger and Metrics around the handler, a Starlette app behind
Mangum serving one API Gateway HTTP API v2 POST. No pydantic (a tasks/get validates
nothing with it) and no Step Functions client (it starts nothing). bench/first_request.py
runs it with the same HTTP-layer stub as the handler (``handler`` is called there).
"""

from __future__ import annotations

import json
import os
from typing import Any

import botocore.session
import mangum
import starlette.applications
import starlette.requests
import starlette.responses
import starlette.routing
from aws_lambda_powertools import Logger, Metrics

session = botocore.session.Session()
session.set_config_variable("region", os.environ.get("AWS_REGION", "us-east-1"))
ddb = session.create_client("dynamodb")
logger, metrics = Logger(), Metrics()


async def endpoint(request: starlette.requests.Request) -> starlette.responses.JSONResponse:
    body = json.loads(await request.body())
    key = {"taskId": {"S": body["params"]["taskId"]}}
    item = ddb.get_item(TableName="taskgate-tasks", Key=key, ConsistentRead=True).get("Item", {})
    metrics.add_metric(name="ResultsFetched", unit="Count", value=1)
    return starlette.responses.JSONResponse(
        {"jsonrpc": "2.0", "id": body["id"], "result": {"status": item["status"]["S"]}}
    )


app = starlette.applications.Starlette(routes=[starlette.routing.Route("/mcp", endpoint, methods=["POST"])])
_mangum = mangum.Mangum(app, lifespan="off")


@logger.inject_lambda_context(clear_state=True)
@metrics.log_metrics(capture_cold_start_metric=True)
def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    return _mangum(event, context)  # type: ignore[arg-type]
