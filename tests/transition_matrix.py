"""Every operation from every status, against a store: does the store allow exactly
what the domain's transition table allows, and land where the table says?

Run on the in-memory fake (tests/unit) and on DynamoDB with the state machine's
own condition expressions (tests/integration), so the two cannot drift apart.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from taskgate.domain.model import TaskStatus
from taskgate.domain.transitions import TRANSITIONS, Op, allowed, target

ALL_STATUSES = list(TaskStatus)
CASES = [(op, status) for op in Op for status in ALL_STATUSES]
QUESTIONS = {"q1": {"method": "elicitation/create", "params": {"message": "one?"}}, "q2": {"method": "x"}}
TOKEN = "token-1"


class StoreUnderTest(Protocol):
    def seed(self, status: TaskStatus) -> str:
        """A task in ``status``; parked ones have QUESTIONS outstanding on TOKEN,
        working ones have QUESTIONS stored (as after an ask)."""

    def apply(self, op: Op, task_id: str) -> bool:
        """Run ``op``; True when the store accepted it."""

    def status(self, task_id: str) -> TaskStatus: ...


@dataclass
class Verdict:
    op: Op
    start: TaskStatus
    accepted: bool
    end: TaskStatus

    def problems(self) -> list[str]:
        out = []
        if self.accepted != allowed(self.op, self.start):
            verb = "allowed" if self.accepted else "refused"
            out.append(
                f"{self.op} from {self.start} was {verb}; the table says {'refuse' if self.accepted else 'allow'}"
            )
        expected = target(self.op, self.start) if self.accepted else self.start
        if self.end is not expected:
            out.append(f"{self.op} from {self.start} left the task {self.end}, not {expected}")
        return out


def verdict(store: StoreUnderTest, op: Op, start: TaskStatus) -> Verdict:
    task_id = store.seed(start)
    accepted = store.apply(op, task_id)
    return Verdict(op, start, accepted, store.status(task_id))


def covered() -> bool:
    """Every operation of the table is in the matrix (a new one must be added here)."""
    return set(TRANSITIONS) == set(Op)
