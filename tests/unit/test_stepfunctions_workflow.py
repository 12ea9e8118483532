"""The Step Functions adapter addresses each task's own execution (issue 20, item 3)."""

from __future__ import annotations

from typing import Any

import pytest
from botocore.exceptions import ClientError

from taskgate.adapters.stepfunctions_workflow import StepFunctionsWorkflow
from taskgate.domain.errors import DependencyFailure

A = "arn:aws:states:us-east-1:123456789012:stateMachine:taskgate-task"
B = "arn:aws:states:us-east-1:123456789012:stateMachine:TaskStateMachine-Xyz"


class _Sfn:
    def __init__(self, executions: dict[str, str], started_as: str | None = None) -> None:
        self.executions = executions
        self.started_as = started_as
        self.calls: list[tuple[str, str]] = []

    def start_execution(self, **params: Any) -> dict[str, Any]:
        arn = (
            self.started_as
            or params["stateMachineArn"].replace(":stateMachine:", ":execution:") + ":" + params["name"]
        )
        return {"executionArn": arn}

    def describe_execution(self, executionArn: str) -> dict[str, Any]:
        self.calls.append(("describe", executionArn))
        if executionArn not in self.executions:
            raise ClientError(
                {"Error": {"Code": "ExecutionDoesNotExist", "Message": "no"}}, "DescribeExecution"
            )
        return {"status": self.executions[executionArn]}

    def stop_execution(self, executionArn: str, **params: Any) -> None:
        self.calls.append(("stop", executionArn))
        if executionArn not in self.executions:
            raise ClientError({"Error": {"Code": "ExecutionDoesNotExist", "Message": "no"}}, "StopExecution")


def test_a_stored_execution_is_addressed_whatever_the_current_machine() -> None:
    on_a = A.replace(":stateMachine:", ":execution:") + ":t1"
    sfn = _Sfn({on_a: "RUNNING"})
    workflow = StepFunctionsWorkflow(lambda: sfn, B)
    assert workflow.execution_for("t2") == B.replace(":stateMachine:", ":execution:") + ":t2"
    assert workflow.status("t1", on_a) == "RUNNING"
    workflow.stop("t1", "cancelled", on_a)
    assert sfn.calls == [("describe", on_a), ("stop", on_a)]


def test_rows_without_one_are_looked_for_on_the_previous_machines_too() -> None:
    on_a = A.replace(":stateMachine:", ":execution:") + ":old"
    sfn = _Sfn({on_a: "RUNNING"})
    workflow = StepFunctionsWorkflow(lambda: sfn, B, [A])
    assert workflow.status("old") == "RUNNING"
    assert workflow.status("never") is None
    workflow.stop("old", "cancelled")
    assert ("stop", on_a) in sfn.calls


def test_start_returns_the_execution_it_started_and_refuses_another() -> None:
    workflow = StepFunctionsWorkflow(lambda: _Sfn({}), B)
    assert workflow.start("t3", 60) == workflow.execution_for("t3")
    elsewhere = StepFunctionsWorkflow(
        lambda: _Sfn({}, started_as="arn:aws:states:us-east-1:1:execution:other:t3"), B
    )
    with pytest.raises(DependencyFailure):
        elsewhere.start("t3", 60)
