"""The engine end to end under moto: the real state machine, the worker in-process."""

from __future__ import annotations

import dataclasses
import itertools
import json
import threading
import time
from typing import Any

import boto3
import pytest

from taskgate import wiring
from taskgate.adapters.stepfunctions_workflow import StepFunctionsWorkflow
from taskgate.clock import now_ms
from taskgate.domain.model import NewTask, Outcome, TaskStatus
from taskgate.domain.worker import Worker
from taskgate.local.runtime import EmbeddedAws
from tests.integration.conftest import table_items
from tests.mcp_client import Mcp


def _execution(aws: EmbeddedAws, task_id: str) -> dict[str, Any]:
    sfn = boto3.client("stepfunctions", region_name="us-east-1")
    arn = aws.state_machine_arn.replace(":stateMachine:", ":execution:") + ":" + task_id
    return sfn.describe_execution(executionArn=arn)


def _states_entered(aws: EmbeddedAws, task_id: str) -> list[str]:
    sfn = boto3.client("stepfunctions", region_name="us-east-1")
    arn = aws.state_machine_arn.replace(":stateMachine:", ":execution:") + ":" + task_id
    events = sfn.get_execution_history(executionArn=arn, maxResults=1000)["events"]
    return [e["stateEnteredEventDetails"]["name"] for e in events if "stateEnteredEventDetails" in e]


def _wait_execution_ended(aws: EmbeddedAws, task_id: str, timeout: float = 10.0) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while (desc := _execution(aws, task_id))["status"] == "RUNNING":
        assert time.monotonic() < deadline, f"execution for {task_id} still running"
        time.sleep(0.05)
    return desc


def test_completed_task_carries_its_result_inline(mcp: Mcp, aws: EmbeddedAws) -> None:
    task_id = mcp.call("slow_compute", {"seconds": 0.6, "label": "job"})["taskId"]
    seen = mcp.wait(task_id, {"working"})
    assert seen["statusMessage"]
    done = mcp.wait(task_id)
    assert done["status"] == "completed"
    assert done["result"]["content"] == [{"type": "text", "text": "job finished after 0.6 seconds"}]
    assert done["result"]["isError"] is False
    assert "error" not in done and "inputRequests" not in done
    assert _wait_execution_ended(aws, task_id)["status"] == "SUCCEEDED"


def test_tool_error_completes_with_is_error(mcp: Mcp) -> None:
    task_id = mcp.call("failing_job")["taskId"]
    done = mcp.wait(task_id)
    assert done["status"] == "completed"
    assert done["result"]["isError"] is True
    assert "simulated tool error" in done["result"]["content"][0]["text"]


def test_protocol_error_fails_with_the_json_rpc_error(mcp: Mcp) -> None:
    task_id = mcp.call("protocol_error_job")["taskId"]
    done = mcp.wait(task_id)
    assert done["status"] == "failed"
    assert done["error"] == {"code": -32603, "message": "Simulated protocol error during execution"}
    assert "result" not in done


def test_input_rounds_partial_then_full_update(mcp: Mcp, aws: EmbeddedAws) -> None:
    task_id = mcp.call("multi_input")["taskId"]
    parked = mcp.wait(task_id, {"input_required"})
    assert set(parked["inputRequests"]) == {"name", "color"}
    # While parked the execution does no work: it waits on the task token.
    assert _execution(aws, task_id)["status"] == "RUNNING"

    ack = mcp.result(
        "tasks/update",
        {
            "taskId": task_id,
            "inputResponses": {
                "name": {"action": "accept", "content": {"name": "Ann"}},
                "never_asked": {"action": "accept", "content": {}},
            },
        },
    )
    assert ack == {"resultType": "complete"}
    partial = mcp.get(task_id)
    assert partial["status"] == "input_required"
    assert set(partial["inputRequests"]) == {"color"}

    # A retry of an answered key is ignored, not an error.
    mcp.result(
        "tasks/update",
        {
            "taskId": task_id,
            "inputResponses": {"name": {"action": "accept", "content": {"name": "Someone else"}}},
        },
    )
    mcp.result(
        "tasks/update",
        {"taskId": task_id, "inputResponses": {"color": {"action": "accept", "content": {"color": "teal"}}}},
    )
    done = mcp.wait(task_id)
    assert done["status"] == "completed"
    assert done["result"]["content"][0]["text"] == "Hello, Ann! Your favourite colour is teal."
    assert _wait_execution_ended(aws, task_id)["status"] == "SUCCEEDED"


def test_update_on_a_working_task_is_acknowledged_and_ignored(mcp: Mcp) -> None:
    task_id = mcp.call("slow_compute", {"seconds": 0.3})["taskId"]
    ack = mcp.result("tasks/update", {"taskId": task_id, "inputResponses": {"x": {"action": "accept"}}})
    assert ack == {"resultType": "complete"}
    assert mcp.wait(task_id)["status"] == "completed"


def test_cancel_while_working_stops_the_tool_and_stays_cancelled(
    mcp: Mcp, aws: EmbeddedAws, monkeypatch: pytest.MonkeyPatch
) -> None:
    steps_ended = threading.Event()
    run_step = Worker.run_step

    def watched(self: Worker, task_id: str, remaining_ms: Any = None, **kwargs: Any) -> Any:
        try:
            return run_step(self, task_id, remaining_ms, **kwargs)
        finally:
            steps_ended.set()

    monkeypatch.setattr(Worker, "run_step", watched)
    task_id = mcp.call("slow_compute", {"seconds": 60, "label": "long"})["taskId"]
    # Cancel only once the tool runs (its first progress report is on the row).
    deadline = time.monotonic() + 10
    while not (mcp.get(task_id).get("statusMessage") or "").startswith("long:"):
        assert time.monotonic() < deadline, "the tool never started"
        time.sleep(0.05)
    assert mcp.result("tasks/cancel", {"taskId": task_id}) == {"resultType": "complete"}
    assert mcp.get(task_id)["status"] == "cancelled"
    # The tool notices at its next progress report and returns, 60 s early.
    assert steps_ended.wait(timeout=10), "the tool kept running after the cancel"
    # Stopped, as AWS reports it (the local runtime mends moto's FAILED: moto_fixes, fix 2).
    assert _wait_execution_ended(aws, task_id)["status"] == "ABORTED"
    final = mcp.get(task_id)
    assert final["status"] == "cancelled"
    assert "result" not in final
    # Cancelling again, or after the end, is the same empty ack.
    assert mcp.result("tasks/cancel", {"taskId": task_id}) == {"resultType": "complete"}


def test_late_result_never_overwrites_cancelled(aws: EmbeddedAws) -> None:
    """The worker finishing after a cancel: its conditional write loses."""
    service = wiring.root().tasks
    record = service.create(NewTask(owner="o", tool="slow_compute", arguments={"seconds": 30}))
    service.cancel("o", record.task_id)
    wrote = wiring.root().store.finish(
        record.task_id,
        status=TaskStatus.COMPLETED,
        outcome=Outcome.SUCCESS,
        result={"content": [{"type": "text", "text": "late"}]},
        error=None,
        message="late",
        now_ms=now_ms(),
        alive=record.kept_alive(now_ms()),
    )
    assert wrote is False
    row = wiring.root().store.get(record.task_id)
    assert row is not None and row.status is TaskStatus.CANCELLED and row.result is None


def test_cancel_while_input_required_ends_the_parked_execution(
    mcp: Mcp, aws: EmbeddedAws, monkeypatch: pytest.MonkeyPatch
) -> None:
    task_id = mcp.call("confirm_delete", {"filename": "report.csv"})["taskId"]
    mcp.wait(task_id, {"input_required"})
    mcp.result("tasks/cancel", {"taskId": task_id})
    cancelled = mcp.get(task_id)
    assert cancelled["status"] == "cancelled"
    assert "inputRequests" not in cancelled
    # The stop ends the parked execution at once, as AWS does (no step was running).
    assert _wait_execution_ended(aws, task_id)["status"] == "ABORTED"
    # An answer arriving after the cancel changes nothing, and resumes nothing.
    resumes: list[str] = []
    monkeypatch.setattr(StepFunctionsWorkflow, "resume", lambda self, token: resumes.append(token) or True)
    mcp.result(
        "tasks/update",
        {
            "taskId": task_id,
            "inputResponses": {"confirm_delete": {"action": "accept", "content": {"confirm": True}}},
        },
    )
    assert mcp.get(task_id)["status"] == "cancelled"
    assert resumes == []


def test_expired_task_is_gone_before_dynamodb_deletes_it(
    mcp: Mcp, aws: EmbeddedAws, monkeypatch: pytest.MonkeyPatch
) -> None:
    task_id = mcp.call("slow_compute", {"seconds": 0.1})["taskId"]
    mcp.wait(task_id)
    row = table_items(aws)[0]
    expires_ms = int(row["expiresAt"]["N"]) * 1000
    # Move the service's clock past the expiry; the row is still in the table.
    service = wiring.root().tasks
    monkeypatch.setattr(service, "_clock", lambda: expires_ms + 1)
    body = mcp.request("tasks/get", {"taskId": task_id})
    assert body["error"]["code"] == -32602
    assert "expired" in body["error"]["message"]
    assert mcp.request("tasks/cancel", {"taskId": task_id})["error"]["code"] == -32602
    assert len(table_items(aws)) == 1


def test_ttl_is_the_effective_one_and_the_table_attribute_is_epoch_seconds(
    aws: EmbeddedAws, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MAX_TTL_MS", "120000")
    wiring.reset()
    record = wiring.root().tasks.create(
        NewTask(owner="o", tool="slow_compute", arguments={"seconds": 0}, requested_ttl_ms=10**9)
    )
    assert record.ttl_ms == 120_000
    # DynamoDB's TTL attribute is epoch seconds, rounded up so the row never goes early;
    # the worker's writes may already have renewed it by the time we look (by seconds).
    created_expiry = -(-(record.created_at_ms + 120_000) // 1000)
    row = table_items(aws)[0]
    assert created_expiry <= int(row["expiresAt"]["N"]) <= created_expiry + 30


def test_a_crash_outside_the_tool_fails_the_task_with_a_reason(
    mcp: Mcp, aws: EmbeddedAws, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The worker Lambda itself crashes (not the tool): the state machine's catch-all records it.
    def crash(self: Worker, task_id: str, remaining_ms: Any = None, **kwargs: Any) -> Any:
        raise MemoryError("boom")

    monkeypatch.setattr(Worker, "run_step", crash)
    task_id = mcp.call("slow_compute", {"seconds": 0})["taskId"]
    done = mcp.wait(task_id)
    assert done["status"] == "failed"
    assert done["error"]["code"] == -32603
    assert done["statusMessage"] == "The task failed outside the tool: MemoryError"
    assert _wait_execution_ended(aws, task_id)["status"] == "FAILED"


def test_an_unexpected_tool_exception_fails_without_a_trace(
    mcp: Mcp, monkeypatch: pytest.MonkeyPatch
) -> None:
    def crash(args: Any, ctx: Any) -> str:
        raise ZeroDivisionError("secret detail")

    broken = dataclasses.replace(wiring.root().tools.get("slow_compute"), fn=crash)  # type: ignore[type-var]
    monkeypatch.setitem(wiring.root().tools._tools, "slow_compute", broken)
    task_id = mcp.call("slow_compute", {"seconds": 0})["taskId"]
    done = mcp.wait(task_id)
    assert done["status"] == "failed"
    assert done["error"] == {
        "code": -32603,
        "message": f"Internal error while running the tool (the worker's log has the trace under taskId {task_id})",
        "data": {"taskId": task_id},
    }
    assert "Traceback" not in json.dumps(done) and "secret detail" not in json.dumps(done)


def test_a_failed_start_leaves_no_working_task(
    mcp: Mcp, aws: EmbeddedAws, monkeypatch: pytest.MonkeyPatch
) -> None:
    def refuse(task_id: str, input_wait_seconds: int) -> None:
        raise RuntimeError("StartExecution throttled")

    monkeypatch.setattr(wiring.root().workflow, "start", refuse)
    body = mcp.request("tools/call", {"name": "slow_compute", "arguments": {"seconds": 1}})
    assert body["error"]["code"] == -32603
    rows = table_items(aws)
    assert len(rows) == 1 and rows[0]["status"]["S"] == "failed"
    assert "never run" in rows[0]["statusMessage"]["S"]


def test_orders_report_runs_a_real_query_with_progress(
    mcp: Mcp, tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    task_id = mcp.call("orders_report", {"year": 2024, "orders": 2000})["taskId"]
    done = mcp.wait(task_id, timeout=30)
    assert done["status"] == "completed", done
    report = done["result"]["structuredContent"]
    assert len(report["months"]) == 12
    assert report["orders"] == 2000
    assert report["revenue"] == pytest.approx(sum(m["revenue"] for m in report["months"]))
    assert done["statusMessage"] == "The operation completed."


def test_archive_orders_asks_before_it_acts(mcp: Mcp, tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    import sqlite3
    import tempfile

    from taskgate_tools.sample_data import ensure_orders

    # The sample the tool builds for itself, built here too to know what it holds.
    sample = ensure_orders(tmp_path / "sample.db", 2025, 1000)
    before = (
        sqlite3.connect(sample)
        .execute("SELECT COUNT(*) FROM orders WHERE ordered_on < '2025-04-01'")
        .fetchone()[0]
    )
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    task_id = mcp.call(
        "archive_orders", {"year": 2025, "orders": 1000, "before": "2025-04-01", "batch_size": 100}
    )["taskId"]
    parked = mcp.wait(task_id, {"input_required"})
    ((key, request),) = parked["inputRequests"].items()
    assert f"Archive {before} orders" in request["params"]["message"]
    # Nothing is kept while the question is open: the step that asked took its copy with it.
    assert list(scratch.iterdir()) == []
    mcp.result(
        "tasks/update",
        {"taskId": task_id, "inputResponses": {key: {"action": "accept", "content": {"confirm": True}}}},
    )
    done = mcp.wait(task_id, timeout=30)
    assert done["result"]["content"][0]["text"] == f"Archived {before} orders placed before 2025-04-01."
    assert list(scratch.iterdir()) == []


def test_a_question_asked_after_cancel_never_parks_the_task(
    mcp: Mcp, aws: EmbeddedAws, monkeypatch: pytest.MonkeyPatch
) -> None:
    from taskgate.tools import Elicit

    running = threading.Event()

    def slow_then_ask(args: Any, ctx: Any) -> str:
        running.set()
        time.sleep(0.5)  # no progress call: the cancel lands while the tool cannot see it
        ctx.ask("late_question", Elicit(message="Still there?", properties={"ok": {"type": "boolean"}}))
        return "unreachable"

    asking = dataclasses.replace(wiring.root().tools.get("confirm_delete"), fn=slow_then_ask)  # type: ignore[type-var]
    monkeypatch.setitem(wiring.root().tools._tools, "confirm_delete", asking)
    # StopExecution lost or late: only the conditional writes stand between the
    # cancel and a parked task.
    monkeypatch.setattr(wiring.root().workflow, "stop", lambda task_id, reason, execution=None: None)
    task_id = mcp.call("confirm_delete", {"filename": "x"})["taskId"]
    assert running.wait(10)
    mcp.result("tasks/cancel", {"taskId": task_id})
    # Storing the questions is conditional on 'working': it loses, the step ends
    # normally and the execution with it, never entering AwaitInput.
    assert _wait_execution_ended(aws, task_id)["status"] == "SUCCEEDED"
    assert _states_entered(aws, task_id) == ["RunTool"]
    row = table_items(aws)[0]
    assert row["status"]["S"] == "cancelled"
    assert "taskToken" not in row and "inputRequests" not in row


def test_a_cancel_between_asking_and_parking_wins(
    mcp: Mcp, aws: EmbeddedAws, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = wiring.root().store
    original_ask = store.ask

    def ask_then_cancel(task_id: str, *args: Any, **kwargs: Any) -> None:
        original_ask(task_id, *args, **kwargs)
        wiring.root().tasks.cancel("anonymous", task_id)  # lands before the park write

    monkeypatch.setattr(store, "ask", ask_then_cancel)
    monkeypatch.setattr(wiring.root().workflow, "stop", lambda task_id, reason, execution=None: None)
    task_id = mcp.call("confirm_delete", {"filename": "x"})["taskId"]
    assert _wait_execution_ended(aws, task_id)["status"] == "SUCCEEDED"
    # The park write's condition loses and the Catch recognises the race (no RecordFailure).
    assert _states_entered(aws, task_id) == ["RunTool", "AwaitInput", "Done"]
    row = table_items(aws)[0]
    assert row["status"]["S"] == "cancelled" and "taskToken" not in row


def test_a_checkpointing_tool_runs_across_several_short_invocations(
    mcp: Mcp, aws: EmbeddedAws, tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Each worker invocation gets 1 s (as if the Lambda timeout were 1 s); a checkpoint
    # with under 0.7 s left ends the step and the state machine runs the next one.
    monkeypatch.setenv("WORKER_STEP_SECONDS", "1")
    monkeypatch.setenv("STEP_YIELD_MARGIN_MS", "700")
    wiring.reset()
    task_id = mcp.call("orders_report", {"year": 2023, "orders": 1200, "pause_seconds": 0.15})["taskId"]
    done = mcp.wait(task_id, timeout=60)
    assert done["status"] == "completed", done
    steps = _states_entered(aws, task_id)
    assert set(steps) == {"RunTool"} and len(steps) >= 3, steps  # several invocations, one task
    report = done["result"]["structuredContent"]
    assert [m["month"] for m in report["months"]] == [f"2023-{m:02d}" for m in range(1, 13)]
    assert report["orders"] == 1200  # every order counted exactly once across the steps


def _history(aws: EmbeddedAws, task_id: str) -> list[dict[str, Any]]:
    sfn = boto3.client("stepfunctions", region_name="us-east-1")
    arn = aws.state_machine_arn.replace(":stateMachine:", ":execution:") + ":" + task_id
    return sfn.get_execution_history(executionArn=arn, maxResults=1000)["events"]


def _events_per_loop(events: list[dict[str, Any]]) -> list[int]:
    """How many history events each pass from one RunTool entry to the next recorded."""
    entries = [
        i
        for i, e in enumerate(events)
        if e["type"] == "TaskStateEntered" and e["stateEnteredEventDetails"]["name"] == "RunTool"
    ]
    return [b - a for a, b in itertools.pairwise(entries)]


def test_the_worker_counts_at_least_the_history_each_loop_records(
    mcp: Mcp, aws: EmbeddedAws, tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The execution history a question round and a continued step really add (moto
    records the events Step Functions documents) is within what the worker counts
    against the 25,000-event limit (domain/history.py)."""
    from taskgate.domain import history

    task_id = mcp.call("confirm_delete", {"filename": "x"})["taskId"]
    mcp.wait(task_id, {"input_required"})
    mcp.result(
        "tasks/update",
        {
            "taskId": task_id,
            "inputResponses": {"confirm_delete": {"action": "accept", "content": {"confirm": True}}},
        },
    )
    assert mcp.wait(task_id)["status"] == "completed"
    _wait_execution_ended(aws, task_id)
    (round_events,) = _events_per_loop(_history(aws, task_id))
    row = next(i for i in table_items(aws) if i["taskId"]["S"] == task_id)
    assert round_events <= history.EVENTS_PER_QUESTION_ROUND == int(row["historyEvents"]["N"])

    monkeypatch.setenv("WORKER_STEP_SECONDS", "1")
    monkeypatch.setenv("STEP_YIELD_MARGIN_MS", "700")
    wiring.reset()
    task_id = mcp.call("orders_report", {"year": 2023, "orders": 300, "pause_seconds": 0.15})["taskId"]
    assert mcp.wait(task_id, timeout=60)["status"] == "completed"
    _wait_execution_ended(aws, task_id)
    loops = _events_per_loop(_history(aws, task_id))
    assert loops and max(loops) <= history.EVENTS_PER_CONTINUED_STEP
    row = next(i for i in table_items(aws) if i["taskId"]["S"] == task_id)
    assert int(row["historyEvents"]["N"]) == len(loops) * history.EVENTS_PER_CONTINUED_STEP
    print(f"\nhistory events per question round {round_events}, per continued step {sorted(set(loops))}")
