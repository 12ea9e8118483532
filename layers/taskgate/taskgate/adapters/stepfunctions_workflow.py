"""Workflow on Step Functions: one Standard execution per task, named after it.

A task's row keeps its execution's ARN, so Describe and Stop reach the execution on the
machine that started it, even after an upgrade replaced the stack's state machine (the old
one is retained, and its executions run on). Rows written before the ARN was stored are
looked for on the current machine, then on the machines earlier releases named.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from botocore.exceptions import ClientError

from ..domain.errors import DependencyFailure
from .aws_errors import error_code, translating

if TYPE_CHECKING:
    from ..jobs.vocabulary import JobProgress

# Errors that mean "that execution or callback is no longer waiting".
_GONE = {"TaskDoesNotExist", "TaskTimedOut", "InvalidToken", "ExecutionDoesNotExist"}
# Step Functions' own limit on the cause a stop records.
_MAX_CAUSE = 32_768


def _execution_prefix(state_machine_arn: str) -> str:
    return state_machine_arn.replace(":stateMachine:", ":execution:", 1)


class StepFunctionsWorkflow:
    def __init__(
        self,
        client: Callable[[], Any],
        state_machine_arn: str,
        previous_state_machine_arns: Sequence[str] = (),
    ) -> None:
        # A client factory: only tools/call, tasks/update and tasks/cancel start, resume
        # or stop an execution, so most cold starts never build this client.
        self._client = client
        self._state_machine_arn = state_machine_arn
        # Where a row without a stored ARN may have its execution: this machine first.
        self._machines = [state_machine_arn, *(a for a in previous_state_machine_arns if a)]

    @property
    def _sfn(self) -> Any:
        return self._client()

    def execution_for(self, task_id: str) -> str:
        # Step Functions names an execution <machine's execution prefix>:<name>.
        return f"{_execution_prefix(self._state_machine_arn)}:{task_id}"

    def _candidates(self, task_id: str, execution: str | None) -> list[str]:
        if execution:
            return [execution]
        return [f"{_execution_prefix(m)}:{task_id}" for m in self._machines]

    @translating
    def start(self, task_id: str, input_wait_seconds: int) -> str:
        expected = self.execution_for(task_id)
        params: dict[str, Any] = {
            "stateMachineArn": self._state_machine_arn,
            "name": task_id,
            "input": json.dumps({"taskId": task_id, "inputWaitSeconds": max(1, input_wait_seconds)}),
        }
        # Lambda puts the active trace in the environment; handing it on makes the
        # execution (and the worker) part of the request's X-Ray trace without
        # loading the X-Ray SDK into the API's cold start.
        trace = os.environ.get("_X_AMZN_TRACE_ID")
        if trace:
            params["traceHeader"] = trace
        try:
            started = self._sfn.start_execution(**params)
        except ClientError as exc:
            # Same name and input while running is idempotent in Step Functions;
            # anything else is a real failure for the caller to handle.
            if error_code(exc) != "ExecutionAlreadyExists":
                raise
            return expected
        arn = str(started["executionArn"])
        if arn != expected:
            # The row names the execution it will be looked for by; one elsewhere would be
            # stopped by nobody.
            raise DependencyFailure(f"the execution started as {arn}, not {expected}")
        return arn

    @translating
    def resume(self, task_token: str) -> bool:
        try:
            self._sfn.send_task_success(taskToken=task_token, output="{}")
        except ClientError as exc:
            if error_code(exc) in _GONE:
                return False
            raise
        return True

    @translating
    def heartbeat(self, task_token: str) -> bool:
        try:
            self._sfn.send_task_heartbeat(taskToken=task_token)
        except ClientError as exc:
            if error_code(exc) in _GONE:
                return False
            raise
        return True

    @translating
    def status(self, task_id: str, execution: str | None = None) -> str | None:
        for arn in self._candidates(task_id, execution):
            try:
                desc = self._sfn.describe_execution(executionArn=arn)
            except ClientError as exc:
                if error_code(exc) == "ExecutionDoesNotExist":
                    continue
                raise
            return str(desc["status"])
        return None

    @translating
    def stop(self, task_id: str, reason: str, execution: str | None = None) -> None:
        for arn in self._candidates(task_id, execution):
            try:
                self._sfn.stop_execution(executionArn=arn, error="TaskEnded", cause=reason[:_MAX_CAUSE])
            except ClientError as exc:
                if error_code(exc) not in _GONE:
                    raise


def _execution_of_machine(state_machine_arn: str, name: str) -> str:
    # arn:aws:states:REGION:ACCOUNT:stateMachine:NAME[:VERSION_OR_ALIAS]: an execution of a
    # version or an alias is named on the machine itself.
    parts = state_machine_arn.split(":")
    return ":".join([*parts[:5], "execution", parts[6], name])


class StepFunctionsJobs:
    """Step Functions as the place jobs live: the child executions tasks wait on, and what
    a task's own execution submitted to another service (its TaskSubmitted event, the only
    record of a Batch job's or an ECS task's id before it ends)."""

    def __init__(self, client: Callable[[], Any], execution_of: Callable[[str], str]) -> None:
        self._client = client
        self._execution_of = execution_of

    @property
    def _sfn(self) -> Any:
        return self._client()

    @staticmethod
    def child_arn(state_machine_arn: str, name: str) -> str:
        return _execution_of_machine(state_machine_arn, name)

    @translating
    def submitted(
        self, task_id: str, resource_type: str, resource: str, execution: str | None = None
    ) -> dict[str, Any] | None:
        """What the task's execution (``execution``, as its row keeps it; else the one the
        current machine would have) got back when it last submitted ``resource`` of
        ``resource_type`` (the service's start response); None before it has."""
        try:
            events = self._sfn.get_execution_history(
                executionArn=execution or self._execution_of(task_id), reverseOrder=True, maxResults=10
            )["events"]
        except ClientError as exc:
            if error_code(exc) == "ExecutionDoesNotExist":
                return None
            raise
        for event in events:
            details = event.get("taskSubmittedEventDetails")
            if (
                details
                and details.get("resourceType") == resource_type
                and details.get("resource") == resource
            ):
                output = json.loads(details.get("output") or "null")
                return output if isinstance(output, dict) else None
        return None

    @translating
    def describe(self, arn: str) -> JobProgress | None:
        from ..jobs.vocabulary import JobProgress  # a child execution's, only while a task waits on one

        try:
            status = str(self._sfn.describe_execution(executionArn=arn)["status"])
        except ClientError as exc:
            if error_code(exc) == "ExecutionDoesNotExist":
                return None
            raise
        if status != "RUNNING":
            return JobProgress(status)
        events = self._sfn.get_execution_history(executionArn=arn, reverseOrder=True, maxResults=20)["events"]
        entered = next(
            (e["stateEnteredEventDetails"]["name"] for e in events if "stateEnteredEventDetails" in e), None
        )
        return JobProgress(f"RUNNING, in state {entered}" if entered else "RUNNING")

    @translating
    def stop(self, arn: str, reason: str) -> None:
        try:
            self._sfn.stop_execution(executionArn=arn, error="TaskEnded", cause=reason[:_MAX_CAUSE])
        except ClientError as exc:
            if error_code(exc) not in _GONE:
                raise
