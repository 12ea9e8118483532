"""Jobs handed off, under moto with the real state machine: (a) another state machine's
execution, (b) a Batch job, an ECS task and a Glue job run (what moto's Step Functions
runs of them: see each test), and (c) a callback URL. Completion, a failed job (a clear
error), a cancel that stops the job, a late callback and an expired URL refused, a job
that outlives the task's time stopped by the sweeper."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from starlette.testclient import TestClient

from taskgate import wiring
from taskgate.domain import history
from taskgate.domain.model import NewTask
from taskgate.local.runtime import REGION, EmbeddedAws
from tests.fixture_tools import CALLBACK_URLS, JOB_RUNS
from tests.mcp_client import Mcp


def sfn() -> Any:
    return boto3.client("stepfunctions", region_name=REGION)


def until(check: Any, timeout: float = 20.0, every: float = 0.1) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        assert time.monotonic() < deadline, "timed out"
        time.sleep(every)


def text_of(task: dict[str, Any]) -> str:
    return "".join(c.get("text", "") for c in task["result"]["content"])


def child_of(task_id: str) -> dict[str, Any]:
    record = wiring.root().store.get(task_id)
    assert record is not None and record.job is not None
    arn = record.job.target.replace(":stateMachine:", ":execution:") + f":{record.job.name}"
    return sfn().describe_execution(executionArn=arn)  # type: ignore[no-any-return]


def child_running(task_id: str) -> bool:
    """The task's child execution has started (and runs)."""
    record = wiring.root().store.get(task_id)
    if record is None or record.job is None:
        return False
    try:
        return child_of(task_id)["status"] == "RUNNING"
    except sfn().exceptions.ExecutionDoesNotExist:
        return False


def task_history(aws: EmbeddedAws, task_id: str) -> list[dict[str, Any]]:
    arn = aws.state_machine_arn.replace(":stateMachine:", ":execution:") + f":{task_id}"
    return sfn().get_execution_history(executionArn=arn, maxResults=1000)["events"]  # type: ignore[no-any-return]


def entered(aws: EmbeddedAws, task_id: str) -> list[str]:
    return [
        e["stateEnteredEventDetails"]["name"]
        for e in task_history(aws, task_id)
        if "stateEnteredEventDetails" in e
    ]


# -- (a) another state machine -----------------------------------------------------------


def test_the_pipeline_runs_as_a_child_and_its_output_is_the_result(aws: EmbeddedAws, mcp: Mcp) -> None:
    task_id = mcp.call("run_pipeline", {"stage_seconds": 1, "source": "s3://b/day"})["taskId"]
    # Reads ask Step Functions which stage the child is in.
    waiting = until(lambda: "RUNNING, in state" in (t := mcp.get(task_id))["statusMessage"] and t)
    assert waiting["status"] == "working"
    assert waiting["statusMessage"].startswith("Waiting for the state machine taskgate-pipeline: "), waiting
    task = mcp.wait(task_id, timeout=30)
    assert task["status"] == "completed", task
    assert task["result"]["structuredContent"] == {
        "source": "s3://b/day",
        "rows_loaded": 1000,
        "stages": ["extract", "transform", "load"],
    }
    states = entered(aws, task_id)
    assert states == ["RunTool", "LoadJob", "StartJob", "RunExecution", "RecordJobOutcome", "RunTool"], states
    # The round's history fits what the worker counted for it (domain/history.py).
    assert len(task_history(aws, task_id)) <= history.EVENTS_PER_HAND_OFF + history.EVENTS_PER_CONTINUED_STEP


def test_a_failed_child_is_a_clear_tool_error(aws: EmbeddedAws, mcp: Mcp) -> None:
    task_id = mcp.call("run_pipeline", {"stage_seconds": 0, "fail_at": "transform"})["taskId"]
    task = mcp.wait(task_id, timeout=30)
    assert task["status"] == "completed" and task["result"]["isError"] is True, task
    message = text_of(task)
    assert message.startswith("The state machine taskgate-pipeline failed"), message
    assert (
        "failed (States.TaskFailed): FAILED; TransformFailed; The transform stage found rows it could not read."
        in (message)
    )


def test_a_status_look_keeps_the_status_as_a_log_line_in_the_row(aws: EmbeddedAws) -> None:
    # A task whose caller hears lines at info (a plain call's hidden task, a 2025 session
    # that set its level): DynamoDB's conditional update writes the status, the line and
    # the count together, and the worker's window goes on from them once the job ends.
    root = wiring.root()
    record = root.tasks.create(
        NewTask(owner="ann", tool="run_pipeline", arguments={"stage_seconds": 3}, log_level="info")
    )
    until(lambda: child_running(record.task_id))
    seen = until(lambda: (r := root.tasks.get("ann", record.task_id)).status_message and r)
    assert seen.status_message.startswith("Waiting for the state machine taskgate-pipeline: RUNNING")
    row = root.store.get(record.task_id)
    assert row is not None and row.log_count == 1
    assert [(line.level, line.data) for line in row.log_lines] == [("info", seen.status_message)]
    done = until(lambda: (r := root.tasks.get("ann", record.task_id)).status.terminal and r, timeout=40)
    assert done.status.value == "completed" and done.log_count >= 1


def test_cancel_stops_the_child_execution(aws: EmbeddedAws, mcp: Mcp) -> None:
    task_id = mcp.call("run_pipeline", {"stage_seconds": 30})["taskId"]
    until(lambda: child_running(task_id))
    mcp.result("tasks/cancel", {"taskId": task_id})
    assert mcp.get(task_id)["status"] == "cancelled"
    child = until(lambda: (c := child_of(task_id))["status"] != "RUNNING" and c)
    assert child["status"] == "ABORTED"
    # The task's own execution ends too, and records nothing over the cancel.
    arn = aws.state_machine_arn.replace(":stateMachine:", ":execution:") + f":{task_id}"
    until(lambda: sfn().describe_execution(executionArn=arn)["status"] != "RUNNING")
    assert mcp.get(task_id)["status"] == "cancelled"


def test_the_sweeper_stops_a_child_that_outlives_the_tasks_time(
    aws: EmbeddedAws, mcp: Mcp, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MAX_TASK_RUNTIME_SECONDS", "2")
    wiring.reset()
    task_id = mcp.call("run_pipeline", {"stage_seconds": 30})["taskId"]
    until(lambda: (r := wiring.root().store.get(task_id)) is not None and r.job is not None)
    time.sleep(2.2)
    report = wiring.root().sweeper.sweep()
    assert "did not finish within the task's time; it was stopped." in report.failed[task_id]
    assert until(lambda: (c := child_of(task_id))["status"] != "RUNNING" and c)["status"] == "ABORTED"
    assert mcp.get(task_id)["status"] == "failed"


def test_a_tool_that_runs_again_never_starts_a_child_twice(aws: EmbeddedAws, mcp: Mcp) -> None:
    task_id = mcp.call("two_children", {"state_machine_arn": aws.pipeline_arn})["taskId"]
    # The pipeline needs its input's fields; the fixture sends {"n": …}: the child fails,
    # which is enough to show each key's child starts once and the outcome comes back.
    task = mcp.wait(task_id, timeout=30)
    assert task["status"] == "completed" and task["result"]["isError"] is True
    executions = sfn().list_executions(stateMachineArn=aws.pipeline_arn)["executions"]
    assert len(executions) == 1 and JOB_RUNS[task_id] == 2


# -- (c) a callback URL ----------------------------------------------------------------


@pytest.fixture
def callback(aws: EmbeddedAws, http: TestClient) -> Iterator[Any]:
    def post(task_id: str, body: Any, *, index: int = -1) -> tuple[int, Any]:
        url = CALLBACK_URLS[task_id][index].removeprefix("http://localhost")
        resp = http.post(url, content=json.dumps(body), headers={"content-type": "application/json"})
        return resp.status_code, resp.json()

    yield post


def parked(aws: EmbeddedAws, task_id: str) -> bool:
    record = wiring.root().store.get(task_id)
    return bool(record and record.callback and record.callback.token)


def test_a_callback_ends_the_wait_with_its_output(aws: EmbeddedAws, mcp: Mcp, callback: Any) -> None:
    task_id = mcp.call("wait_for_callback", {})["taskId"]
    until(lambda: parked(aws, task_id))
    assert callback(task_id, {"status": "heartbeat", "message": "charging the card"}) == (
        200,
        {"status": "accepted"},
    )
    assert mcp.get(task_id)["statusMessage"] == "charging the card"
    assert callback(task_id, {"status": "succeeded", "output": {"charged": 42}}) == (
        200,
        {"status": "accepted"},
    )
    task = mcp.wait(task_id, timeout=20)
    assert task["result"]["structuredContent"] == {"output": {"charged": 42}}, task
    status, body = callback(task_id, {"status": "succeeded", "output": "again"})
    assert status == 410 and "ended" in body["error"]
    assert entered(aws, task_id) == ["RunTool", "LoadJob", "StartJob", "AwaitCallback", "RunTool"]


def test_a_failure_callback_is_a_clear_tool_error(aws: EmbeddedAws, mcp: Mcp, callback: Any) -> None:
    task_id = mcp.call("wait_for_callback", {})["taskId"]
    until(lambda: parked(aws, task_id))
    callback(task_id, {"status": "failed", "error": "CardDeclined", "message": "insufficient funds"})
    task = mcp.wait(task_id, timeout=20)
    assert task["result"]["isError"] is True
    assert text_of(task) == "The callback 'partner' failed (CardDeclined): insufficient funds"


def test_a_callback_after_a_cancel_is_refused_and_the_execution_ends(
    aws: EmbeddedAws, mcp: Mcp, callback: Any
) -> None:
    task_id = mcp.call("wait_for_callback", {})["taskId"]
    until(lambda: parked(aws, task_id))
    mcp.result("tasks/cancel", {"taskId": task_id})
    arn = aws.state_machine_arn.replace(":stateMachine:", ":execution:") + f":{task_id}"
    assert (
        until(lambda: (s := sfn().describe_execution(executionArn=arn)["status"]) != "RUNNING" and s)
        == "ABORTED"
    )
    status, body = callback(task_id, {"status": "succeeded", "output": 1})
    assert (status, body) == (
        410,
        {"error": "The task has ended (cancelled); this callback changes nothing."},
    )
    assert mcp.get(task_id)["status"] == "cancelled"


def test_an_expired_callback_url_is_refused_and_the_wait_times_out(
    aws: EmbeddedAws, mcp: Mcp, callback: Any
) -> None:
    task_id = mcp.call("wait_for_callback", {"timeout_seconds": 2})["taskId"]
    until(lambda: parked(aws, task_id))
    time.sleep(2.1)
    assert callback(task_id, {"status": "succeeded"}) == (410, {"error": "This callback URL has expired."})
    task = mcp.wait(task_id, timeout=20)
    assert task["result"]["isError"] is True
    assert text_of(task) == "The callback 'partner' did not finish within the task's time (States.Timeout)."


def test_a_callback_that_stops_sending_heartbeats_fails_the_wait(
    aws: EmbeddedAws, mcp: Mcp, callback: Any
) -> None:
    task_id = mcp.call("wait_for_callback", {"heartbeat_seconds": 2})["taskId"]
    until(lambda: parked(aws, task_id))
    assert callback(task_id, {"status": "heartbeat", "message": "still here"})[0] == 200
    task = mcp.wait(task_id, timeout=20)
    assert text_of(task) == "The callback 'partner' sent no heartbeat in time (States.HeartbeatTimeout)."
    assert "AwaitCallbackWithHeartbeat" in entered(aws, task_id)


def test_a_wrong_secret_learns_nothing(aws: EmbeddedAws, mcp: Mcp, http: TestClient) -> None:
    task_id = mcp.call("wait_for_callback", {})["taskId"]
    until(lambda: parked(aws, task_id))
    for url in (f"/callbacks/{task_id}?secret=guess", f"/callbacks/{task_id}", "/callbacks/nope?secret=x"):
        resp = http.post(url, json={"status": "succeeded"})
        assert (resp.status_code, resp.json()) == (404, {"error": "No such callback."}), url
    assert mcp.get(task_id)["status"] == "working"
    mcp.result("tasks/cancel", {"taskId": task_id})


# -- (b) Batch, ECS, Glue: what moto runs of them ---------------------------------------


@pytest.fixture
def batch_queue(aws: EmbeddedAws) -> tuple[str, str]:
    """A job queue and a job definition. moto runs Batch here without Docker: a job is
    done as it is submitted (SUCCEEDED, or FAILED with MOTO_SIMPLE_BATCH_FAIL_AFTER=0), so
    these tests see the job end but cannot stop one midway (the fakes do: tests/unit)."""
    batch = boto3.client("batch", region_name=REGION)
    iam = boto3.client("iam", region_name=REGION)
    role = iam.create_role(RoleName="batch", AssumeRolePolicyDocument="{}")["Role"]["Arn"]
    env = batch.create_compute_environment(computeEnvironmentName="env", type="UNMANAGED", serviceRole=role)
    queue = batch.create_job_queue(
        jobQueueName="q",
        state="ENABLED",
        priority=1,
        computeEnvironmentOrder=[{"order": 1, "computeEnvironment": env["computeEnvironmentArn"]}],
    )["jobQueueArn"]
    definition = batch.register_job_definition(
        jobDefinitionName="nightly",
        type="container",
        containerProperties={"image": "busybox", "vcpus": 1, "memory": 128, "command": ["true"]},
    )["jobDefinitionArn"]
    return queue, definition


def test_a_batch_job_runs_and_its_description_is_the_result(
    aws: EmbeddedAws, mcp: Mcp, batch_queue: Any
) -> None:
    queue, definition = batch_queue
    task_id = mcp.call("run_job", {"kind": "batch", "target": queue, "definition": definition})["taskId"]
    task = mcp.wait(task_id, timeout=30)
    assert task["status"] == "completed" and not task["result"]["isError"], task
    output = task["result"]["structuredContent"]["output"]
    assert output["Status"] == "SUCCEEDED" and output["JobName"] == "taskgate-job"
    assert "RunBatchJob" in entered(aws, task_id)


def test_a_failed_batch_job_is_a_clear_tool_error(
    aws: EmbeddedAws, mcp: Mcp, batch_queue: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MOTO_SIMPLE_BATCH_FAIL_AFTER", "0")
    queue, definition = batch_queue
    task_id = mcp.call("run_job", {"kind": "batch", "target": queue, "definition": definition})["taskId"]
    task = mcp.wait(task_id, timeout=30)
    assert task["result"]["isError"] is True
    assert text_of(task).startswith("The Batch job taskgate-job failed (States.TaskFailed): FAILED"), text_of(
        task
    )


@pytest.fixture
def ecs_cluster(aws: EmbeddedAws) -> dict[str, Any]:
    """A cluster and a task definition: what ``run_job`` needs. moto's ECS task goes
    RUNNING → STOPPED over a few DescribeTasks (which the .sync integration makes every
    half second): it completes on its own, and holds at RUNNING when the test says so,
    to be stopped. (Its awsvpc networking fails in moto itself; the definition is in
    bridge mode, and the awsvpc parameters the tool sends, as to AWS, go unused.)"""
    ecs = boto3.client("ecs", region_name=REGION)
    cluster = ecs.create_cluster(clusterName="jobs")["cluster"]["clusterArn"]
    definition = ecs.register_task_definition(
        family="etl",
        networkMode="bridge",
        cpu="256",
        memory="512",
        containerDefinitions=[{"name": "app", "image": "busybox", "essential": True, "memory": 512}],
    )["taskDefinition"]["taskDefinitionArn"]
    return {
        "kind": "ecs",
        "target": cluster,
        "definition": definition,
        "subnets": ["subnet-0a1b2c3d"],
        "security_groups": ["sg-0a1b2c3d"],
    }


def test_an_ecs_task_runs_to_its_end(aws: EmbeddedAws, mcp: Mcp, ecs_cluster: Any) -> None:
    task_id = mcp.call("run_job", ecs_cluster)["taskId"]
    task = mcp.wait(task_id, timeout=30)
    assert task["status"] == "completed" and not task["result"]["isError"], text_of(task)
    assert task["result"]["structuredContent"]["output"]["LastStatus"] == "STOPPED"


def test_cancel_stops_the_ecs_task(aws: EmbeddedAws, mcp: Mcp, ecs_cluster: Any) -> None:
    from moto.moto_api import state_manager

    state_manager.set_transition(
        model_name="ecs::task", transition={"progression": "manual", "times": 100_000}
    )
    try:
        cluster = ecs_cluster["target"]
        task_id = mcp.call("run_job", ecs_cluster)["taskId"]
        ecs = boto3.client("ecs", region_name=REGION)
        arns = until(lambda: ecs.list_tasks(cluster=cluster)["taskArns"])
        # The task's status comes from ECS, found through the execution's own history.
        assert until(lambda: "RUNNING" in mcp.get(task_id)["statusMessage"])
        assert mcp.get(task_id)["statusMessage"] == "Waiting for the ECS task etl:1: RUNNING"
        mcp.result("tasks/cancel", {"taskId": task_id})
        (stopped,) = ecs.describe_tasks(cluster=cluster, tasks=arns)["tasks"]
        assert (
            stopped["lastStatus"] == "STOPPED"
            and stopped["stoppedReason"] == "The task was cancelled by the client."
        )
        assert mcp.get(task_id)["status"] == "cancelled"
    finally:
        state_manager.unset_transition("ecs::task")


def test_a_glue_job_run_runs_to_its_end(aws: EmbeddedAws, mcp: Mcp) -> None:
    """moto's Glue runs succeed at once (and it has no BatchStopJobRun): the end is shown
    here, the stop on the fakes."""
    glue = boto3.client("glue", region_name=REGION)
    glue.create_job(Name="nightly", Role="arn:aws:iam::123456789012:role/glue", Command={"Name": "glueetl"})
    task_id = mcp.call("run_job", {"kind": "glue", "target": "nightly"})["taskId"]
    task = mcp.wait(task_id, timeout=30)
    assert task["status"] == "completed" and not task["result"]["isError"], text_of(task)
    assert task["result"]["structuredContent"]["output"]["JobRunState"] == "SUCCEEDED"
