"""Every events/*.json, invoked in-process against the handler `sam local invoke` would run."""

from __future__ import annotations

import base64
import importlib.util
import json
import pathlib
import time
from types import ModuleType
from typing import Any

import pytest

from taskgate import wiring
from taskgate.domain.errors import TaskNotFound
from taskgate.domain.model import NewTask
from taskgate.local.runtime import EmbeddedAws
from taskgate.local.sam_local import PLACEHOLDER_TASK_ID

ROOT = pathlib.Path(__file__).resolve().parents[2]
EVENTS = ROOT / "events"


class Context:
    function_name = "taskgate-test"
    function_version = "$LATEST"
    memory_limit_in_mb = 512
    invoked_function_arn = "arn:aws:lambda:us-east-1:123456789012:function:taskgate-test"
    aws_request_id = "test-request"

    def get_remaining_time_in_millis(self) -> int:
        return 29_000


def _load(path: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"handler_{time.monotonic_ns()}", ROOT / path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _event(name: str) -> dict[str, Any]:
    return json.loads((EVENTS / name).read_text())


def _invoke_api(name: str) -> tuple[int, dict[str, Any]]:
    response = _load("functions/api/api_handler.py").handler(_event(name), Context())
    return response["statusCode"], json.loads(response["body"])


def test_every_event_file_is_covered() -> None:
    # env.json is not an event: the variables `sam local invoke --env-vars` sets.
    names = {p.name for p in EVENTS.glob("*.json")} - {"env.json"}
    assert names == {
        "api_server_discover.json",
        "api_tools_call_task.json",
        "api_tools_call_question.json",
        "api_tasks_get.json",
        "api_tasks_update.json",
        "api_parse_error.json",
        "worker_step.json",
        "sweeper_schedule.json",
        "events_task_changes.json",
    }


def _with_task(name: str, task_id: str) -> dict[str, Any]:
    return json.loads(json.dumps(_event(name)).replace(PLACEHOLDER_TASK_ID, task_id))


def _settled(task_id: str, *statuses: str) -> Any:
    deadline = time.monotonic() + 10
    while (row := wiring.root().store.get(task_id)) is None or row.status.value not in statuses:
        assert time.monotonic() < deadline, row
        time.sleep(0.05)
    return row


def test_a_question_parks_the_task_and_the_answer_finishes_it(aws: EmbeddedAws) -> None:
    api = _load("functions/api/api_handler.py")
    created = json.loads(api.handler(_event("api_tools_call_question.json"), Context())["body"])
    task_id = created["result"]["taskId"]
    # The worker stored the question and left RunTool as TaskgateInputRequired; AwaitInput parked it.
    assert _settled(task_id, "input_required").input_requests
    got = json.loads(api.handler(_with_task("api_tasks_get.json", task_id), Context())["body"])
    assert got["result"]["status"] == "input_required" and "confirm_delete" in got["result"]["inputRequests"]
    updated = api.handler(_with_task("api_tasks_update.json", task_id), Context())
    assert updated["statusCode"] == 200
    row = _settled(task_id, "completed")
    assert row.result["content"][0]["text"] == "Deleted report.csv"


def test_events_task_changes_event(aws: EmbeddedAws) -> None:
    """TaskEventsFunction given what the stream's mapping hands it: a task that asked, then was
    cancelled. Two events on the stack's bus, in order, keyed by task id and row version."""
    import boto3

    from taskgate.local.runtime import EVENT_BUS, REGION

    sqs = boto3.client("sqs", region_name=REGION)
    url = sqs.create_queue(QueueName="events-sample")["QueueUrl"]
    arn = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    bus = boto3.client("events", region_name=REGION)
    bus.put_rule(Name="sample", EventBusName=EVENT_BUS, EventPattern=json.dumps({"source": ["taskgate"]}))
    bus.put_targets(Rule="sample", EventBusName=EVENT_BUS, Targets=[{"Id": "q", "Arn": arn}])
    handler = _load("functions/events/events_handler.py").handler
    assert handler(_event("events_task_changes.json"), Context()) == {"batchItemFailures": []}
    bodies = [
        json.loads(m["Body"]) for m in sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10)["Messages"]
    ]
    assert [(b["detail-type"], b["detail"]["key"]) for b in bodies] == [
        ("Task needs input", f"{PLACEHOLDER_TASK_ID}:2"),
        ("Task ended", f"{PLACEHOLDER_TASK_ID}:3"),
    ]
    assert "report.csv" not in json.dumps(bodies)  # the task's arguments never leave the table


def test_sweeper_schedule_event(aws: EmbeddedAws) -> None:
    sweeper = _load("functions/sweeper/sweeper_handler.py")
    report = sweeper.handler(_event("sweeper_schedule.json"), Context())
    assert (report["checked"], report["swept"], report["errors"]) == (0, 0, 0)


def test_api_server_discover(aws: EmbeddedAws) -> None:
    status, body = _invoke_api("api_server_discover.json")
    assert status == 200
    assert body["result"]["capabilities"]["extensions"] == {"io.modelcontextprotocol/tasks": {}}


def test_api_tools_call_creates_a_task_owned_by_the_jwt_subject(aws: EmbeddedAws) -> None:
    status, body = _invoke_api("api_tools_call_task.json")
    assert status == 200
    task_id = body["result"]["taskId"]
    record = wiring.root().store.get(task_id)
    assert record is not None
    assert record.owner == "https://cognito-idp.us-east-1.amazonaws.com/us-east-1_example#user-1234"
    # Its owner can read it; an anonymous caller cannot tell it exists.
    assert wiring.root().tasks.get(record.owner, task_id).task_id == task_id
    with pytest.raises(TaskNotFound):
        wiring.root().tasks.get(wiring.root().settings.anonymous_owner, task_id)


def test_api_tasks_get_unknown_is_32602(aws: EmbeddedAws) -> None:
    status, body = _invoke_api("api_tasks_get.json")
    # 2026-07-28 sends -32602 with HTTP 400, wherever the error is raised.
    assert status == 400
    assert body["error"]["code"] == -32602
    assert body["id"] == 3


def test_api_parse_error_is_a_json_rpc_error_not_a_trace(aws: EmbeddedAws) -> None:
    status, body = _invoke_api("api_parse_error.json")
    assert status == 400
    assert body == {
        "jsonrpc": "2.0",
        "error": {"code": -32700, "message": "Parse error: the body is not valid JSON"},
    }


def test_worker_step_event(aws: EmbeddedAws) -> None:
    worker = _load("functions/worker/worker_handler.py")
    # The sample names no existing task: the step is a no-op, not a crash.
    assert worker.handler(_event("worker_step.json"), Context()) == {"kind": "finished", "status": None}
    # With a real task id it runs the tool to the end.
    record = wiring.root().tasks.create(NewTask(owner="o", tool="greet", arguments={"name": "Event"}))
    deadline = time.monotonic() + 5
    while (row := wiring.root().store.get(record.task_id)) and not row.status.terminal:
        assert time.monotonic() < deadline
        time.sleep(0.05)
    assert row is not None and row.result is not None
    assert row.result["content"][0]["text"] == "Hello, Event!"


def test_an_oversized_body_is_refused_before_mangum(
    aws: EmbeddedAws, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 21 (N6), the Lambda path: the event carries the body whole, so the check runs
    on the event, before Mangum decodes a copy of it and the app parses it."""
    monkeypatch.setenv("MAX_BODY_BYTES", "2048")
    wiring.reset()
    api = _load("functions/api/api_handler.py")
    handed: list[dict[str, Any]] = []
    mangum = api._mangum
    monkeypatch.setattr(api, "_mangum", lambda event, context: handed.append(event) or mangum(event, context))
    event = _event("api_tools_call_task.json")
    message = json.loads(event["body"])
    message["params"]["arguments"] = {"filename": "x" * 3000}
    for encoded in (False, True):
        raw = json.dumps(message)
        body = base64.b64encode(raw.encode()).decode() if encoded else raw
        response = api.handler({**event, "body": body, "isBase64Encoded": encoded}, Context())
        assert response["statusCode"] == 413, response
        assert json.loads(response["body"])["error"]["message"] == "Request body larger than 2048 bytes"
    assert handed == [] and wiring.root().store.list_for_owner("anonymous", limit=5, cursor=None)[0] == []
    # A body within the bound goes on to Mangum and the app as before.
    assert api.handler(event, Context())["statusCode"] == 200 and len(handed) == 1
