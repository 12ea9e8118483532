"""Which changes of a task row wake an agent, and with what (issue 30): the rules and the
event, decoded from change-stream records as DynamoDB Streams writes them."""

from __future__ import annotations

from typing import Any

import pytest

from taskgate.adapters.dynamodb_changes import change_of
from taskgate.domain.wake_ups import ENDED, NEEDS_INPUT, TaskChange, WakeUp, WakeUps, wake_up

STATUSES = ["working", "input_required", "completed", "failed", "cancelled"]


def _record(
    old: dict[str, Any] | None, new: dict[str, Any] | None, event: str = "MODIFY", seq: str = "100"
) -> dict[str, Any]:
    def image(fields: dict[str, Any]) -> dict[str, Any]:
        return {k: {"N": str(v)} if isinstance(v, int) else {"S": v} for k, v in fields.items()}

    stream: dict[str, Any] = {"SequenceNumber": seq, "Keys": {"taskId": {"S": "t1"}}}
    if old is not None:
        stream["OldImage"] = image(old)
    if new is not None:
        stream["NewImage"] = image(new)
    return {"eventName": event, "dynamodb": stream}


def _row(status: str, version: int | None = None, **extra: Any) -> dict[str, Any]:
    row = {
        "taskId": "t1",
        "ownerId": "ann",
        "tool": "report",
        "status": status,
        "createdAt": "c",
        "lastUpdatedAt": "u",
    }
    if version is not None:
        row["rowVersion"] = version
    return {**row, **extra}


@pytest.mark.parametrize("old", STATUSES)
@pytest.mark.parametrize("new", STATUSES)
def test_only_an_end_or_the_start_of_a_wait_wakes_anyone(old: str, new: str) -> None:
    change = change_of(_record(_row(old, 2), _row(new, 3)))
    assert change is not None
    event = wake_up(change)
    if new in ("completed", "failed", "cancelled") and old in ("working", "input_required"):
        assert event is not None and event.detail_type == ENDED
    elif (old, new) == ("working", "input_required"):
        assert event is not None and event.detail_type == NEEDS_INPUT
    else:
        assert event is None


def test_the_event_carries_its_key_and_only_what_the_owner_sees() -> None:
    record = _record(
        _row("working", 1, arguments='{"secret": 1}'),
        _row(
            "completed",
            2,
            statusMessage="done",
            result='{"content": []}',
            taskToken="tok",
            executionArn="arn",
        ),
    )
    event = wake_up(change_of(record))  # type: ignore[arg-type]
    assert event == WakeUp(
        ENDED,
        {
            "key": "t1:2",
            "taskId": "t1",
            "version": 2,
            "owner": "ann",
            "status": "completed",
            "tool": "report",
            "createdAt": "c",
            "lastUpdatedAt": "u",
            "statusMessage": "done",
        },
    )


def test_a_write_that_did_not_count_is_keyed_by_the_streams_number_for_it() -> None:
    # An execution an older release started parks without counting: same version before and after.
    uncounted = change_of(_record(_row("working", 1), _row("input_required", 1), seq="777"))
    unversioned = change_of(_record(_row("working"), _row("completed"), seq="778"))
    assert wake_up(uncounted).key == "t1:s777"  # type: ignore[arg-type,union-attr]
    assert wake_up(unversioned).detail["version"] is None  # type: ignore[arg-type,union-attr]


@pytest.mark.parametrize(
    "record",
    [
        _record(None, _row("working", 1), event="INSERT"),
        _record(_row("completed", 2), None, event="REMOVE"),  # the row's expiry
        _record({"taskId": "session#x", "kind": "session"}, {"taskId": "session#x", "kind": "session"}),
        _record({"taskId": "held#ann"}, {"taskId": "held#ann", "leases": "x"}),
    ],
    ids=["insert", "remove", "session", "lease"],
)
def test_records_that_are_no_change_of_a_task_are_none(record: dict[str, Any]) -> None:
    assert change_of(record) is None


class _Bus:
    def __init__(self, refuse_from: int | None = None) -> None:
        self.put: list[WakeUp] = []
        self._refuse_from = refuse_from

    def publish(self, events: list[WakeUp]) -> int:
        went = events if self._refuse_from is None else events[: self._refuse_from]
        self.put += went
        return len(went)


def _change(task: str, old: str, new: str, version: int) -> TaskChange:
    return TaskChange(task, "ann", "tool", old, new, version, version - 1, str(version), None, "c", "u")


def test_changes_are_published_in_the_streams_order_and_a_refusal_names_where_to_start_again() -> None:
    changes: list[TaskChange | None] = [
        _change("a", "working", "input_required", 2),
        None,
        _change("b", "working", "completed", 2),
        _change("a", "input_required", "working", 3),  # no event
        _change("a", "working", "failed", 4),
    ]
    bus = _Bus()
    assert WakeUps(bus).publish(changes) is None
    assert [e.key for e in bus.put] == ["a:2", "b:2", "a:4"]
    refused = _Bus(refuse_from=1)
    # "b:2" was refused: the stream delivers record 2 and everything after it again.
    assert WakeUps(refused).publish(changes) == 2
    assert [e.key for e in refused.put] == ["a:2"]


def _template() -> dict[str, Any]:
    import pathlib

    from cfnlint.decode import decode

    template, matches = decode(str(pathlib.Path(__file__).resolve().parents[2] / "template.yaml"))
    assert not matches and template is not None
    return template  # type: ignore[no-any-return]


def test_the_stacks_mapping_reads_the_task_tables_stream_through_the_same_filter() -> None:
    import json

    from taskgate.domain.wake_ups import FILTER_PATTERNS

    resources = _template()["Resources"]
    function = resources["TaskEventsFunction"]["Properties"]
    mapping = function["Events"]["TaskChanges"]["Properties"]
    assert mapping["Stream"] == {"Fn::GetAtt": ["TaskTable", "StreamArn"]}
    assert resources["TaskTable"]["Properties"]["StreamSpecification"] == {
        "StreamViewType": "NEW_AND_OLD_IMAGES"
    }
    assert [json.loads(f["Pattern"]) for f in mapping["FilterCriteria"]["Filters"]] == FILTER_PATTERNS
    # A failed record is retried, and the ones after it wait: nothing is skipped, order kept.
    assert mapping["FunctionResponseTypes"] == ["ReportBatchItemFailures"]
    assert mapping["StartingPosition"] == "LATEST"
    assert function["Environment"]["Variables"]["TASK_EVENT_BUS"] == {"Ref": "TaskEventBus"}
    statements = [
        s for p in function["Policies"] if isinstance(p, dict) and "Statement" in p for s in p["Statement"]
    ]
    assert [(s["Action"], s["Resource"]) for s in statements] == [
        ("events:PutEvents", {"Fn::GetAtt": ["TaskEventBus", "Arn"]})
    ]
