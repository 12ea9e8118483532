"""Deploys and upgrades under live tasks, on moto with the real state machine (issue 20,
items 2 and 3).

- A task runs the worker version it started with: the state machine invokes the version
  published with the deploy, and a running execution keeps its definition, so a deploy
  never replays new code over a parked task's checkpoint and answers.
- An upgrade that replaces the state machine keeps every task: each row names its own
  execution, so answers, cancels and the sweeper reach it on the old machine, which is
  retained and runs its executions to their end.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

import boto3
import pytest

from taskgate import wiring
from taskgate.local.runtime import REGION, EmbeddedAws
from tests.integration.conftest import owner_client

CONFIRM = {"confirm_delete": {"action": "accept", "content": {"confirm": True}}}


def _recording(name: str, handler: Callable[[dict[str, Any], Any], Any], ran: list[tuple[str, str]]) -> Any:
    lock = threading.Lock()

    def run(event: dict[str, Any], context: Any) -> Any:
        with lock:
            ran.append((name, event["taskId"]))
        return handler(event, context)

    return run


def _execution(arn: str) -> dict[str, Any]:
    return boto3.client("stepfunctions", region_name=REGION).describe_execution(executionArn=arn)  # type: ignore[no-any-return]


def _row_execution(aws: EmbeddedAws, task_id: str) -> str:
    item = boto3.client("dynamodb", region_name=REGION).get_item(
        TableName=aws.table_name, Key={"taskId": {"S": task_id}}, ConsistentRead=True
    )["Item"]
    return str(item["executionArn"]["S"])


def test_a_parked_task_finishes_on_the_worker_it_started_with(aws: EmbeddedAws) -> None:
    ran: list[tuple[str, str]] = []
    v1 = aws.worker_version
    original = aws.handlers[v1]
    aws.handlers[v1] = _recording("v1", original, ran)
    alice = owner_client("alice")
    parked = alice.call("confirm_delete", {"filename": "report.csv"})["taskId"]
    assert alice.wait(parked, {"input_required"})["status"] == "input_required"

    # Deploy v2: a new worker version, and the state machine now invokes it.
    v2 = aws.deploy_worker(_recording("v2", original, ran))
    assert v2 != v1
    fresh = alice.call("confirm_delete", {"filename": "notes.txt"})["taskId"]
    alice.wait(fresh, {"input_required"})

    for task_id in (parked, fresh):
        alice.result("tasks/update", {"taskId": task_id, "inputResponses": CONFIRM})
    assert alice.wait(parked)["result"]["content"][0]["text"] == "Deleted report.csv"
    assert alice.wait(fresh)["result"]["content"][0]["text"] == "Deleted notes.txt"
    # The task parked on v1 was resumed on v1, from the first step to the last; the task
    # started after the deploy ran v2 throughout.
    assert [name for name, task in ran if task == parked] == ["v1", "v1"], ran
    assert [name for name, task in ran if task == fresh] == ["v2", "v2"], ran


def test_tasks_on_a_replaced_state_machine_complete_or_cancel(
    aws: EmbeddedAws, monkeypatch: pytest.MonkeyPatch
) -> None:
    alice = owner_client("alice")
    # On machine A: two parked tasks (one to answer, one to cancel), two working ones (one to
    # finish, one to cancel).
    answered = alice.call("confirm_delete", {"filename": "a.csv"})["taskId"]
    cancelled_parked = alice.call("confirm_delete", {"filename": "b.csv"})["taskId"]
    finishing = alice.call("slow_compute", {"seconds": 4})["taskId"]
    cancelled_working = alice.call("slow_compute", {"seconds": 30})["taskId"]
    for task_id in (answered, cancelled_parked):
        alice.wait(task_id, {"input_required"})
    machine_a = aws.state_machine_arn
    on_a = {t: _row_execution(aws, t) for t in (answered, cancelled_parked, finishing, cancelled_working)}
    assert all(
        arn.startswith(machine_a.replace(":stateMachine:", ":execution:") + ":") for arn in on_a.values()
    )

    # The upgrade: the stack's machine becomes B; the API and the sweeper now name B.
    replaced = aws.replace_state_machine()
    assert replaced == machine_a and aws.state_machine_arn != machine_a
    assert wiring.root().settings.state_machine_arn == aws.state_machine_arn

    alice.result("tasks/update", {"taskId": answered, "inputResponses": CONFIRM})
    for task_id in (cancelled_parked, cancelled_working):
        alice.result("tasks/cancel", {"taskId": task_id})

    # The sweeper, told everything is stale, checks each live task's execution where it is.
    monkeypatch.setenv("STALE_AFTER_SECONDS", "1")
    wiring.reset()
    time.sleep(1.5)
    report = wiring.root().sweeper.sweep()
    assert report.failed == {}, report.failed

    assert alice.wait(answered, timeout=20)["result"]["content"][0]["text"] == "Deleted a.csv"
    assert alice.wait(finishing, timeout=20)["status"] == "completed"
    for task_id in (cancelled_parked, cancelled_working):
        assert alice.get(task_id)["status"] == "cancelled"
        deadline = time.monotonic() + 20
        while _execution(on_a[task_id])["status"] == "RUNNING" and time.monotonic() < deadline:
            time.sleep(0.1)
        assert _execution(on_a[task_id])["status"] == "ABORTED", task_id
    for task_id in (answered, finishing):
        assert _execution(on_a[task_id])["status"] == "SUCCEEDED", task_id

    # New tasks run on B.
    fresh = alice.call("slow_compute", {"seconds": 0})["taskId"]
    assert alice.wait(fresh)["status"] == "completed"
    assert _row_execution(aws, fresh).startswith(
        aws.state_machine_arn.replace(":stateMachine:", ":execution:")
    )
