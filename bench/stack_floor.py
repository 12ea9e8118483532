"""The floor under any ApiFunction built on this project's required stack, timed at import
by bench/run.py (cold start, layer-only venv): the dependencies the product must use
(botocore clients, pydantic with one model, Starlette, Mangum, Powertools Logger and
Metrics) imported and initialised, and none of taskgate's own code.

What taskgate adds to a cold start is its figure minus this one; a goal below this one
cannot be met without dropping a required dependency.
"""

from __future__ import annotations

import botocore.session
import mangum
import pydantic
import starlette.applications
import starlette.requests
import starlette.responses
import starlette.routing
from aws_lambda_powertools import Logger, Metrics


class Model(pydantic.BaseModel):  # the first model loads pydantic's schema machinery
    name: str
    size: int = 0


session = botocore.session.Session()
session.set_config_variable("region", "us-east-1")
clients = [session.create_client(name) for name in ("dynamodb", "stepfunctions")]
logger, metrics = Logger(), Metrics()


async def endpoint(request: starlette.requests.Request) -> starlette.responses.JSONResponse:
    return starlette.responses.JSONResponse(Model(name="x").model_dump())


app = starlette.applications.Starlette(routes=[starlette.routing.Route("/mcp", endpoint, methods=["POST"])])
handler = mangum.Mangum(app, lifespan="off")
