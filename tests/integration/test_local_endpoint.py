"""The local AWS endpoint `sam local invoke` talks to (taskgate.local.endpoint), without
Docker: its worker inline. The handlers run here, pointed at it by AWS_ENDPOINT_URL only,
as events/env.json points the functions in their containers."""

from __future__ import annotations

import importlib.util
import json
import os
import pathlib
import subprocess
import sys
import time
from collections.abc import Iterator
from typing import Any

import boto3
import pytest

from taskgate import wiring
from taskgate.config import EXAMPLE_TOOL_MODULES
from taskgate.local.endpoint import running
from taskgate.local.runtime import RESULT_BUCKET, TABLE_NAME
from taskgate.local.sam_local import with_task_id
from tests.e2e.local_server import free_port

ROOT = pathlib.Path(__file__).resolve().parents[2]
MACHINE = "arn:aws:states:us-east-1:123456789012:stateMachine:taskgate-task"


class Context:
    function_name = "api"
    function_version = "$LATEST"
    memory_limit_in_mb = 512
    invoked_function_arn = "arn:aws:lambda:us-east-1:123456789012:function:api"
    aws_request_id = "r"

    def get_remaining_time_in_millis(self) -> int:
        return 29_000


@pytest.fixture(scope="module")
def endpoint(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    port = free_port()
    log = tmp_path_factory.mktemp("endpoint") / "endpoint.log"
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    env["PYTHONPATH"] = os.pathsep.join(str(ROOT / p) for p in ("layers/taskgate", "layers/tools"))
    env["TOOL_MODULES"] = EXAMPLE_TOOL_MODULES  # the sample events call the example fixtures
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "taskgate.local.endpoint",
                "--host",
                "127.0.0.1",
                "--port",
                str(port),
                "--worker",
                "inline",
            ],
            cwd=ROOT,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    try:
        deadline = time.monotonic() + 60
        while not (running(port) and "READY" in log.read_text()):
            assert proc.poll() is None and time.monotonic() < deadline, log.read_text()
            time.sleep(0.2)
        assert f"STATE_MACHINE_ARN  {MACHINE}" in log.read_text()
        yield f"http://127.0.0.1:{port}"
    finally:
        proc.terminate()
        proc.wait(timeout=30)


@pytest.fixture
def api(endpoint: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    for key, value in {
        "AWS_ENDPOINT_URL": endpoint,
        "TASK_TABLE": TABLE_NAME,
        "STATE_MACHINE_ARN": MACHINE,
        "RESULT_BUCKET": RESULT_BUCKET,
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_REGION": "us-east-1",
        "POWERTOOLS_TRACE_DISABLED": "true",
        "POWERTOOLS_METRICS_NAMESPACE": "taskgate",
        "TOOL_MODULES": EXAMPLE_TOOL_MODULES,
    }.items():
        monkeypatch.setenv(key, value)
    wiring.reset()
    spec = importlib.util.spec_from_file_location("endpoint_api", ROOT / "functions/api/api_handler.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    yield module
    wiring.reset()


def _call(api: Any, name: str, task_id: str | None = None) -> dict[str, Any]:
    event = json.loads((ROOT / "events" / name).read_text())
    if task_id:
        event = with_task_id(event, task_id)
    return json.loads(api.handler(event, Context())["body"])  # type: ignore[no-any-return]


def _status(endpoint: str, task_id: str, want: str) -> dict[str, Any]:
    ddb = boto3.client(
        "dynamodb",
        endpoint_url=endpoint,
        region_name="us-east-1",
        aws_access_key_id="t",
        aws_secret_access_key="t",
    )
    deadline = time.monotonic() + 30
    while True:
        item = ddb.get_item(TableName=TABLE_NAME, Key={"taskId": {"S": task_id}}, ConsistentRead=True).get(
            "Item"
        )
        if item and item["status"]["S"] == want:
            return item  # type: ignore[no-any-return]
        assert time.monotonic() < deadline, {
            k: v for k, v in (item or {}).items() if k in ("status", "statusMessage", "error")
        }
        time.sleep(0.1)


def test_a_task_runs_through_the_endpoints_state_machine(api: Any, endpoint: str) -> None:
    task = _call(api, "api_tools_call_task.json")["result"]["taskId"]
    item = _status(endpoint, task, "completed")
    assert "from-event finished" in item["result"]["S"]
    got = _call(api, "api_tasks_get.json", task)
    assert got["result"]["status"] == "completed"


def test_a_question_parks_on_the_endpoint_and_the_answer_resumes_it(api: Any, endpoint: str) -> None:
    task = _call(api, "api_tools_call_question.json")["result"]["taskId"]
    assert "taskToken" in _status(endpoint, task, "input_required")
    assert _call(api, "api_tasks_update.json", task)["result"] == {"resultType": "complete"}
    assert "Deleted report.csv" in _status(endpoint, task, "completed")["result"]["S"]


def test_web_pages_cannot_reach_the_endpoint(endpoint: str) -> None:
    """moto approves any origin and checks no signature: a page in the developer's browser
    could read and write every local task through it. Only SDK-like requests are served."""
    import urllib.error
    import urllib.request

    body = json.dumps({"TableName": TABLE_NAME, "Limit": 1}).encode()
    headers = {"Content-Type": "application/x-amz-json-1.0", "X-Amz-Target": "DynamoDB_20120810.Scan"}
    # The last: a page on a domain rebound to 127.0.0.1 (red team round three, L1).
    for browser in (
        {"Origin": "https://evil.example"},
        {"Sec-Fetch-Mode": "no-cors"},
        {"Host": "evil.example"},
    ):
        request = urllib.request.Request(endpoint, data=body, headers={**headers, **browser}, method="POST")
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(request, timeout=10)
        assert refused.value.code == 403
    ddb = boto3.client(
        "dynamodb",
        endpoint_url=endpoint,
        region_name="us-east-1",
        aws_access_key_id="testing",
        aws_secret_access_key="testing",
    )
    assert "Items" in ddb.scan(TableName=TABLE_NAME, Limit=1)
