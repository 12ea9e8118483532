"""The DynamoDB store's condition expressions, and the state machine's own writes
(AwaitInput's park, AwaitCallback's, RecordJobOutcome, RecordFailure), allow exactly
what the domain's transition table allows: every operation from every status, against moto."""

from __future__ import annotations

import json
import pathlib
from typing import Any

import boto3
import pytest

from taskgate import wiring
from taskgate.adapters.dynamodb_store import DynamoDBTaskStore, input_requests_attribute
from taskgate.domain.errors import TransitionRejected
from taskgate.domain.model import ACTIVE, TaskRecord, TaskStatus
from taskgate.domain.transitions import Op
from taskgate.local.runtime import EmbeddedAws
from tests.transition_matrix import (
    ALIVE,
    CASES,
    JOB,
    NOW,
    QUESTIONS,
    TOKEN,
    answer_problems,
    run_op,
    verdict,
)

ROOT = pathlib.Path(__file__).resolve().parents[2]
ASL = json.loads((ROOT / "statemachines" / "task.asl.json").read_text())


def _state_write(state: str, table: str, task_id: str) -> dict[str, Any]:
    """The UpdateItem a state of task.asl.json sends, with its JSONPath values filled in."""
    params = json.loads(json.dumps(ASL["States"][state]["Parameters"]))
    filled = {
        "$.taskId": task_id,
        "$$.Task.Token": "token-2",
        "$$.State.EnteredTime": "2027-01-15T08:00:00.000Z",
        "$.job.request.key": JOB.key,
        # A job's outcome takes its request's place (n5): the recording states read the key there.
        "$.job.key": JOB.key,
    }

    def fill(node: Any) -> Any:
        if isinstance(node, dict):
            out = {}
            for key, value in node.items():
                if key.endswith(".$"):
                    if value.startswith("States.Format"):
                        out[key[:-2]] = "The task failed outside the tool: Test"
                    elif value.startswith("States.JsonToString"):
                        out[key[:-2]] = json.dumps({"ok": True, "output": 1})
                    else:
                        out[key[:-2]] = filled[value]
                else:
                    out[key] = fill(value)
            return out
        return node

    params = fill(params)
    params["TableName"] = table
    return params


class DynamoUnderTest:
    def __init__(
        self,
        aws: EmbeddedAws,
        *,
        park_by: str = "AwaitInput",
        fail_by: str = "adapter",
        job_done_by: str = "adapter",
    ) -> None:
        self.ddb = boto3.client("dynamodb", region_name="us-east-1")
        self.table = aws.table_name
        self.store = DynamoDBTaskStore(lambda: self.ddb, self.table)
        self._n = 0
        self._fail_by = fail_by
        self._job_done_by = job_done_by

    def seed(self, status: TaskStatus) -> str:
        self._n += 1
        task_id = f"00000000-0000-4000-8000-{self._n:012d}"
        self.store.create(
            TaskRecord(
                task_id=task_id,
                owner="o",
                tool="t",
                arguments={},
                status=status,
                created_at_ms=NOW,
                last_updated_at_ms=NOW,
                ttl_ms=60_000,
                poll_interval_ms=1000,
                expires_at_ms=NOW + 60_000,
                retention_ms=60_000,
            )
        )
        sets, values = [], {}
        if status in ACTIVE:
            sets += ["inputRequests = :q", "jobKey = :k", "job = :j", "jobOutcomes = :none"]
            values[":q"] = input_requests_attribute(QUESTIONS)
            values[":k"] = {"S": JOB.key}
            values[":j"] = {"S": json.dumps(JOB.to_json())}
            values[":none"] = {"M": {}}
        if status is TaskStatus.INPUT_REQUIRED:
            sets.append("taskToken = :t")
            values[":t"] = {"S": TOKEN}
        if sets:
            self.ddb.update_item(
                TableName=self.table,
                Key={"taskId": {"S": task_id}},
                UpdateExpression="SET " + ", ".join(sets),
                ExpressionAttributeValues=values,
            )
        return task_id

    def apply(self, op: Op, task_id: str) -> bool:
        if op is Op.FAIL and self._fail_by == "RecordFailure":
            return self._state("RecordFailure", task_id)
        if op is Op.JOB_DONE and self._job_done_by == "RecordJobOutcome":
            return self._state("RecordJobOutcome", task_id)
        return run_op(
            self.store,
            op,
            task_id,
            lambda t: self._state("AwaitInput", t),
            lambda t: self._state("AwaitCallback", t),
        )

    def _state(self, state: str, task_id: str) -> bool:
        try:
            self.ddb.update_item(**_state_write(state, self.table, task_id))
        except self.ddb.exceptions.ConditionalCheckFailedException:
            return False
        return True

    def status(self, task_id: str) -> TaskStatus:
        record = self.store.get(task_id)
        assert record is not None
        return record.status


@pytest.mark.parametrize(("op", "start"), CASES, ids=[f"{op}-{s}" for op, s in CASES])
def test_dynamodb_follows_the_table(aws: EmbeddedAws, op: Op, start: TaskStatus) -> None:
    assert verdict(DynamoUnderTest(aws), op, start).problems() == []


@pytest.mark.parametrize("start", list(TaskStatus))
def test_the_state_machines_record_failure_follows_the_table(aws: EmbeddedAws, start: TaskStatus) -> None:
    assert verdict(DynamoUnderTest(aws, fail_by="RecordFailure"), Op.FAIL, start).problems() == []


@pytest.mark.parametrize("start", list(TaskStatus))
def test_the_state_machines_record_job_outcome_follows_the_table(aws: EmbeddedAws, start: TaskStatus) -> None:
    under = DynamoUnderTest(aws, job_done_by="RecordJobOutcome")
    assert verdict(under, Op.JOB_DONE, start).problems() == []


def test_a_job_outcome_lands_once_and_only_for_the_pending_job(aws: EmbeddedAws) -> None:
    """The store's write and the state machine's: the first outcome ends the job's wait;
    another, or one for another key, changes nothing."""
    under = DynamoUnderTest(aws)
    task_id = under.seed(TaskStatus.WORKING)
    with pytest.raises(TransitionRejected):
        under.store.record_job_outcome(task_id, "other", {"ok": True}, NOW, ALIVE)
    record = under.store.get(task_id)
    assert record is not None and record.job_outcomes == {} and record.job == JOB
    assert under._state("RecordJobOutcome", task_id)
    assert not under._state("RecordJobOutcome", task_id)
    record = under.store.get(task_id)
    assert (
        record is not None
        and record.job is None
        and record.job_outcomes == {JOB.key: {"ok": True, "output": 1}}
    )


def test_dynamodb_lets_only_the_last_answer_resume(aws: EmbeddedAws) -> None:
    assert answer_problems(DynamoUnderTest(aws)) == []


def test_the_adapter_is_the_one_wiring_uses(aws: EmbeddedAws) -> None:
    assert isinstance(wiring.root().store, DynamoDBTaskStore)
