"""Every operation from every status, against a store: does the store allow exactly
what the domain's transition table allows, and land where the table says?

Run on the in-memory fake (tests/unit) and on DynamoDB with the state machine's
own condition expressions (tests/integration), so the two cannot drift apart.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from taskgate.domain.errors import TransitionRejected
from taskgate.domain.model import Expiry, Outcome, TaskStatus
from taskgate.domain.progress import ProgressReport
from taskgate.domain.transitions import TRANSITIONS, Op, allowed, target
from taskgate.jobs.vocabulary import JobKind, PendingJob

ALL_STATUSES = list(TaskStatus)
CASES = [(op, status) for op in Op for status in ALL_STATUSES]
QUESTIONS = {"q1": {"method": "elicitation/create", "params": {"message": "one?"}}, "q2": {"method": "x"}}
TOKEN = "token-1"
# Active seeds wait on this job (as after a hand-off): the job operations have one to act on.
JOB = PendingJob(
    "job-1", JobKind.EXECUTION, "arn:aws:states:us-east-1:123456789012:stateMachine:m", "c", 0, 1
)


NOW = 1_800_000_000_000
ALIVE = Expiry(expires_at_ms=NOW + 60_000, ttl_ms=60_000)
ANSWERING: dict[str, Any] = {"task_token": TOKEN, "now_ms": NOW, "alive": ALIVE, "max_answer_bytes": 65_536}


def run_op(
    store: Any, op: Op, task_id: str, park: Callable[[str], bool], wait: Callable[[str], bool]
) -> bool:
    """``op`` through the TaskStore port (``park``, ``wait``: however the store under test
    parks a task, as the state machine's AwaitInput and AwaitCallback do); True when accepted."""
    try:
        if op is Op.PROGRESS:
            store.report_progress(task_id, ProgressReport("m", None, 1, (), 0), NOW, ALIVE)
        elif op is Op.ASK:
            store.ask(task_id, {"q3": {"method": "x"}}, NOW, ALIVE)
        elif op is Op.PARK:
            return park(task_id)
        elif op is Op.ANSWER:
            # Some of the outstanding questions: only recorded.
            return not store.answer_inputs(task_id, {"q1": 1}, **ANSWERING)
        elif op is Op.RESUME:
            # The last outstanding ones: the same write resumes.
            return bool(store.answer_inputs(task_id, {"q1": 1, "q2": 2}, **ANSWERING))
        elif op is Op.CHECKPOINT:
            store.save_checkpoint(task_id, {"n": 1}, NOW, ALIVE)
        elif op in (Op.COMPLETE, Op.FAIL):
            status = TaskStatus.COMPLETED if op is Op.COMPLETE else TaskStatus.FAILED
            return bool(
                store.finish(
                    task_id,
                    status=status,
                    outcome=Outcome.SUCCESS,
                    result=None,
                    error=None,
                    message=None,
                    now_ms=NOW,
                    alive=ALIVE,
                )
            )
        elif op is Op.CANCEL:
            store.cancel(task_id, "m", NOW, ALIVE)
        elif op is Op.HAND_OFF:
            job = PendingJob("job-2", JobKind.CALLBACK, "", None, NOW, NOW + 60_000)
            store.hand_off(task_id, job, {"key": "job-2"}, NOW, ALIVE)
        elif op is Op.WAIT:
            return wait(task_id)
        elif op is Op.JOB_DONE:
            store.record_job_outcome(task_id, JOB.key, {"ok": True, "output": 1}, NOW, ALIVE)
        elif op is Op.JOB_STATUS:
            store.note_job_status(task_id, JOB.key, "m", NOW, ALIVE)
    except TransitionRejected:
        return False
    return True


class StoreUnderTest(Protocol):
    store: Any  # the TaskStore itself

    def seed(self, status: TaskStatus) -> str:
        """A task in ``status``; parked ones have QUESTIONS outstanding on TOKEN,
        working ones have QUESTIONS stored (as after an ask); active ones wait on JOB."""

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


def answer_problems(under: StoreUnderTest) -> list[str]:
    """ANSWER and RESUME are one port call, told apart by the store's own write: the
    answer that leaves no question outstanding resumes, whatever the caller guessed
    from an earlier read; a key answered twice, a wrong token, or answers past the
    bound change nothing."""
    s = under.store
    now = 1_800_000_000_000
    kw: dict[str, Any] = {
        "task_token": TOKEN,
        "now_ms": now,
        "alive": Expiry(expires_at_ms=now + 60_000, ttl_ms=60_000),
        "max_answer_bytes": 1_000,
    }
    problems = []

    def refused(task_id: str, answers: dict[str, Any], **overrides: Any) -> bool:
        try:
            s.answer_inputs(task_id, answers, **{**kw, **overrides})
        except TransitionRejected:
            return True
        return False

    task_id = under.seed(TaskStatus.INPUT_REQUIRED)
    if s.answer_inputs(task_id, {"q1": "a"}, **kw, likely_last=True):
        problems.append("a partial answer guessed 'last' resumed the task")
    if under.status(task_id) is not TaskStatus.INPUT_REQUIRED:
        problems.append("a partial answer moved the task")
    if not refused(task_id, {"q1": "again"}):
        problems.append("a key answered twice was accepted")
    if not refused(task_id, {"q2": "b"}, task_token="another-token"):
        problems.append("an answer for another parking was accepted")
    if not refused(task_id, {"q2": "x" * 2_000}):
        problems.append("answers past max_answer_bytes were accepted")
    if not s.answer_inputs(task_id, {"q2": "b"}, **kw, likely_last=False):
        problems.append("the last answer guessed 'partial' did not resume the task")
    record = s.get(task_id)
    if under.status(task_id) is not TaskStatus.WORKING:
        problems.append(f"after the last answer the task is {under.status(task_id)}")
    elif record.input_requests or record.task_token or record.input_responses != {"q1": "a", "q2": "b"}:
        problems.append(f"the resumed row is {record}")
    if not refused(task_id, {"q2": "late"}):
        problems.append("an answer after the resume was accepted")
    return problems
