"""The task lifecycle as seen from the API: create, read, list, answer, cancel.

Every state change is a conditional write in the store; this module decides
which change to ask for and what a lost race means, never by read-then-write.
"""

from __future__ import annotations

import functools
import logging
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .ending import TaskEnder
from .errors import (
    DependencyFailure,
    InvalidCursor,
    ServiceUnavailable,
    TaskgateError,
    TaskNotFound,
    TooManyActiveTasks,
    TransitionRejected,
)
from .job_watch import JOB_STATUS_INTERVAL_MS, JobWatch
from .limits import Limits
from .model import NewTask, TaskRecord, TaskStatus
from .ports import Clock, TaskStore, Workflow
from .progress import ProgressClaim
from .results import ResultPart, ResultStore

if TYPE_CHECKING:
    from ..jobs.vocabulary import Jobs

logger = logging.getLogger(__name__)

# A concurrent answer can change the task between our read and our write; each
# failed conditional write means another one landed, so a few re-reads settle it.
_ANSWER_ATTEMPTS = 8


@dataclass(frozen=True)
class Cancellation:
    """What a cancel did to a task."""

    record: TaskRecord
    # False when the task had already ended: it keeps the status it ended with.
    cancelled_now: bool


def new_task_id() -> str:
    # uuid4 carries 122 random bits from os.urandom: unguessable, and a legal
    # Step Functions execution name.
    return str(uuid.uuid4())


class TaskService:
    def __init__(
        self,
        store: TaskStore,
        workflow: Workflow,
        clock: Clock,
        limits: Limits,
        results: ResultStore,
        jobs: Jobs | None = None,
        *,
        job_status_interval_ms: int = JOB_STATUS_INTERVAL_MS,
    ) -> None:
        self._store = store
        self._workflow = workflow
        self._clock = clock
        self._results = results
        self._ender = TaskEnder(store, workflow, clock, jobs)
        self._watch = JobWatch(store, jobs, clock, job_status_interval_ms)
        self.limits = limits

    def create(self, new: NewTask) -> TaskRecord:
        """A new task, durable before its execution starts. What ``new`` carries was checked
        at the edge when it says how large its arguments are (``arguments_bytes``); without
        that, they and the answers it inherits are checked here."""
        arguments_bytes = new.arguments_bytes
        if arguments_bytes is None:
            arguments_bytes = self.limits.check_arguments(new.arguments)
            # Answers carried by the call (2026: a tools/call's inputResponses) are kept
            # in the row for the task's life.
            self.limits.check_answers(new.input_responses)
        # So is the progress token.
        self.limits.check_stored_id("progressToken", new.progress_token)
        limit = self.limits.max_active_per_owner
        # Counted on the sparse active index, which is eventually consistent: a burst of
        # simultaneous creates by one owner can pass together (documented in the README).
        if limit and self._store.count_active(new.owner, limit) >= limit:
            raise TooManyActiveTasks(limit)
        now = self._clock()
        ttl = self.limits.effective_ttl(new.requested_ttl_ms)
        task_id = new.task_id or new_task_id()
        record = TaskRecord(
            task_id=task_id,
            owner=new.owner,
            tool=new.tool,
            arguments=new.arguments,
            status=TaskStatus.WORKING,
            status_message="The operation is now in progress.",
            created_at_ms=now,
            last_updated_at_ms=now,
            ttl_ms=ttl,
            retention_ms=ttl,
            poll_interval_ms=self.limits.poll_interval_ms,
            expires_at_ms=now + ttl,
            input_responses=dict(new.input_responses),
            progress_token=new.progress_token,
            client_capabilities=new.client_capabilities,
            # Written with the row: whatever machine the stack runs later, this task's
            # execution is this one (no second write; start() checks it is what it got).
            execution_arn=self._workflow.execution_for(task_id),
            log_level=new.log_level,
            watched_until_ms=now + new.watch_ms if new.watch_ms is not None else None,
        )
        self.limits.check_row(record, arguments_bytes=arguments_bytes)
        # Write-through: the row is durable before anyone can learn the id.
        self._store.create(record)
        try:
            self._workflow.start(record.task_id, input_wait_seconds=-(-ttl // 1000))
        except Exception as exc:
            # Never leave a row 'working' with nothing behind it.
            self._ender.fail(record, "The task could not be started; it was never run.")
            if isinstance(exc, TaskgateError):
                raise
            raise DependencyFailure("could not start the task's execution") from exc
        return record

    def get(self, owner: str, task_id: str, *, consistent: bool = True) -> TaskRecord:
        """The task as stored, without its result when that lives in the bucket
        (``consistent=False``: see ``TaskStore.get``); while it waits on a job, with the
        job's status as its statusMessage (read from the job's service now and then)."""
        return self._watch.refresh(self._read(owner, task_id, consistent=consistent))

    def _read(self, owner: str, task_id: str, *, consistent: bool = True) -> TaskRecord:
        record = self._store.get(task_id, consistent=consistent)
        if record is None or record.owner != owner:
            raise TaskNotFound(task_id)
        if record.expired(self._clock()):
            raise TaskNotFound(task_id, "Task has expired")
        return record

    def get_many(self, owner: str, task_ids: list[str], *, consistent: bool = False) -> dict[str, TaskRecord]:
        """The owner's live tasks among ``task_ids`` (at most 100), whole, read in one batch
        and refreshed as ``get`` refreshes them; another owner's task, an expired one and an
        unknown id are left out alike."""
        now = self._clock()
        records = self._store.get_many(task_ids, consistent=consistent, whole=True)
        return {r.task_id: self._watch.refresh(r) for r in records if r.owner == owner and not r.expired(now)}

    def with_result(self, record: TaskRecord) -> TaskRecord:
        """``record`` with its result in hand: for the paths that return one."""
        return self._results.attach(record)

    def result_part(self, owner: str, task_id: str, part: int) -> ResultPart | None:
        """Part ``part`` of the owner's finished task's result (a result too large for
        one response is read this way); None when there is no such part."""
        return self._results.read_part(self.get(owner, task_id), part)

    def list(
        self, owner: str, cursor: str | None, limit: int = 50, *, recent: Mapping[str, int] | None = None
    ) -> tuple[list[TaskRecord], str | None]:
        """The owner's live tasks, newest first; expired rows are skipped like missing ones.

        ``recent`` (first page only): tasks the caller knows it just created (id ->
        createdAt ms). The store lists from an index that may lag a create by a moment
        (DynamoDB's owner index is eventually consistent); each of these missing from the
        page although it belongs there is read from the table itself (strongly consistent)
        and put in its place."""
        try:
            records, next_cursor = self._store.list_for_owner(owner, limit=limit, cursor=cursor)
        except ValueError as exc:
            raise InvalidCursor(str(exc)) from exc
        listed = {r.task_id for r in records}
        # Newer than the page's oldest (or any, on the last page): it belongs on this page.
        floor = records[-1].created_at_ms if records and next_cursor else None
        missing = [
            task_id
            for task_id, created in (recent or {}).items()
            if task_id not in listed and (floor is None or created >= floor)
        ]
        if missing:
            records = sorted(
                [*records, *self._store.get_many(missing[:100])], key=lambda r: r.created_at_ms, reverse=True
            )
        now = self._clock()
        return [r for r in records if r.owner == owner and not r.expired(now)], next_cursor

    def take_round(self, owner: str, task_id: str, number: int, watch_ms: int | None = None) -> TaskRecord:
        """Take round ``number`` of the plain call the owner's hidden task answers: each is
        taken once (TransitionRejected for a round taken before, or a task that is missing
        or another owner's; TaskNotFound once it has expired). ``watch_ms``: its caller is
        expected back within it."""
        until = self._clock() + watch_ms if watch_ms is not None else None
        record = self._store.take_round(task_id, owner, number, until)
        if record.expired(self._clock()):
            raise TaskNotFound(task_id, "Task has expired")
        return self._watch.refresh(record)

    def submit_input(
        self, owner: str, task_id: str, responses: dict[str, Any], *, parking: str | None = None
    ) -> None:
        """Record answers; the answer that completes the outstanding questions resumes
        the work. Which answer that is, the store's conditional write decides (never
        a read made before it), so answers arriving together cannot all wait for
        each other.

        Keys that are not outstanding (never asked, already answered, or sent
        after the task moved on) are ignored, which makes retries safe. With ``parking``
        (``TaskRecord.parking``), only questions of that parking are answered: answers to
        questions the task has moved past are never taken for newer ones with the same key.
        """
        self.limits.check_answers(responses)
        for _ in range(_ANSWER_ATTEMPTS):
            record = self._read(owner, task_id)
            if record.status is not TaskStatus.INPUT_REQUIRED or not record.task_token:
                return
            if parking is not None and record.parking != parking:
                return
            accepted = {k: v for k, v in responses.items() if k in record.input_requests}
            if not accepted:
                return
            room = self.limits.check_held_answers(record, accepted)
            now = self._clock()
            try:
                resumed = self._store.answer_inputs(
                    task_id,
                    accepted,
                    task_token=record.task_token,
                    now_ms=now,
                    alive=record.kept_alive(now),
                    max_answer_bytes=room,
                    likely_last=set(accepted) == set(record.input_requests),
                )
            except TransitionRejected:
                continue  # another answer, a cancel or a new round landed: read again
            if resumed:
                self._resume(record)
            return
        raise ServiceUnavailable("the task's answers kept changing; please retry")

    def _resume(self, record: TaskRecord) -> None:
        assert record.task_token is not None
        try:
            resumed = self._workflow.resume(record.task_token)
        except Exception:
            # The answers are stored and the row says working, but the execution
            # still waits: end it rather than leave the task hanging.
            logger.exception("resume failed", extra={"taskId": record.task_id})
            self._ender.fail(record, "The task's execution could not be resumed.")
            raise
        if not resumed:
            # The execution is gone (stopped, timed out): the answers can never be used.
            self._ender.fail(record, "The task's execution ended while it waited for input.")

    def cancel(self, owner: str, task_id: str) -> Cancellation:
        """Cancel an active task and stop its work.

        A task that already ended keeps its status (``cancelled_now`` is False);
        the caller decides whether that is an error in its protocol era.
        """
        record = self._read(owner, task_id)
        if record.status.terminal:
            return Cancellation(record, cancelled_now=False)
        now = self._clock()
        message = "The task was cancelled by the client."
        try:
            cancelled = self._store.cancel(task_id, message, now, record.kept_alive(now))
        except TransitionRejected:
            # It ended between our read and our write; report what it ended as.
            return Cancellation(self._read(owner, task_id), cancelled_now=False)
        # The job it waited on, too (the row keeps which, as the cancel wrote it).
        self._ender.stop(task_id, message, record.execution_arn, cancelled.job)
        return Cancellation(cancelled, cancelled_now=True)

    def claim_progress(self, task_id: str, token: str | int, value: float) -> bool:
        """Whether progress ``value`` may be sent for ``token`` now: True once, for a value
        above every one sent for it before (domain/progress.py)."""
        return self._store.claim_progress(task_id, token, value)

    def progress_claim(self, task_id: str) -> ProgressClaim:
        """``claim_progress`` for one task: what a stream sending its progress asks."""
        return functools.partial(self.claim_progress, task_id)

    def watch(self, task_id: str, within_ms: int | None) -> bool:
        """Expect the caller of a plain call's hidden task back within ``within_ms`` (None:
        stop watching, the caller holds a handle now); False when the task has ended."""
        until = self._clock() + within_ms if within_ms is not None else None
        try:
            self._store.watch(task_id, until)
        except TransitionRejected:
            return False
        return True
