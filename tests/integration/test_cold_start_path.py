"""What an ApiFunction cold start imports and builds: a tasks/get (init and the first
request) reaches no tool module, no 2025-era code, no worker code and no client but
DynamoDB's; the first tools/call loads what it needs. A fresh process each, as Lambda
starts one; AWS answered at botocore's HTTP layer (no network)."""

from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys
from typing import Any

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]

CHILD = r"""
import json, sys
import botocore.httpsession
from botocore.awsrequest import AWSResponse
from botocore.compat import HTTPHeaders

ITEM = {"taskId": {"S": "00000000-0000-4000-8000-000000000000"},
        "ownerId": {"S": "https://cognito-idp.us-east-1.amazonaws.com/us-east-1_example#user-1234"},
        "tool": {"S": "slow_compute"}, "arguments": {"S": "{}"}, "status": {"S": "completed"},
        "outcome": {"S": "success"}, "statusMessage": {"S": "done"},
        "createdAt": {"S": "2026-11-29T10:00:00.000Z"}, "lastUpdatedAt": {"S": "2026-11-29T10:00:01.000Z"},
        "ttlMs": {"N": "3600000"}, "retentionMs": {"N": "3600000"}, "pollIntervalMs": {"N": "1000"},
        "expiresAt": {"N": "4102444800"}, "inputResponses": {"M": {}},
        "result": {"S": "{\"content\":[{\"type\":\"text\",\"text\":\"ok\"}],\"isError\":false}"}}
CANNED = {"GetItem": {"Item": ITEM}, "Query": {"Count": 0}, "PutItem": {}, "UpdateItem": {},
          "StartExecution": {"executionArn": "arn:aws:states:us-east-1:123456789012:execution:m:x", "startDate": 1.8e9}}

class Raw:
    def __init__(self, data): self.data = data
    def stream(self, **kw): yield self.data

def send(self, request):
    target = request.headers.get("X-Amz-Target", b"")
    target = target.decode() if isinstance(target, bytes) else target
    operation = target.rpartition(".")[2]
    reply = dict(CANNED[operation])
    if operation == "StartExecution":  # Step Functions names the execution after the machine and the task
        body = json.loads(request.body)
        reply["executionArn"] = body["stateMachineArn"].replace(":stateMachine:", ":execution:") + ":" + body["name"]
    data = json.dumps(reply).encode()
    headers = HTTPHeaders(); headers["content-type"] = "application/x-amz-json-1.0"
    return AWSResponse(request.url, 200, headers, Raw(data))

botocore.httpsession.URLLib3Session.send = send

class Ctx:
    function_name = "api"; function_version = "$LATEST"; memory_limit_in_mb = 512
    invoked_function_arn = "arn:aws:lambda:us-east-1:123456789012:function:api"; aws_request_id = "r"
    def get_remaining_time_in_millis(self): return 29000

def watched():
    from taskgate.adapters import aws_clients
    names = ("taskgate_tools", "taskgate_conformance", "taskgate.protocol.v2025", "taskgate.domain.worker",
             "taskgate.domain.sweeper")
    return {"modules": sorted(n for n in names if n in sys.modules), "clients": sorted(aws_clients._clients)}

import api_handler
seen = {"init": watched()}
for name in sys.argv[1:]:
    response = api_handler.handler(json.load(open(name)), Ctx())
    assert response["statusCode"] == 200, response
    seen[name.rsplit("/", 1)[-1]] = {**watched(), "body": json.loads(response["body"])}
print(json.dumps(seen))
"""


def _cold_start(*events: str | pathlib.Path) -> dict[str, dict[str, Any]]:
    env = {
        "PATH": os.environ["PATH"],
        "PYTHONPATH": os.pathsep.join(
            str(ROOT / p) for p in ("layers/taskgate", "layers/tools", "functions/api")
        ),
        "TASK_TABLE": "tasks",
        "STATE_MACHINE_ARN": "arn:aws:states:us-east-1:123456789012:stateMachine:m",
        "AWS_REGION": "us-east-1",
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "POWERTOOLS_TRACE_DISABLED": "true",
        "POWERTOOLS_METRICS_NAMESPACE": "taskgate",
        "POWERTOOLS_SERVICE_NAME": "taskgate",
        # The sample events call the example fixtures.
        "TOOL_MODULES": "taskgate_conformance,taskgate_tools",
    }
    done = subprocess.run(
        [sys.executable, "-c", CHILD, *(str(ROOT / "events" / e) for e in events)],  # absolute paths stay
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def test_a_tasks_get_cold_start_builds_only_what_it_uses() -> None:
    seen = _cold_start("api_tasks_get.json")
    assert seen["init"] == {"modules": [], "clients": ["dynamodb"]}
    got = seen["api_tasks_get.json"]
    assert got["body"]["result"]["status"] == "completed"
    assert (got["modules"], got["clients"]) == ([], ["dynamodb"])


@pytest.mark.parametrize(("method", "listed"), [("resources/list", "resources"), ("prompts/list", "prompts")])
def test_a_cold_start_that_lists_resources_or_prompts_first_lists_the_deployed_ones(
    method: str, listed: str, tmp_path: pathlib.Path
) -> None:
    """The tool modules register resources and prompts too: whatever loads them first, they load."""
    event = json.loads((ROOT / "events" / "api_server_discover.json").read_text())
    body = json.loads(event["body"])
    event["headers"]["mcp-method"] = body["method"] = method
    event["body"] = json.dumps(body)
    path = tmp_path / "first.json"
    path.write_text(json.dumps(event))
    got = _cold_start(path)["first.json"]
    assert got["body"]["result"][listed], got["body"]


@pytest.mark.parametrize("event", ["api_tools_call_task.json"])
def test_the_first_tools_call_loads_the_tools_and_the_step_functions_client(event: str) -> None:
    got = _cold_start(event)[event]
    assert got["body"]["result"]["resultType"] == "task"
    assert got["modules"] == ["taskgate_conformance", "taskgate_tools"]
    assert got["clients"] == ["dynamodb", "stepfunctions"]
