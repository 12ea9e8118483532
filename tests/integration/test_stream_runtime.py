"""StreamFunction's runtime, as Lambda would run it: the exec wrapper starts taskgate's
streaming loop, which takes events from the Runtime API (an emulator of its streaming
mode, tests/runtime_api_emulator.py) and runs the real handler against the local AWS
endpoint (moto, the real state machine, the worker inline). The emulator records when
each byte arrives: a streamed response must leave the function while the work behind it
is still running, not all at once at its end."""

from __future__ import annotations

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

from taskgate.local.runtime import RESULT_BUCKET, TABLE_NAME
from tests.integration.test_local_endpoint import MACHINE, endpoint  # noqa: F401 (a fixture)
from tests.mcp_client import envelope, headers_for
from tests.runtime_api_emulator import RuntimeApiEmulator, rest_api_event

ROOT = pathlib.Path(__file__).resolve().parents[2]
WRAPPER = ROOT / "functions" / "stream" / "taskgate-stream-runtime"
SSE = {"content-type": "application/json", "accept": "application/json, text/event-stream"}


@pytest.fixture
def runtime(endpoint: str, tmp_path: pathlib.Path) -> Iterator[RuntimeApiEmulator]:  # noqa: F811
    emulator = RuntimeApiEmulator().start()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "TASKGATE_"))}
    env.update(
        {
            # What Lambda sets for the function, and what template.yaml gives StreamFunction.
            "AWS_LAMBDA_RUNTIME_API": emulator.address,
            "_HANDLER": "stream_handler.app",
            "LAMBDA_TASK_ROOT": str(ROOT / "functions" / "stream"),
            "PATH": f"{pathlib.Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}",
            "PYTHONPATH": os.pathsep.join(str(ROOT / p) for p in ("layers/taskgate", "layers/tools")),
            "AWS_ENDPOINT_URL": endpoint,
            "AWS_ACCESS_KEY_ID": "testing",
            "AWS_SECRET_ACCESS_KEY": "testing",
            "AWS_REGION": "us-east-1",
            "TASK_TABLE": TABLE_NAME,
            "STATE_MACHINE_ARN": MACHINE,
            "RESULT_BUCKET": RESULT_BUCKET,
            "POWERTOOLS_METRICS_NAMESPACE": "taskgate",
            "POWERTOOLS_TRACE_DISABLED": "true",
            "STREAM_MAX_SECONDS": "20",
            # Plain calls of tools expected past 2 s are held (as hidden tasks), not run inline.
            "INLINE_CALL_MAX_SECONDS": "2",
            "TOOL_MODULES": "taskgate_conformance,taskgate_tools",
            # What template.yaml gives StreamFunction: the REST API streams for 15 minutes.
            "FRONT_STREAMING": "true",
            "FRONT_TIMEOUT_SECONDS": "900",
        }
    )
    log = tmp_path / "runtime.log"
    with log.open("wb") as out:
        # As Lambda starts it: the wrapper, given the managed runtime's bootstrap.
        proc = subprocess.Popen(
            [str(WRAPPER), "/var/runtime/bootstrap"], env=env, stdout=out, stderr=subprocess.STDOUT
        )
    try:
        yield emulator
    finally:
        proc.terminate()
        proc.wait(timeout=10)
        emulator.stop()
        print(log.read_text())


def _events(payload: bytes) -> list[dict[str, Any]]:
    return [
        json.loads(line[len("data: ") :])
        for line in payload.decode().splitlines()
        if line.startswith("data: ") and line.strip() != "data:"
    ]


def test_a_waiting_stream_leaves_the_function_while_the_task_runs(runtime: RuntimeApiEmulator) -> None:
    call = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {
            "name": "slow_compute",
            "arguments": {"seconds": 5, "label": "stream"},
            "task": {"ttl": 60_000},
            "_meta": {"progressToken": "p1"},
        },
    }
    created = runtime.invoke(rest_api_event(call, {"content-type": "application/json"}))
    assert created.streamed and not created.trailers, created.headers
    task_id = json.loads(created.payload())["result"]["task"]["taskId"]

    waiting = runtime.invoke(
        rest_api_event(
            {"jsonrpc": "2.0", "id": 2, "method": "tasks/result", "params": {"taskId": task_id}}, SSE
        )
    )
    assert waiting.prelude()["statusCode"] == 200
    assert waiting.prelude()["headers"]["content-type"].startswith("text/event-stream")
    events = _events(waiting.payload())
    assert events[-1]["id"] == 2 and "stream finished" in json.dumps(events[-1]["result"])
    progress = waiting.arrivals(b"notifications/progress")
    ended = waiting.arrivals(b'"id":2')
    assert progress and ended, waiting.chunks
    # The first progress left the function seconds before the result existed.
    assert progress[0] < ended[-1] - 2, (progress, ended)
    assert not waiting.trailers and waiting.error is None


def _plain_2026(seconds: float, label: str = "held") -> dict[str, Any]:
    params = {"name": "slow_compute", "arguments": {"seconds": seconds, "label": label}}
    body = envelope("tools/call", params, 7, tasks=False)
    body["params"]["_meta"]["progressToken"] = "held"
    return rest_api_event(body, {**headers_for("tools/call", params)})


def test_a_2026_plain_call_of_a_long_tool_is_held_with_progress_leaving_as_it_runs(
    runtime: RuntimeApiEmulator,
) -> None:
    held = runtime.invoke(_plain_2026(12), timeout=90)
    assert held.prelude()["statusCode"] == 200
    assert held.prelude()["headers"]["content-type"].startswith("text/event-stream")
    events = _events(held.payload())
    final = events[-1]
    assert final["id"] == 7 and final["result"]["resultType"] == "complete"
    assert final["result"]["content"][0]["text"] == "held finished after 12 seconds"
    progress = held.arrivals(b"notifications/progress")
    ended = held.arrivals(b'"id":7')
    # Bytes left the function all along: the first progress about 10 s before the result.
    assert len(progress) >= 5 and progress[0] < ended[-1] - 8, (progress, ended)
    assert not held.trailers


def test_on_aws_a_caller_that_goes_away_from_a_held_call_is_not_noticed(runtime: RuntimeApiEmulator) -> None:
    """What happens on AWS (issue 29, n2): nothing tells a streaming function its client went
    away - API Gateway and Lambda keep taking what it writes - so a held call runs to its end
    (or the 15-minute cap), billed all along, and its task completes. StreamingApi caps how many
    such calls StreamFunction holds at once (its reserved concurrency)."""
    left = runtime.send(_plain_2026(4, "left"), client_leaves_after=1)  # once the call is held
    assert left.done.wait(60)
    assert left.left_at is not None
    final = _events(left.payload())[-1]
    assert final["id"] == 7 and final["result"]["content"][0]["text"] == "left finished after 4 seconds"
    # The function went on for seconds after its client had gone.
    assert left.chunks[-1][0] - left.left_at > 2, (left.left_at, left.chunks[-1][0])


def test_a_caller_that_goes_away_from_a_held_call_cancels_its_work(
    runtime: RuntimeApiEmulator,
    endpoint: str,  # noqa: F811
) -> None:
    # A front that closes the function's stream when its client leaves (not API Gateway's, above).
    gone = runtime.send(_plain_2026(40, "gone"), hang_up_after=2)  # the prelude and a first event
    assert gone.done.wait(60)
    assert gone.prelude()["headers"]["content-type"].startswith("text/event-stream")  # held, not handed over
    ddb = boto3.client(
        "dynamodb",
        endpoint_url=endpoint,
        region_name="us-east-1",
        aws_access_key_id="t",
        aws_secret_access_key="t",
    )
    deadline = time.monotonic() + 30
    while True:
        items = [i for i in ddb.scan(TableName=TABLE_NAME)["Items"] if "#" not in i["taskId"]["S"]]
        statuses = [i["status"]["S"] for i in items if '"gone"' in i["arguments"]["S"]]
        if statuses == ["cancelled"]:
            break
        assert time.monotonic() < deadline, statuses
        time.sleep(0.2)
