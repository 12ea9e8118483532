"""A tool that raises (issue 31, item 7): the client gets -32603 with the id its trace is logged
under (a task's taskId; a plain call's errorId), never the trace; before, the message was only
"Internal error while running the tool", with nothing to search the log by."""

from __future__ import annotations

import logging

import pytest

from taskgate.testing import ToolTester
from taskgate.tools import ToolContext
from taskgate.tools.registry import Tool
from taskgate.tools.signature import check_tool


def divide(a: int, b: int, ctx: ToolContext) -> str:
    return str(a / b)


def _tester() -> ToolTester:
    shape = check_tool(divide, "divide", "optional", None)
    return ToolTester(Tool("divide", "Divides.", shape.input_model, divide, calling=shape.calling))


def test_a_task_whose_tool_raises_names_the_task_its_trace_is_logged_under(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with caplog.at_level(logging.ERROR, logger="taskgate"):
        run = _tester().start("divide", {"a": 1, "b": 0})
    assert run.status == "failed" and run.error is not None
    assert run.error["code"] == -32603 and run.error["data"] == {"taskId": run.task_id}
    assert f"the worker's log has the trace under taskId {run.task_id}" in run.error["message"]
    [logged] = [r for r in caplog.records if r.exc_info and getattr(r, "taskId", None) == run.task_id]
    assert logged.exc_info is not None and logged.exc_info[0] is ZeroDivisionError
    assert "Traceback" not in run.error["message"] and "ZeroDivision" not in run.error["message"]


def test_a_plain_call_whose_tool_raises_gets_an_error_id_its_trace_is_logged_under(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with caplog.at_level(logging.ERROR, logger="taskgate"):
        run = _tester().call("divide", {"a": 1, "b": 0})
    assert run.error is not None and run.error["code"] == -32603
    error_id = run.error["data"]["errorId"]
    assert (
        len(error_id) == 12
        and f"the function's log has the trace under errorId {error_id}" in run.error["message"]
    )
    [logged] = [r for r in caplog.records if getattr(r, "errorId", None) == error_id]
    assert logged.exc_info is not None and logged.exc_info[0] is ZeroDivisionError
