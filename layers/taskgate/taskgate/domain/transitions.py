"""The legal transitions of a task: a table the domain owns.

Every change to a task is one of these operations, and each is allowed only
from the statuses listed here. The stores enforce it (DynamoDB with condition
expressions, the test fakes by reading this table); a test runs every
operation from every status against each store and compares with this table.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from .errors import TransitionRejected
from .model import ACTIVE, TaskStatus


class Op(enum.StrEnum):
    PROGRESS = "progress"  # the tool reports a status message
    ASK = "ask"  # the tool stores questions; the state machine parks next
    PARK = "park"  # the state machine's AwaitInput: waiting on a task token
    ANSWER = "answer"  # some of the outstanding questions are answered
    RESUME = "resume"  # the answer that completes the questions
    CHECKPOINT = "checkpoint"  # the tool saves its state
    COMPLETE = "complete"  # the tool returned
    FAIL = "fail"  # the tool, the state machine, the sweeper or the API ended it failed
    CANCEL = "cancel"  # the client cancelled it
    HAND_OFF = "hand_off"  # the tool hands a job off (jobs/vocabulary.py); the state machine waits on it next
    WAIT = "wait"  # the state machine's AwaitCallback: parked on a callback job's task token
    JOB_DONE = "job_done"  # a job's outcome is recorded (the state machine, or its callback URL)
    JOB_STATUS = "job_status"  # the job's status (or a callback's heartbeat) becomes the statusMessage


@dataclass(frozen=True)
class Transition:
    """The statuses a write may start from, and the one it leaves."""

    sources: frozenset[TaskStatus]
    # None: the status stays what it was.
    target: TaskStatus | None


_WORKING = frozenset({TaskStatus.WORKING})
_PARKED = frozenset({TaskStatus.INPUT_REQUIRED})

TRANSITIONS: dict[Op, Transition] = {
    Op.PROGRESS: Transition(_WORKING, None),
    Op.ASK: Transition(_WORKING, None),
    # From input_required too: a retried park (its first write may have landed) replaces the token.
    Op.PARK: Transition(ACTIVE, TaskStatus.INPUT_REQUIRED),
    Op.ANSWER: Transition(_PARKED, None),
    Op.RESUME: Transition(_PARKED, TaskStatus.WORKING),
    Op.CHECKPOINT: Transition(ACTIVE, None),
    Op.COMPLETE: Transition(ACTIVE, TaskStatus.COMPLETED),
    Op.FAIL: Transition(ACTIVE, TaskStatus.FAILED),
    Op.CANCEL: Transition(ACTIVE, TaskStatus.CANCELLED),
    # A task waiting on a job stays working: its client polls as for any running tool.
    Op.HAND_OFF: Transition(_WORKING, None),
    Op.WAIT: Transition(_WORKING, None),
    Op.JOB_DONE: Transition(_WORKING, None),
    Op.JOB_STATUS: Transition(_WORKING, None),
}


def allowed(op: Op, status: TaskStatus) -> bool:
    return status in TRANSITIONS[op].sources


def check(op: Op, task_id: str, status: TaskStatus) -> None:
    """Raise TransitionRejected unless ``op`` may run on a task in ``status``."""
    if not allowed(op, status):
        raise TransitionRejected(task_id)


def target(op: Op, status: TaskStatus) -> TaskStatus:
    return TRANSITIONS[op].target or status
