"""Wake-ups for agents that are not connected: an event when a task ends or starts waiting for
an answer.

They come from the table's change stream (DynamoDB Streams), never from a call made after
the conditional write that changed the row: a change the stream carries is a change that
happened, and every one is carried, whichever process (the API, the worker, the state
machine, the sweeper) made it and whether or not it lived to say so. The stream delivers a
row's changes in order, at least once; each event carries an idempotency key, the task id and
the row's version (a count of its status changes), so a consumer drops the second copy of
one and orders two by it.

An event carries only what the task's owner may see of it, and little of that: who, which
task, what it became, when. The result, the error and the questions are read with tasks/get
by whoever the event wakes (they may be large, and the bus is the deployer's to route).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from .model import TaskStatus

SOURCE = "taskgate"
ENDED = "Task ended"
NEEDS_INPUT = "Task needs input"

_TERMINAL = [s.value for s in (TaskStatus.COMPLETED, TaskStatus.FAILED, TaskStatus.CANCELLED)]
_ACTIVE = [TaskStatus.WORKING.value, TaskStatus.INPUT_REQUIRED.value]

# The change stream's records worth an event, as the event source mapping's filter (template
# FilterCriteria, and the local bridge's): a status that became terminal, or became
# input_required from working. Any other change (progress, a partial answer, a session item,
# a row's expiry) is filtered out before it costs an invocation.
FILTER_PATTERNS: list[dict[str, Any]] = [
    {
        "eventName": ["MODIFY"],
        "dynamodb": {
            "NewImage": {"status": {"S": _TERMINAL}},
            "OldImage": {"status": {"S": _ACTIVE}},
        },
    },
    {
        "eventName": ["MODIFY"],
        "dynamodb": {
            "NewImage": {"status": {"S": [TaskStatus.INPUT_REQUIRED.value]}},
            "OldImage": {"status": {"S": [TaskStatus.WORKING.value]}},
        },
    },
]


@dataclass(frozen=True)
class TaskChange:
    """One write to a task row, as the change stream carried it (both images' fields)."""

    task_id: str
    owner: str
    tool: str
    old_status: str
    new_status: str
    # The row's version after the write (None: a writer that does not count, such as an
    # execution started by an older release); ``sequence``: the stream's own number for it.
    version: int | None
    old_version: int | None
    sequence: str
    status_message: str | None
    created_at: str
    last_updated_at: str


@dataclass(frozen=True)
class WakeUp:
    """One event for the bus: a task ended or started waiting for an answer."""

    detail_type: str
    detail: dict[str, Any]

    @property
    def key(self) -> str:
        return str(self.detail["key"])


def wake_up(change: TaskChange) -> WakeUp | None:
    """The event a change is worth, or None."""
    if change.new_status in _TERMINAL and change.old_status in _ACTIVE:
        kind = ENDED
    elif (
        change.new_status == TaskStatus.INPUT_REQUIRED.value and change.old_status == TaskStatus.WORKING.value
    ):
        kind = NEEDS_INPUT
    else:
        return None
    counted = change.version is not None and change.version != change.old_version
    # A write that did not count (an older release's execution) is keyed by the stream's
    # number for it: as stable across redeliveries, and never equal to a counted one.
    version = str(change.version) if counted else f"s{change.sequence}"
    detail: dict[str, Any] = {
        "key": f"{change.task_id}:{version}",
        "taskId": change.task_id,
        "version": change.version if counted else None,
        "owner": change.owner,
        "status": change.new_status,
        "tool": change.tool,
        "createdAt": change.created_at,
        "lastUpdatedAt": change.last_updated_at,
    }
    if change.status_message:
        detail["statusMessage"] = change.status_message
    return WakeUp(kind, detail)


class EventPublisher(Protocol):
    def publish(self, events: list[WakeUp]) -> int:
        """Put ``events`` on the bus in order; how many went, from the first (all of them,
        or the index of the first the bus refused). A refusal of the whole call raises."""


class WakeUps:
    """Publishes the wake-ups of the change stream's records, in the order the stream gave them."""

    def __init__(self, publisher: EventPublisher) -> None:
        self._publisher = publisher

    def publish(self, changes: list[TaskChange | None]) -> int | None:
        """Publish the wake-ups of ``changes`` (None: a record that is no task change); the
        index of the first change whose event did not go (the stream delivers it again,
        with every change after it), or None when all went."""
        events: list[tuple[int, WakeUp]] = []
        for index, change in enumerate(changes):
            event = wake_up(change) if change is not None else None
            if event is not None:
                events.append((index, event))
        if not events:
            return None
        went = self._publisher.publish([event for _, event in events])
        return None if went >= len(events) else events[went][0]
