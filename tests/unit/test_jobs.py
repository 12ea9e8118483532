"""Jobs a tool hands off, on the fakes: the task waits at no compute (no step runs while
the job does), shows the job's status, gets its outcome, never starts a job twice, and a
cancel (or the deadline) stops the job."""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

from taskgate.domain import history
from taskgate.domain.callbacks import hash_secret
from taskgate.domain.model import NewTask, Outcome, TaskStatus
from taskgate.domain.worker import JOB_TIMEOUT_GRACE_SECONDS, StepKind, TaskgateHandOff
from taskgate.jobs.vocabulary import JobKind, JobOutcome, JobProgress
from tests.fakes import World
from tests.fixture_tools import CALLBACK_URLS, JOB_RUNS
from tests.mcp_client import Legacy, Mcp, parse_sse

CHILD = "arn:aws:states:us-east-1:123456789012:stateMachine:pipeline"
BASE = "https://tasks.example.com"


def started(world: World, mcp: Mcp, tool: str, arguments: dict[str, Any]) -> str:
    task_id: str = mcp.call(tool, arguments)["taskId"]
    world.settle()
    return task_id


def text_of(task: dict[str, Any]) -> str:
    return "".join(c.get("text", "") for c in task["result"]["content"])


def test_a_handed_off_execution_parks_the_task_and_its_output_is_the_result(world: World, mcp: Mcp) -> None:
    task_id = started(world, mcp, "wait_for_child", {"state_machine_arn": CHILD, "input": {"day": "d"}})
    task = mcp.get(task_id)
    assert task["status"] == "working"
    assert task["statusMessage"] == "Waiting for the state machine pipeline: RUNNING"
    # One step ran and ended; nothing runs while the job does.
    assert JOB_RUNS[task_id] == 1 and world.workflow.runnable == []
    assert world.memory.jobs.started == [(task_id, "child")]
    request = world.job_request(task_id)
    assert request["kind"] == "execution" and request["key"] == "child"
    params = request["params"]
    assert params["StateMachineArn"] == CHILD and params["Input"] == {"day": "d"}
    assert params["Name"] == world.store.records[task_id].job.name  # type: ignore[union-attr]

    world.finish_job(task_id, {"rows": 3})
    task = mcp.get(task_id)
    assert task["status"] == "completed", task
    assert task["result"]["structuredContent"] == {
        "ok": True,
        "output": {"rows": 3},
        "error": None,
        "reason": None,
    }
    record = world.store.records[task_id]
    assert record.job is None and record.job_outcomes == {"child": {"ok": True, "output": {"rows": 3}}}


def test_the_child_name_is_the_same_whenever_the_step_runs_so_it_starts_once() -> None:
    from taskgate.tools.jobs import StepFunctionsExecution, child_name

    job = StepFunctionsExecution(CHILD, {})
    task_id = "0b8c2f7e-8f6c-4d64-9a0c-6a1a4b7d3e21"
    assert job.spec(task_id, "a").name == job.spec(task_id, "a").name == child_name(task_id, "a")
    assert child_name(task_id, "a") != child_name(task_id, "b")
    odd = child_name(task_id, "ключ with spaces/and:colons" * 10)
    assert len(odd) <= 80 and all(c.isalnum() or c in "-_" for c in odd)


def test_a_failed_job_is_a_clear_tool_error(world: World, mcp: Mcp) -> None:
    task_id = started(world, mcp, "wait_for_child", {"state_machine_arn": CHILD})
    cause = json.dumps({"Status": "FAILED", "Error": "PipelineBroke", "Cause": "stage 3 found no data"})
    world.finish_job(task_id, error="States.TaskFailed", cause=cause)
    task = mcp.get(task_id)
    # 2026-07-28: a tool error is a completed task whose result says isError.
    assert task["status"] == "completed" and task["result"]["isError"] is True
    message = text_of(task)
    assert message.startswith("The state machine pipeline failed")
    assert "failed (States.TaskFailed): FAILED; PipelineBroke; stage 3 found no data" in message
    assert world.store.records[task_id].outcome is Outcome.TOOL_ERROR


def test_a_tool_may_look_at_a_failure_itself(world: World, mcp: Mcp) -> None:
    task_id = started(world, mcp, "wait_for_child", {"state_machine_arn": CHILD, "check": False})
    world.finish_job(task_id, error="States.Timeout")
    result = mcp.get(task_id)["result"]["structuredContent"]
    assert result["ok"] is False and result["error"] == "States.Timeout"


def test_a_tool_that_runs_again_never_starts_a_job_twice(world: World, mcp: Mcp) -> None:
    task_id = started(world, mcp, "two_children", {"state_machine_arn": CHILD})
    world.finish_job(task_id, "one")
    world.settle()
    assert mcp.get(task_id)["status"] == "input_required"
    mcp.result(
        "tasks/update",
        {"taskId": task_id, "inputResponses": {"again": {"action": "accept", "content": {"go": True}}}},
    )
    world.settle()
    world.finish_job(task_id, "two")
    task = mcp.get(task_id)
    assert task["result"]["structuredContent"] == {"first": "one", "second": "two"}
    # The tool ran four times (the start, after each job, after the answer), each job started once.
    assert JOB_RUNS[task_id] == 4
    assert world.memory.jobs.started == [(task_id, "first"), (task_id, "second")]
    # Each hand-off counted what its round adds to the execution's history.
    assert world.store.records[task_id].history_events == 2 * history.EVENTS_PER_HAND_OFF + (
        history.EVENTS_PER_QUESTION_ROUND
    )


def test_the_step_signals_the_state_machine_to_start_the_job(world: World) -> None:
    record = world.tasks.create(
        NewTask(owner="anonymous", tool="wait_for_child", arguments={"state_machine_arn": CHILD})
    )
    world.workflow.runnable.clear()
    outcome = world.worker.run_step(record.task_id)
    assert outcome.kind is StepKind.HAND_OFF and outcome.reported_status == "hand_off"
    with pytest.raises(TaskgateHandOff):
        outcome.raise_signal()


def test_cancel_stops_the_job_and_its_late_end_changes_nothing(world: World, mcp: Mcp) -> None:
    task_id = started(world, mcp, "wait_for_child", {"state_machine_arn": CHILD})
    mcp.result("tasks/cancel", {"taskId": task_id})
    assert world.memory.jobs.stopped == {task_id: "The task was cancelled by the client."}
    assert world.workflow.executions[task_id] == "ABORTED"
    assert mcp.get(task_id)["status"] == "cancelled"
    # The job's end, had it raced the cancel, is refused by the outcome write's condition.
    world.memory.jobs.running[task_id] = world.store.records[task_id].job  # type: ignore[assignment]
    world.finish_job(task_id, "late")
    assert world.store.records[task_id].status is TaskStatus.CANCELLED
    assert world.store.records[task_id].job_outcomes == {}


def test_a_job_that_cannot_be_stopped_does_not_stop_the_cancel(world: World, mcp: Mcp) -> None:
    task_id = started(world, mcp, "wait_for_child", {"state_machine_arn": CHILD})
    world.memory.jobs.fail_next["stop"] = RuntimeError("AccessDenied")
    mcp.result("tasks/cancel", {"taskId": task_id})
    assert mcp.get(task_id)["status"] == "cancelled"
    assert world.workflow.executions[task_id] == "ABORTED"


def test_tasks_get_shows_the_jobs_status_looking_at_most_once_per_interval(world: World, mcp: Mcp) -> None:
    task_id = started(world, mcp, "run_job", {"kind": "batch", "target": "queue", "definition": "def:1"})
    world.memory.jobs.progress[task_id] = JobProgress("RUNNABLE")
    assert mcp.get(task_id)["statusMessage"] == "Waiting for the Batch job taskgate-job: RUNNABLE"
    world.memory.jobs.progress[task_id] = JobProgress("RUNNING", progress=3, total=10)
    for _ in range(5):
        assert mcp.get(task_id)["statusMessage"].endswith("RUNNABLE")
    assert world.memory.jobs.described == 1
    world.clock.advance(10_000)
    assert mcp.get(task_id)["statusMessage"] == "Waiting for the Batch job taskgate-job: RUNNING (3/10)"
    assert world.memory.jobs.described == 2
    # A service that cannot be read leaves the last status; the task is not failed.
    world.clock.advance(10_000)
    world.memory.jobs.fail_next["describe"] = RuntimeError("throttled")
    task = mcp.get(task_id)
    assert task["status"] == "working" and task["statusMessage"].endswith("RUNNING (3/10)")


def test_a_plain_callers_stream_hears_the_jobs_status_and_its_count_of_work_done(
    legacy: Legacy, world: World
) -> None:
    body = {
        "jsonrpc": "2.0",
        "id": 5,
        "method": "tools/call",
        "params": {
            "name": "run_job",
            "arguments": {"kind": "batch", "target": "queue", "definition": "def:1"},
            "_meta": {"progressToken": "p5"},
        },
    }
    # A caller that waits ten minutes: the stream runs to the result, never handed over.
    wait = legacy.headers(**{"taskgate-wait-seconds": "600"})
    events = parse_sse(legacy.http.post("/mcp", json=body, headers=wait).text)
    world.settle()
    ((task_id, _),) = world.memory.jobs.started

    def resumed() -> list[dict[str, Any]]:
        world.clock.advance(10_000)  # one look at the job's service per interval
        last = [e["id"] for e in events if e["id"]][-1]
        return parse_sse(legacy.resume(last).text)

    for status in (
        JobProgress("RUNNABLE"),
        JobProgress("RUNNING", progress=3, total=10),
        JobProgress("RUNNING", progress=2, total=10),  # a count never goes backwards
        JobProgress("RUNNING", progress=9, total=10),
    ):
        world.memory.jobs.progress[task_id] = status
        events += resumed()
    world.finish_job(task_id, {"status": "SUCCEEDED"})
    events += resumed()
    sent = [e["data"] for e in events if e["data"] and "method" in e["data"]]
    lines = [m["params"]["data"] for m in sent if m["method"] == "notifications/message"]
    assert lines == [
        "Waiting for the Batch job taskgate-job: RUNNING",  # the first piece's look, as it started
        "Waiting for the Batch job taskgate-job: RUNNABLE",
        "Waiting for the Batch job taskgate-job: RUNNING (3/10)",
        "Waiting for the Batch job taskgate-job: RUNNING (2/10)",
        "Waiting for the Batch job taskgate-job: RUNNING (9/10)",
    ]
    progress = [
        (m["params"]["progress"], m["params"]["total"])
        for m in sent
        if m["method"] == "notifications/progress"
    ]
    assert progress == [(3, 10), (9, 10)]
    answer = [e["data"] for e in events if e["data"] and e["data"].get("id") == 5]
    assert answer and answer[-1]["result"]["structuredContent"] == {"output": {"status": "SUCCEEDED"}}


def test_a_task_that_keeps_no_log_lines_gets_the_status_alone(world: World, mcp: Mcp) -> None:
    task_id = started(world, mcp, "run_job", {"kind": "glue", "target": "nightly"})
    world.memory.jobs.progress[task_id] = JobProgress("RUNNING")
    assert mcp.get(task_id)["statusMessage"] == "Waiting for the Glue job nightly: RUNNING"
    record = world.store.records[task_id]
    assert record.log_count == 0 and record.log_lines == () and record.progress_count == 0


def test_the_waits_timeout_follows_the_tasks_time() -> None:
    world = World(default_ttl_ms=600_000)
    task_id = started(world, world.mcp(), "wait_for_child", {"state_machine_arn": CHILD})
    record = world.store.records[task_id]
    assert record.job is not None and record.job.deadline_ms == record.created_at_ms + 600_000
    # The sweeper stops the job at the deadline; the state's own timeout is the backstop.
    assert world.job_request(task_id)["timeoutSeconds"] == 600 + JOB_TIMEOUT_GRACE_SECONDS


def test_the_waits_deadline_is_never_past_max_task_runtime() -> None:
    world = World(max_task_runtime_seconds=120)
    mcp = world.mcp()
    task_id = started(world, mcp, "wait_for_child", {"state_machine_arn": CHILD})
    record = world.store.records[task_id]
    assert record.job is not None and record.job.deadline_ms == record.created_at_ms + 120_000


def test_the_sweeper_stops_a_job_past_its_deadline(world: World, mcp: Mcp) -> None:
    task_id = started(world, mcp, "run_job", {"kind": "glue", "target": "nightly"})
    world.clock.advance(3_600_000 + 1)
    report = world.sweeper.sweep()
    assert (
        report.failed[task_id]
        == "The Glue job nightly did not finish within the task's time; it was stopped."
    )
    assert world.memory.jobs.stopped[task_id] == report.failed[task_id]
    assert mcp.get(task_id)["status"] == "failed"


# -- plain calls (the hosts people use call tools plainly) ---------------------------------


def test_a_plain_2026_call_of_a_job_tool_is_handed_to_the_model_and_its_cancel_stops_the_job(
    world: World, mcp: Mcp
) -> None:
    # Nothing here holds a 2026 call (the HTTP API buffers): the tool, run inline, hands its
    # job off, so the call becomes a hidden task the model drives through a handle.
    result = mcp.call("run_job", {"kind": "glue", "target": "nightly"}, tasks=False)
    assert result["resultType"] == "complete" and result["isError"] is False
    handle = result["structuredContent"]["handle"]
    assert "taskgate_task_cancel" in result["content"][0]["text"]
    world.settle()
    assert world.memory.jobs.started == [(handle, "job")]
    status = mcp.call("taskgate_task_status", {"handle": handle}, tasks=False)
    assert status["structuredContent"]["status"] == "working"
    assert status["structuredContent"]["message"].startswith("Waiting for the Glue job nightly")
    cancelled = mcp.call("taskgate_task_cancel", {"handle": handle}, tasks=False)
    assert cancelled["structuredContent"]["status"] == "cancelled"
    assert world.memory.jobs.stopped == {handle: "The task was cancelled by the client."}
    assert world.store.records[handle].status is TaskStatus.CANCELLED


def test_a_plain_2026_call_of_a_job_tool_is_refused_with_how_to_call_it_when_handles_are_off() -> None:
    world = World(call_handles=False)
    # Known from an earlier run (quick: its step only hands the job off), so it runs inline and
    # its hand_off says, before anything starts, that only a task can wait on a job.
    world.known_quick("run_job")
    body = world.mcp().request(
        "tools/call", {"name": "run_job", "arguments": {"kind": "glue", "target": "nightly"}}, tasks=False
    )
    error = body["error"]
    assert "waits on a job" in error["message"] and "io.modelcontextprotocol/tasks" in error["message"]
    assert world.memory.jobs.started == [] and world.store.records == {}


def test_a_plain_2025_call_of_a_job_tool_streams_until_the_job_ends_then_its_result(
    legacy: Legacy, world: World
) -> None:
    body = {
        "jsonrpc": "2.0",
        "id": 7,
        "method": "tools/call",
        "params": {"name": "run_job", "arguments": {"kind": "glue", "target": "nightly"}},
    }
    first = legacy.http.post("/mcp", json=body, headers=legacy.headers())
    assert first.headers["content-type"].startswith("text/event-stream")
    world.settle()
    ((task_id, key),) = world.memory.jobs.started
    assert key == "job" and world.store.records[task_id].status is TaskStatus.WORKING
    world.finish_job(task_id, {"JobRunState": "SUCCEEDED"})
    events = parse_sse(first.text)
    for _ in range(10):
        answers = [e["data"] for e in events if e["data"] and e["data"].get("id") == 7]
        if answers:
            break
        last = [e["id"] for e in events if e["id"]][-1]
        events += parse_sse(legacy.resume(last).text)
    (answer,) = answers
    assert answer["result"]["structuredContent"] == {"output": {"JobRunState": "SUCCEEDED"}}
    assert world.memory.jobs.started == [(task_id, "job")]  # one job, whatever ran again


def test_a_plain_2025_cancel_of_a_job_tools_call_stops_the_job(legacy: Legacy, world: World) -> None:
    body = {
        "jsonrpc": "2.0",
        "id": 8,
        "method": "tools/call",
        "params": {"name": "run_job", "arguments": {"kind": "glue", "target": "nightly"}},
    }
    legacy.http.post("/mcp", json=body, headers=legacy.headers())
    world.settle()
    ((task_id, _),) = world.memory.jobs.started
    cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 8}}
    assert legacy.http.post("/mcp", json=cancel, headers=legacy.headers()).status_code == 202
    assert world.store.records[task_id].status is TaskStatus.CANCELLED
    assert world.memory.jobs.stopped == {task_id: "The task was cancelled by the client."}


def test_a_request_too_large_for_the_row_is_a_tool_error(world: World, mcp: Mcp) -> None:
    task_id = started(
        world, mcp, "wait_for_child", {"state_machine_arn": CHILD, "input": {"x": "y" * 70_000}}
    )
    task = mcp.get(task_id)
    assert task["result"]["isError"] is True and "the limit is 65536" in text_of(task)
    assert world.memory.jobs.started == []


# -- callbacks -------------------------------------------------------------------------


@pytest.fixture
def cb_world() -> World:
    return World(public_url=BASE)


def _url(task_id: str) -> tuple[str, str]:
    url = CALLBACK_URLS[task_id][-1]
    parts = urlsplit(url)
    return parts.path.rsplit("/", 1)[-1], parse_qs(parts.query)["secret"][0]


def deliver(world: World, task_id: str, secret: str, body: Any) -> tuple[int, dict[str, Any]]:
    reply = world.root.callbacks.deliver(task_id, secret, body)
    world.settle()
    return reply.status, reply.body


def test_a_callback_url_is_handed_out_and_only_its_hash_is_kept(cb_world: World) -> None:
    mcp = cb_world.mcp()
    task_id = started(cb_world, mcp, "wait_for_callback", {})
    url = CALLBACK_URLS[task_id][0]
    assert url.startswith(f"{BASE}/callbacks/{task_id}?secret=")
    _, secret = _url(task_id)
    assert len(secret) >= 43  # 256 random bits
    record = cb_world.store.records[task_id]
    assert record.callback is not None and record.callback.secret_hash == hash_secret(secret)
    assert secret not in repr(record) and secret not in json.dumps(cb_world.job_request(task_id))
    assert record.callback.token is not None  # parked on it
    assert mcp.get(task_id)["statusMessage"] == "Waiting for the callback 'partner'."


def test_a_callback_ends_the_wait_with_its_output_and_is_single_use(cb_world: World) -> None:
    mcp = cb_world.mcp()
    task_id = started(cb_world, mcp, "wait_for_callback", {})
    tid, secret = _url(task_id)
    assert deliver(
        cb_world, tid, secret, {"status": "heartbeat", "message": "halfway", "progress": 5, "total": 10}
    ) == (
        200,
        {"status": "accepted"},
    )
    assert mcp.get(task_id)["statusMessage"] == "halfway"
    assert cb_world.workflow.heartbeats  # the state machine hears it too
    assert deliver(cb_world, tid, secret, {"status": "succeeded", "output": {"paid": 42}}) == (
        200,
        {"status": "accepted"},
    )
    task = mcp.get(task_id)
    assert task["status"] == "completed" and task["result"]["structuredContent"] == {"output": {"paid": 42}}
    status, body = deliver(cb_world, tid, secret, {"status": "succeeded", "output": "again"})
    assert status == 410 and "ended" in body["error"]
    assert JOB_RUNS[task_id] == 2


def test_a_second_callback_before_the_tool_resumes_is_told_it_was_used(cb_world: World) -> None:
    mcp = cb_world.mcp()
    task_id = started(cb_world, mcp, "wait_for_callback", {})
    tid, secret = _url(task_id)
    assert cb_world.root.callbacks.deliver(tid, secret, {"status": "succeeded"}).status == 200
    reply = cb_world.root.callbacks.deliver(tid, secret, {"status": "failed", "message": "no"})
    assert (reply.status, reply.body) == (410, {"error": "This callback URL has been used."})


def test_a_failure_callback_fails_the_job(cb_world: World) -> None:
    mcp = cb_world.mcp()
    task_id = started(cb_world, mcp, "wait_for_callback", {})
    tid, secret = _url(task_id)
    deliver(
        cb_world, tid, secret, {"status": "failed", "error": "CardDeclined", "message": "insufficient funds"}
    )
    task = mcp.get(task_id)
    assert task["result"]["isError"] is True
    assert text_of(task) == "The callback 'partner' failed (CardDeclined): insufficient funds"


def test_wrong_unknown_and_malformed_callbacks_are_refused(cb_world: World) -> None:
    mcp = cb_world.mcp()
    task_id = started(cb_world, mcp, "wait_for_callback", {})
    tid, secret = _url(task_id)
    assert deliver(cb_world, tid, "guess", {"status": "succeeded"})[0] == 404
    assert deliver(cb_world, "no-such-task", secret, {"status": "succeeded"})[0] == 404
    assert deliver(cb_world, tid, "", {"status": "succeeded"})[0] == 404
    status, body = deliver(cb_world, tid, secret, {"status": "done"})
    assert status == 400 and body["error"].startswith("Invalid callback: status")
    assert mcp.get(task_id)["status"] == "working"


def test_an_expired_callback_url_is_refused(cb_world: World) -> None:
    mcp = cb_world.mcp()
    task_id = started(cb_world, mcp, "wait_for_callback", {"timeout_seconds": 60})
    tid, secret = _url(task_id)
    cb_world.clock.advance(60_001)
    assert deliver(cb_world, tid, secret, {"status": "succeeded"}) == (
        410,
        {"error": "This callback URL has expired."},
    )
    assert mcp.get(task_id)["status"] == "working"


def test_a_callback_after_a_cancel_changes_nothing(cb_world: World) -> None:
    mcp = cb_world.mcp()
    task_id = started(cb_world, mcp, "wait_for_callback", {})
    tid, secret = _url(task_id)
    mcp.result("tasks/cancel", {"taskId": task_id})
    status, body = deliver(cb_world, tid, secret, {"status": "succeeded", "output": 1})
    assert status == 410 and body["error"] == "The task has ended (cancelled); this callback changes nothing."
    record = cb_world.store.records[task_id]
    assert record.status is TaskStatus.CANCELLED and record.job_outcomes == {}
    assert record.callback is not None and record.callback.token is None


def test_a_callback_that_comes_before_the_park_is_not_lost(cb_world: World) -> None:
    mcp = cb_world.mcp()
    task_id = mcp.call("wait_for_callback", {})["taskId"]
    cb_world.workflow.runnable.remove(task_id)
    cb_world.worker.run_step(task_id)  # the step stored the URL; the state machine has not parked yet
    tid, secret = _url(task_id)
    assert (
        cb_world.root.callbacks.deliver(tid, secret, {"status": "succeeded", "output": "fast"}).status == 200
    )
    # AwaitCallback finds the outcome there already: its write is refused and RunTool goes on.
    cb_world.memory.start_job(task_id)
    cb_world.settle()
    assert mcp.get(task_id)["result"]["structuredContent"] == {"output": "fast"}


def test_a_callback_needs_a_public_url(world: World, mcp: Mcp) -> None:
    task_id = started(world, mcp, "wait_for_callback", {})
    task = mcp.get(task_id)
    assert task["result"]["isError"] is True and "PUBLIC_URL" in text_of(task)


def test_the_callback_route_answers_over_http(cb_world: World) -> None:
    from starlette.testclient import TestClient

    mcp = cb_world.mcp()
    task_id = started(cb_world, mcp, "wait_for_callback", {})
    url = CALLBACK_URLS[task_id][0].removeprefix(BASE)
    with TestClient(cb_world.root.app(), base_url="http://localhost") as http:
        assert http.post(url, content="{not json").status_code == 400
        assert http.post(url.split("?")[0] + "?secret=wrong", json={"status": "succeeded"}).status_code == 404
        ok = http.post(url, json={"status": "succeeded", "output": [1, 2]})
        assert (ok.status_code, ok.json()) == (200, {"status": "accepted"})
    cb_world.settle()
    assert mcp.get(task_id)["result"]["structuredContent"] == {"output": [1, 2]}


# -- reading outcomes -------------------------------------------------------------------


def test_an_ecs_task_whose_container_failed_is_a_failed_job() -> None:
    output = {"LastStatus": "STOPPED", "Containers": [{"Name": "app", "ExitCode": 3, "Reason": "OOM"}]}
    outcome = JobOutcome.read(JobKind.ECS, {"ok": True, "output": output})
    assert not outcome.ok and outcome.reason == "app exited with code 3; OOM"
    assert JobOutcome.read(JobKind.ECS, {"ok": True, "output": {"Containers": [{"ExitCode": 0}]}}).ok


def test_failure_causes_are_read_in_each_services_words() -> None:
    batch = json.dumps(
        {"Status": "FAILED", "StatusReason": "Essential container exited", "Container": {"ExitCode": 2}}
    )
    glue = json.dumps({"JobRunState": "FAILED", "ErrorMessage": "Table not found"})
    assert JobOutcome.read(JobKind.BATCH, {"Error": "States.TaskFailed", "Cause": batch}).reason == (
        "FAILED; Essential container exited; exit code 2"
    )
    assert JobOutcome.read(JobKind.GLUE, {"Error": "States.TaskFailed", "Cause": glue}).reason == (
        "FAILED; Table not found"
    )
    assert (
        JobOutcome.read(JobKind.BATCH, {"Error": "Batch.ClientException", "Cause": "no queue"}).reason
        == "no queue"
    )
    too_big = JobOutcome.read(JobKind.EXECUTION, {"Error": "Taskgate.OutputTooLarge", "Cause": "x"})
    assert too_big.failure_message("the state machine c") == ("The state machine c finished, but x")
    late = JobOutcome.read(JobKind.GLUE, {"Error": "States.Timeout"})
    assert late.failure_message("the Glue job g") == (
        "The Glue job g did not finish within the task's time (States.Timeout)."
    )
