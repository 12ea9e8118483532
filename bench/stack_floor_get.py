"""The floor under a tasks/get cold start on this project's required stack: what a real
tasks/get needs of it, imported, initialised and used once, and no taskgate code.

A botocore DynamoDB client (botocore's own data, as any client makes it) that answers
one GetItem, Powertools Logger and Metrics around the handler, a Starlette app behind
Mangum serving one API Gateway HTTP API v2 POST, and no Step Functions client (it starts
nothing). bench/first_request.py runs it with the same HTTP-layer stub as the handler
(``handler`` is called there).

FLOOR_PYDANTIC=1 adds what taskgate's structure requires of pydantic on that path: a
settings model validated at init and a params model validated per request (floor_get_pyd
in bench/run.py). Without it, no pydantic (the floor of a tasks/get that validates nothing).
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

if os.environ.get("FLOOR_PYDANTIC") == "1":
    from typing import Annotated

    from pydantic import BaseModel, ConfigDict, Field

    class _Settings(BaseModel):  # validated at init, as config.Settings is
        model_config = ConfigDict(frozen=True, extra="ignore")
        task_table: str = Field(min_length=1)
        default_ttl_ms: Annotated[int, Field(gt=0)] = 3_600_000
        anonymous_owner: str = "anonymous"

    class _TaskRef(BaseModel):  # a request's params, as protocol/wire/params.py's
        model_config = ConfigDict(strict=True, extra="allow", defer_build=True)
        taskId: Annotated[str, Field(min_length=1, max_length=256)]

    _Settings.model_validate({"task_table": os.environ.get("TASK_TABLE", "t")})
    _parse: Any = _TaskRef.model_validate
else:
    _parse = None

session = botocore.session.Session()
session.set_config_variable("region", os.environ.get("AWS_REGION", "us-east-1"))
ddb = session.create_client("dynamodb")
logger, metrics = Logger(), Metrics()


async def endpoint(request: starlette.requests.Request) -> starlette.responses.JSONResponse:
    body = json.loads(await request.body())
    if _parse is not None:
        _parse(body["params"])
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
