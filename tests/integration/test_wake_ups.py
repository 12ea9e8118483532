"""Wake-ups (issue 30): an event on the stack's bus when a task ends or starts waiting for an
answer, driven by the table's change stream (the real state machine's writes included), each
change once with its idempotency key, only what the owner may see, routed by a rule to a queue
as a deployer would route it. On moto, with the local bridge for what reads the stream."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import boto3
import pytest

from taskgate.adapters.dynamodb_changes import change_of
from taskgate.domain.errors import DependencyFailure
from taskgate.domain.wake_ups import wake_up
from taskgate.local.change_stream import ChangeStream, matches
from taskgate.local.runtime import EVENT_BUS, REGION, EmbeddedAws
from tests.mcp_client import Mcp

DETAIL_KEYS = {
    "key",
    "taskId",
    "version",
    "owner",
    "status",
    "tool",
    "createdAt",
    "lastUpdatedAt",
    "statusMessage",
}


@pytest.fixture
def queue(aws: EmbeddedAws) -> str:
    """A deployer's route: a rule on the stack's bus sending every task event to a queue."""
    sqs = boto3.client("sqs", region_name=REGION)
    url = sqs.create_queue(QueueName="agent-wake-ups")["QueueUrl"]
    arn = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    events = boto3.client("events", region_name=REGION)
    events.put_rule(
        Name="wake-agents", EventBusName=EVENT_BUS, EventPattern=json.dumps({"source": ["taskgate"]})
    )
    events.put_targets(Rule="wake-agents", EventBusName=EVENT_BUS, Targets=[{"Id": "queue", "Arn": arn}])
    return str(url)


@pytest.fixture
def stream(aws: EmbeddedAws) -> Iterator[ChangeStream]:
    yield aws.change_stream()


def _received(url: str) -> list[dict[str, Any]]:
    sqs = boto3.client("sqs", region_name=REGION)
    out: list[dict[str, Any]] = []
    while True:
        messages = sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10).get("Messages", [])
        if not messages:
            return out
        for message in messages:
            out.append(json.loads(message["Body"]))
            sqs.delete_message(QueueUrl=url, ReceiptHandle=message["ReceiptHandle"])


def _task(mcp: Mcp, tool: str, arguments: dict[str, Any]) -> str:
    created = mcp.call(tool, arguments)
    assert created["resultType"] == "task", created
    return str(created["taskId"])


def test_a_task_that_ends_and_one_that_asks_each_wake_once_with_its_key(
    mcp: Mcp, stream: ChangeStream, queue: str
) -> None:
    done = _task(mcp, "slow_compute", {"seconds": 0})
    asks = _task(mcp, "confirm_delete", {"filename": "a.txt"})
    mcp.wait(done)
    mcp.wait(asks, {"input_required"})
    stream.pump()
    events = _received(queue)
    by_task = {e["detail"]["taskId"]: e for e in events}
    assert len(events) == 2 and set(by_task) == {done, asks}
    ended, asked = by_task[done], by_task[asks]
    assert (ended["detail-type"], ended["source"]) == ("Task ended", "taskgate")
    assert ended["detail"]["status"] == "completed" and ended["detail"]["key"] == f"{done}:2"
    assert asked["detail-type"] == "Task needs input" and asked["detail"]["key"] == f"{asks}:2"
    # Only what the owner sees of it, and none of its payload (arguments, questions, result).
    assert set(ended["detail"]) == DETAIL_KEYS and ended["detail"]["owner"] == "anonymous"
    assert "a.txt" not in json.dumps(asked)
    # Nothing is sent twice: the stream has moved on.
    assert stream.pump() == 0 and _received(queue) == []
    # Answered, the task resumes (no event: it was not waiting on anyone) and then ends.
    mcp.result(
        "tasks/update",
        {
            "taskId": asks,
            "inputResponses": {"confirm_delete": {"action": "accept", "content": {"confirm": True}}},
        },
    )
    mcp.wait(asks)
    stream.pump()
    (last,) = _received(queue)
    assert last["detail-type"] == "Task ended" and last["detail"]["key"] == f"{asks}:4"


def test_a_task_changed_twice_quickly_yields_two_events_in_order(
    mcp: Mcp, stream: ChangeStream, queue: str
) -> None:
    task_id = _task(mcp, "confirm_delete", {"filename": "b.txt"})
    mcp.wait(task_id, {"input_required"})
    mcp.result("tasks/cancel", {"taskId": task_id})  # before anything read the stream
    stream.pump()
    events = _received(queue)
    assert [(e["detail-type"], e["detail"]["key"]) for e in events] == [
        ("Task needs input", f"{task_id}:2"),
        ("Task ended", f"{task_id}:3"),
    ]
    assert events[1]["detail"]["status"] == "cancelled"


def test_an_event_the_bus_refuses_is_delivered_when_the_stream_retries_and_keeps_its_key(
    mcp: Mcp, stream: ChangeStream, queue: str
) -> None:
    task_id = _task(mcp, "slow_compute", {"seconds": 0})
    mcp.wait(task_id)
    events = boto3.client("events", region_name=REGION)
    rules = events.list_targets_by_rule(Rule="wake-agents", EventBusName=EVENT_BUS)["Targets"]
    events.remove_targets(Rule="wake-agents", EventBusName=EVENT_BUS, Ids=["queue"])
    events.delete_rule(Name="wake-agents", EventBusName=EVENT_BUS)
    events.delete_event_bus(Name=EVENT_BUS)
    with pytest.raises(DependencyFailure):
        stream.pump()  # the whole batch failed: the mapping keeps it
    events.create_event_bus(Name=EVENT_BUS)
    events.put_rule(
        Name="wake-agents", EventBusName=EVENT_BUS, EventPattern=json.dumps({"source": ["taskgate"]})
    )
    events.put_targets(Rule="wake-agents", EventBusName=EVENT_BUS, Targets=rules)
    assert stream.pump() == 1
    (event,) = _received(queue)
    assert event["detail"]["key"] == f"{task_id}:2"


STATUSES = ["working", "input_required", "completed", "failed", "cancelled"]


def test_the_mappings_filter_lets_through_exactly_the_changes_that_wake() -> None:
    # What the filter drops never costs an invocation; what it lets through must be worth an event.
    for old in STATUSES:
        for new in STATUSES:
            image = {"taskId": {"S": "t"}, "ownerId": {"S": "o"}, "rowVersion": {"N": "2"}}
            record = {
                "eventName": "MODIFY",
                "dynamodb": {
                    "SequenceNumber": "1",
                    "OldImage": {**image, "status": {"S": old}},
                    "NewImage": {**image, "status": {"S": new}, "rowVersion": {"N": "3"}},
                },
            }
            change = change_of(record)
            assert change is not None
            assert matches(record) == (wake_up(change) is not None), (old, new)
