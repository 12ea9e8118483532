"""Fault injection: make the AWS calls fail at each step of a task's life and check
the final row and what the client saw. The closing assertion of every case: after
one sweep past the bound, no task is left active.

Run with -s to print the fault matrix.
"""

from __future__ import annotations

import json
import pathlib
import time
from collections.abc import Iterator
from typing import Any

import boto3
import pytest

from taskgate import wiring
from taskgate.domain.worker import Worker
from taskgate.local.runtime import EmbeddedAws
from tests.faults import Faults
from tests.integration.conftest import active_ids, table_items
from tests.mcp_client import Mcp

ASL = json.loads(
    (pathlib.Path(__file__).resolve().parents[2] / "statemachines" / "task.asl.json").read_text()
)

MATRIX: list[tuple[str, str, str, str]] = []


@pytest.fixture
def faults(aws: EmbeddedAws) -> Iterator[Faults]:
    f = Faults()
    yield f
    f.clear()


def _row(aws: EmbeddedAws, task_id: str) -> dict[str, Any]:
    return next(i for i in table_items(aws) if i["taskId"]["S"] == task_id)


def _tasks(aws: EmbeddedAws) -> list[dict[str, Any]]:
    return [i for i in table_items(aws) if "#" not in i["taskId"]["S"]]


def _settle(aws: EmbeddedAws, timeout: float = 15) -> list[dict[str, Any]]:
    """Wait for executions to end, sweep once as if the bound had passed, return the rows."""
    sfn = boto3.client("stepfunctions", region_name="us-east-1")
    deadline = time.monotonic() + timeout
    while any(
        e["status"] == "RUNNING"
        for e in sfn.list_executions(stateMachineArn=aws.state_machine_arn)["executions"]
    ):
        if time.monotonic() > deadline:
            break
        time.sleep(0.05)
    sweeper = wiring.root().sweeper
    sweeper._stale_after = 0  # the bound has passed
    sweeper.sweep()
    rows = _tasks(aws)
    assert all(r["status"]["S"] in {"completed", "failed", "cancelled"} for r in rows), rows
    assert active_ids() == []
    return rows


def _record(fault: str, where: str, final: str, client_saw: str) -> None:
    MATRIX.append((fault, where, final, client_saw))


def test_put_item_fails_at_create(mcp: Mcp, aws: EmbeddedAws, faults: Faults) -> None:
    faults.fail("dynamodb", "PutItem", code="ProvisionedThroughputExceededException")
    body = mcp.request("tools/call", {"name": "slow_compute", "arguments": {"seconds": 0}})
    assert body["_http_status"] == 503 and body["error"]["code"] == -32603
    assert "retry" in body["error"]["message"]
    assert _settle(aws) == []  # nothing stored, nothing started
    _record("PutItem throttled", "API, task create", "(no row)", "503, -32603 retry")


def test_start_execution_fails(mcp: Mcp, aws: EmbeddedAws, faults: Faults) -> None:
    faults.fail("stepfunctions", "StartExecution", code="ServiceUnavailable")
    body = mcp.request("tools/call", {"name": "slow_compute", "arguments": {"seconds": 0}})
    assert body["error"]["code"] == -32603
    (row,) = _settle(aws)
    assert row["status"]["S"] == "failed" and "never run" in row["statusMessage"]["S"]
    _record("StartExecution unavailable", "API, after the put", "failed: never run", "-32603 retry")


def test_crash_between_put_and_start(mcp: Mcp, aws: EmbeddedAws, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(
        wiring.root().workflow, "start", lambda task_id, input_wait_seconds: None
    )  # the call never happened
    task_id = mcp.call("slow_compute", {"seconds": 0})["taskId"]
    assert mcp.get(task_id)["status"] == "working"
    (row,) = _settle(aws)
    assert row["status"]["S"] == "failed"
    assert row["statusMessage"]["S"] == "The task's execution never started."
    assert mcp.get(task_id)["status"] == "failed"
    _record(
        "process dies after the put",
        "API, before StartExecution",
        "failed: never started (sweeper)",
        "task, then failed",
    )


def _wait_executions(aws: EmbeddedAws, timeout: float = 10) -> None:
    sfn = boto3.client("stepfunctions", region_name="us-east-1")
    deadline = time.monotonic() + timeout
    while any(
        e["status"] == "RUNNING"
        for e in sfn.list_executions(stateMachineArn=aws.state_machine_arn)["executions"]
    ):
        assert time.monotonic() < deadline
        time.sleep(0.05)


def test_worker_cannot_read_the_row(
    mcp: Mcp, aws: EmbeddedAws, faults: Faults, retry_waits: list[float]
) -> None:
    faults.fail("dynamodb", "GetItem", code="InternalServerError", times=1)
    task_id = mcp.call("slow_compute", {"seconds": 0})["taskId"]
    _wait_executions(aws)  # no polling meanwhile: the fault is for the worker's read
    done = mcp.get(task_id)
    # The worker raised ServiceUnavailable; RunTool's Retry ran the step again.
    assert done["status"] == "completed"
    assert len(retry_waits) == 1 and 0 <= retry_waits[0] <= 2
    _settle(aws)
    _record("GetItem 500", "worker, step start", "completed (step retried)", "completed")


def test_worker_cannot_write_the_result(
    mcp: Mcp, aws: EmbeddedAws, faults: Faults, retry_waits: list[float]
) -> None:
    # PutItem creates the row; the worker's first UpdateItem notes how long the step ran (the
    # tool's first run), the second is its terminal write.
    faults.fail("dynamodb", "UpdateItem", code="ProvisionedThroughputExceededException", times=1, skip=1)
    task_id = mcp.call("slow_compute", {"seconds": 0})["taskId"]
    _wait_executions(aws)
    assert mcp.get(task_id)["status"] == "completed"
    assert len(retry_waits) == 1
    _settle(aws)
    _record("UpdateItem throttled", "worker, terminal write", "completed (step retried)", "completed")


def test_throttling_that_outlasts_the_retries_fails_the_task_after_minutes(
    mcp: Mcp, aws: EmbeddedAws, faults: Faults, retry_waits: list[float]
) -> None:
    """The worker's AWS calls stay throttled: Step Functions retries the step with
    exponential backoff and full jitter (recorded here, not slept) for minutes, then
    the catch-all fails the task with the reason."""
    faults.fail("dynamodb", "GetItem", code="ThrottlingException", times=1000)
    task_id = mcp.call("slow_compute", {"seconds": 0})["taskId"]
    _wait_executions(aws, timeout=30)
    faults.clear()
    done = mcp.get(task_id)
    assert done["status"] == "failed"
    assert done["statusMessage"] == "The task failed outside the tool: ServiceUnavailable"
    retrier = ASL["States"]["RunTool"]["Retry"][0]
    assert len(retry_waits) == retrier["MaxAttempts"] == 20
    nominal = [min(2 * 2**i, 60) for i in range(20)]
    assert all(0 <= wait <= cap for wait, cap in zip(retry_waits, nominal, strict=True))
    assert len(set(retry_waits)) == len(retry_waits)  # jittered, not a fixed schedule
    assert sum(nominal) >= 15 * 60  # minutes of patience, not AWS's first few seconds
    _settle(aws)
    _record(
        "GetItem throttled for good",
        "worker, every attempt",
        "failed after 20 jittered retries",
        "failed + reason",
    )


def test_lambda_throttling_is_retried(
    mcp: Mcp, aws: EmbeddedAws, faults: Faults, retry_waits: list[float]
) -> None:
    faults.fail("lambda", "Invoke", code="TooManyRequestsException", times=3)
    task_id = mcp.call("slow_compute", {"seconds": 0})["taskId"]
    _wait_executions(aws)
    assert mcp.get(task_id)["status"] == "completed"
    assert len(retry_waits) == 3
    _settle(aws)
    _record("Lambda throttles the worker 3x", "Invoke", "completed (step retried)", "completed")


def test_park_write_fails(mcp: Mcp, aws: EmbeddedAws, faults: Faults, retry_waits: list[float]) -> None:
    # The worker notes how long the step ran (the tool's first run), then asks: two UpdateItems;
    # the state machine's park write is the third.
    faults.fail("dynamodb", "UpdateItem", code="InternalServerError", times=1, skip=2)
    task_id = mcp.call("confirm_delete", {"filename": "b"})["taskId"]
    parked = mcp.wait(task_id, {"input_required"})
    assert len(retry_waits) == 1  # AwaitInput retried its write
    assert parked["inputRequests"]
    mcp.result("tasks/cancel", {"taskId": task_id})
    _settle(aws)
    _record("UpdateItem 500", "state machine, AwaitInput park", "parked (write retried)", "input_required")


def test_worker_lambda_crashes_or_times_out(
    mcp: Mcp, aws: EmbeddedAws, monkeypatch: pytest.MonkeyPatch
) -> None:
    def timeout(self: Worker, task_id: str, remaining_ms: Any = None, **kwargs: Any) -> Any:
        raise TimeoutError("Task timed out after 900.00 seconds")

    monkeypatch.setattr(Worker, "run_step", timeout)
    task_id = mcp.call("slow_compute", {"seconds": 0})["taskId"]
    done = mcp.wait(task_id)
    assert done["status"] == "failed"
    assert done["statusMessage"] == "The task failed outside the tool: TimeoutError"
    _settle(aws)
    _record("worker Lambda times out", "worker", "failed: outside the tool: TimeoutError", "failed + reason")


def test_send_task_success_fails(mcp: Mcp, aws: EmbeddedAws, faults: Faults) -> None:
    task_id = mcp.call("confirm_delete", {"filename": "a"})["taskId"]
    mcp.wait(task_id, {"input_required"})
    faults.fail("stepfunctions", "SendTaskSuccess", code="ServiceUnavailable", times=10)
    body = mcp.request(
        "tasks/update",
        {
            "taskId": task_id,
            "inputResponses": {"confirm_delete": {"action": "accept", "content": {"confirm": True}}},
        },
    )
    assert body["error"]["code"] == -32603
    row = _row(aws, task_id)
    assert row["status"]["S"] == "failed" and "could not be resumed" in row["statusMessage"]["S"]
    _settle(aws)
    _record("SendTaskSuccess unavailable", "API, tasks/update", "failed: could not be resumed", "-32603")


def test_stop_execution_fails_on_cancel(mcp: Mcp, aws: EmbeddedAws, faults: Faults) -> None:
    task_id = mcp.call("slow_compute", {"seconds": 30})["taskId"]
    mcp.wait(task_id, {"working"})
    faults.fail("stepfunctions", "StopExecution", code="ServiceUnavailable", times=10)
    assert mcp.result("tasks/cancel", {"taskId": task_id}) == {"resultType": "complete"}
    assert mcp.get(task_id)["status"] == "cancelled"
    # The tool notices at its next progress report and the execution ends on its own.
    rows = _settle(aws, timeout=5)
    assert rows[0]["status"]["S"] == "cancelled"
    _record(
        "StopExecution unavailable",
        "API, tasks/cancel",
        "cancelled (tool stops at next progress)",
        "ack; cancelled",
    )


def test_execution_ends_without_a_result(mcp: Mcp, aws: EmbeddedAws, monkeypatch: pytest.MonkeyPatch) -> None:
    # An execution that ended behind our back (stopped from the console, a quota) while
    # the row is still active: Step Functions reports it ended, the row says working.
    monkeypatch.setattr(wiring.root().workflow, "start", lambda task_id, input_wait_seconds: None)
    monkeypatch.setattr(wiring.root().workflow, "status", lambda task_id, execution=None: "ABORTED")
    task_id = mcp.call("slow_compute", {"seconds": 0})["taskId"]
    (row,) = _settle(aws)
    assert row["taskId"]["S"] == task_id and row["status"]["S"] == "failed"
    assert row["statusMessage"]["S"] == "The task's execution ended (ABORTED) without recording a result."
    _record(
        "execution ends, row still active",
        "Step Functions",
        "failed: ended (ABORTED) (sweeper)",
        "failed + reason",
    )


def test_deadline_exceeded(mcp: Mcp, aws: EmbeddedAws, monkeypatch: pytest.MonkeyPatch) -> None:
    task_id = mcp.call("slow_compute", {"seconds": 30})["taskId"]
    mcp.wait(task_id, {"working"})
    wiring.root().sweeper._max_runtime = 1  # ms: everything alive is past it
    rows = _settle(aws)
    assert rows[0]["statusMessage"]["S"] == "The task exceeded its maximum run time."
    _record(
        "task runs past MaxTaskRuntimeSeconds",
        "sweeper",
        "failed: exceeded maximum run time",
        "failed + reason",
    )


# -- races, each pinned to one legal outcome ------------------------------------


def test_update_after_cancel_is_ignored(mcp: Mcp, aws: EmbeddedAws) -> None:
    task_id = mcp.call("confirm_delete", {"filename": "a"})["taskId"]
    mcp.wait(task_id, {"input_required"})
    mcp.result("tasks/cancel", {"taskId": task_id})
    mcp.result(
        "tasks/update",
        {
            "taskId": task_id,
            "inputResponses": {"confirm_delete": {"action": "accept", "content": {"confirm": True}}},
        },
    )
    assert _settle(aws)[0]["status"]["S"] == "cancelled"
    _record("tasks/update after tasks/cancel", "race", "cancelled", "ack, ack")


def test_cancel_after_completion_keeps_completed(mcp: Mcp, aws: EmbeddedAws) -> None:
    task_id = mcp.call("slow_compute", {"seconds": 0})["taskId"]
    mcp.wait(task_id)
    assert mcp.result("tasks/cancel", {"taskId": task_id}) == {"resultType": "complete"}
    assert _settle(aws)[0]["status"]["S"] == "completed"
    _record("tasks/cancel after completion", "race", "completed", "ack (2026) / -32602 (2025)")


def test_duplicate_and_late_send_task_success(mcp: Mcp, aws: EmbeddedAws) -> None:
    task_id = mcp.call("confirm_delete", {"filename": "a"})["taskId"]
    parked = wiring.root().store.get(task_id)
    mcp.wait(task_id, {"input_required"})
    token = wiring.root().store.get(task_id).task_token  # type: ignore[union-attr]
    assert parked is not None and token
    mcp.result(
        "tasks/update",
        {
            "taskId": task_id,
            "inputResponses": {"confirm_delete": {"action": "accept", "content": {"confirm": True}}},
        },
    )
    assert mcp.wait(task_id)["status"] == "completed"
    # moto (unlike AWS) still accepts a used token while the execution runs its last
    # step; once it has ended the token is refused, as AWS refuses it at once.
    _wait_executions(aws)
    # The same token again (a retried request, a replayed message): refused, nothing changes.
    assert wiring.root().workflow.resume(token) is False
    assert _settle(aws)[0]["status"]["S"] == "completed"
    _record("SendTaskSuccess twice / after the end", "race", "completed", "second is InvalidToken, ignored")


def test_zz_print_fault_matrix() -> None:
    assert MATRIX, "the matrix tests did not run"
    width = [max(len(r[i]) for r in MATRIX) for i in range(4)]
    head = ("fault", "where injected", "final status", "client saw")
    width = [max(w, len(h)) for w, h in zip(width, head, strict=True)]
    print()
    for row in [head, tuple("-" * w for w in width), *MATRIX]:
        print(" | ".join(c.ljust(w) for c, w in zip(row, width, strict=True)))
