"""The library's own log lines go through Powertools as JSON with the task's keys,
whatever the stack (and so the service) is called."""

from __future__ import annotations

import importlib.util
import json
import logging
import pathlib
import sys
from collections.abc import Iterator
from typing import Any

import pytest

from taskgate import wiring
from taskgate.domain.model import NewTask
from taskgate.tools import ToolContext, ToolRegistry
from taskgate.tools.registry import Tool
from tests.fakes import World

ROOT = pathlib.Path(__file__).resolve().parents[2]


class Context:
    function_name = "taskgate-prod-WorkerFunction"
    memory_limit_in_mb = 1024
    invoked_function_arn = "arn:aws:lambda:eu-west-1:123456789012:function:taskgate-prod-WorkerFunction"
    aws_request_id = "req-1"

    def get_remaining_time_in_millis(self) -> int:
        return 900_000


@pytest.fixture
def library_logger() -> Iterator[None]:
    # attach_library_logs reconfigures the process-wide "taskgate" logger; put it back.
    lib = logging.getLogger("taskgate")
    saved = (list(lib.handlers), lib.propagate, lib.level)
    yield
    lib.handlers, lib.propagate = saved[0], saved[1]
    lib.setLevel(saved[2])


def test_the_workers_error_line_is_json_with_the_task_id_in_a_prod_stack(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], library_logger: None
) -> None:
    monkeypatch.setenv("POWERTOOLS_SERVICE_NAME", "taskgate-prod")
    monkeypatch.setenv("POWERTOOLS_TRACE_DISABLED", "true")
    monkeypatch.setenv("POWERTOOLS_METRICS_NAMESPACE", "taskgate")
    monkeypatch.setenv("TASK_TABLE", "tasks")
    monkeypatch.setenv("STATE_MACHINE_ARN", "arn:aws:states:eu-west-1:123456789012:stateMachine:t")
    # What Lambda gives every function (the worker builds its client at init).
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"):
        monkeypatch.setenv(name, "testing")
    wiring.reset()

    def crash(args: Any, ctx: ToolContext) -> str:
        raise ZeroDivisionError("secret detail")

    from pydantic import BaseModel

    class NoInput(BaseModel):
        pass

    tools = ToolRegistry()
    tools.add(Tool("crashes", "Always raises.", NoInput, crash, task_support="required"))
    world = World(tools)
    record = world.tasks.create(NewTask(owner="ann", tool="crashes", arguments={}))

    # The handler runs on the world's root (the in-memory ports), as its init finds it.
    wiring.reset(to=world.root)
    spec = importlib.util.spec_from_file_location("prod_worker", ROOT / "functions/worker/worker_handler.py")
    assert spec is not None and spec.loader is not None
    handler = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(handler)
        handler.handler({"taskId": record.task_id, "executionArn": "arn:exec"}, Context())
    finally:
        sys.modules.pop("prod_worker", None)
        wiring.reset()

    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines() if line.startswith("{")]
    raised = [line for line in lines if line.get("message") == "tool crashes raised"]
    assert raised, lines
    line = raised[0]
    assert line["level"] == "ERROR" and line["service"] == "taskgate-prod"
    assert line["taskId"] == record.task_id and line["executionArn"] == "arn:exec"
    assert "ZeroDivisionError" in line["exception"]
    # The client's view has the reason and never the trace.
    message = f"Internal error while running the tool (the worker's log has the trace under taskId {record.task_id})"
    assert world.store.records[record.task_id].error == {
        "code": -32603,
        "message": message,
        "data": {"taskId": record.task_id},
    }
    # The step's audit line names the failure's reason: the dashboard's
    # "tasks that failed, and why" widget reads it from the worker's log group.
    (finished,) = [line for line in lines if line.get("audit") == "step_finished"]
    assert finished["status"] == "failed" and finished["owner"] == "ann"
    assert finished["reason"] == "Internal error while running the tool"
