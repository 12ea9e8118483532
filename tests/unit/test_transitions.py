"""The in-memory store honours the domain's transition table, operation by operation."""

from __future__ import annotations

import dataclasses

import pytest

from taskgate.domain.errors import TransitionRejected
from taskgate.domain.model import ACTIVE, TERMINAL, TaskRecord, TaskStatus
from taskgate.domain.transitions import TRANSITIONS, Op, allowed, check
from taskgate.testing.memory import MemoryTaskStore
from tests.transition_matrix import (
    CASES,
    JOB,
    NOW,
    QUESTIONS,
    TOKEN,
    answer_problems,
    covered,
    run_op,
    verdict,
)


class FakeUnderTest:
    def __init__(self) -> None:
        self.store = MemoryTaskStore()
        self._n = 0

    def seed(self, status: TaskStatus) -> str:
        self._n += 1
        record = TaskRecord(
            task_id=f"t{self._n}",
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
            input_requests=dict(QUESTIONS) if status in ACTIVE else {},
            task_token=TOKEN if status is TaskStatus.INPUT_REQUIRED else None,
            job=JOB if status in ACTIVE else None,
        )
        self.store.put(record)
        return record.task_id

    def apply(self, op: Op, task_id: str) -> bool:
        return run_op(self.store, op, task_id, self._park, self._wait)

    def _wait(self, task_id: str) -> bool:
        try:
            self.store.park_callback(task_id, JOB.key, "callback-token", NOW)
        except TransitionRejected:
            return False
        return True

    def _park(self, task_id: str) -> bool:
        try:
            self.store.park(task_id, "token-2", NOW)
        except TransitionRejected:
            return False
        return True

    def status(self, task_id: str) -> TaskStatus:
        return self.store.records[task_id].status


@pytest.mark.parametrize(("op", "start"), CASES, ids=[f"{op}-{s}" for op, s in CASES])
def test_the_fake_store_follows_the_table(op: Op, start: TaskStatus) -> None:
    assert verdict(FakeUnderTest(), op, start).problems() == []


def test_the_matrix_covers_every_operation() -> None:
    assert covered()


def test_terminal_never_changes_and_only_live_tasks_park() -> None:
    for op in Op:
        for status in TERMINAL:
            assert not allowed(op, status), (op, status)
    # A parked task parks again only when the state machine retries its own park write
    # (the first attempt may have landed before its 5xx): the new attempt's token wins.
    assert TRANSITIONS[Op.PARK].sources == {TaskStatus.WORKING, TaskStatus.INPUT_REQUIRED}
    with pytest.raises(TransitionRejected):
        check(Op.CANCEL, "t", TaskStatus.COMPLETED)


def test_the_check_catches_a_store_that_allows_too_much() -> None:
    """The matrix is not a tautology: a fake whose cancel ignores the table fails it."""

    class Lax(FakeUnderTest):
        def apply(self, op: Op, task_id: str) -> bool:
            if op is Op.CANCEL:
                record = self.store.records[task_id]
                self.store.put(dataclasses.replace(record, status=TaskStatus.CANCELLED))
                return True
            return super().apply(op, task_id)

    assert verdict(Lax(), Op.CANCEL, TaskStatus.COMPLETED).problems()


def test_the_fake_store_lets_only_the_last_answer_resume() -> None:
    assert answer_problems(FakeUnderTest()) == []
