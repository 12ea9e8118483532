"""The task lifecycle as seen from the API: create, read, answer, cancel.

Every state change is a conditional write in the store; this module decides
which change to ask for and what a lost race means, never by read-then-write.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any

from .errors import InvalidCursor, TaskNotFound, TransitionRejected, WorkflowUnavailable
from .model import Outcome, TaskRecord, TaskStatus
from .ports import Clock, TaskStore, Workflow

# A concurrent tasks/update can answer the same key between our read and our
# write; a few re-reads settle it without ever blocking.
_ANSWER_ATTEMPTS = 4


def new_task_id() -> str:
    # uuid4 carries 122 random bits from os.urandom: unguessable, and a legal
    # Step Functions execution name.
    return str(uuid.uuid4())


@dataclass(frozen=True)
class Limits:
    default_ttl_ms: int
    max_ttl_ms: int
    poll_interval_ms: int

    def effective_ttl(self, requested_ms: int | None) -> int:
        if requested_ms is None or requested_ms <= 0:
            return min(self.default_ttl_ms, self.max_ttl_ms)
        return min(requested_ms, self.max_ttl_ms)


class TaskService:
    def __init__(self, store: TaskStore, workflow: Workflow, clock: Clock, limits: Limits) -> None:
        self._store = store
        self._workflow = workflow
        self._clock = clock
        self.limits = limits

    def create(
        self,
        *,
        owner: str,
        tool: str,
        arguments: dict[str, Any],
        requested_ttl_ms: int | None = None,
        input_responses: dict[str, Any] | None = None,
        progress_token: str | int | None = None,
    ) -> TaskRecord:
        now = self._clock()
        ttl = self.limits.effective_ttl(requested_ttl_ms)
        record = TaskRecord(
            task_id=new_task_id(),
            owner=owner,
            tool=tool,
            arguments=arguments,
            status=TaskStatus.WORKING,
            status_message="The operation is now in progress.",
            created_at_ms=now,
            last_updated_at_ms=now,
            ttl_ms=ttl,
            poll_interval_ms=self.limits.poll_interval_ms,
            expires_at_ms=now + ttl,
            input_responses=dict(input_responses or {}),
            progress_token=progress_token,
        )
        # Write-through: the row is durable before anyone can learn the id.
        self._store.create(record)
        try:
            self._workflow.start(record.task_id, input_wait_seconds=-(-ttl // 1000))
        except Exception as exc:
            # Never leave a row 'working' with nothing behind it.
            self._store.finish(
                record.task_id,
                status=TaskStatus.FAILED,
                outcome=Outcome.PROTOCOL_ERROR,
                result=None,
                error={"code": -32603, "message": "The task could not be started"},
                message="The task could not be started; it was never run.",
                now_ms=self._clock(),
            )
            raise WorkflowUnavailable("could not start the task's execution") from exc
        return record

    def get(self, owner: str, task_id: str) -> TaskRecord:
        record = self._store.get(task_id)
        if record is None or record.owner != owner:
            raise TaskNotFound(task_id)
        if record.expired(self._clock()):
            raise TaskNotFound(task_id, "Task has expired")
        return record

    def list(self, owner: str, cursor: str | None, limit: int = 50) -> tuple[list[TaskRecord], str | None]:
        """The owner's live tasks, newest first; expired rows are skipped like missing ones."""
        try:
            records, next_cursor = self._store.list_for_owner(owner, limit=limit, cursor=cursor)
        except ValueError as exc:
            raise InvalidCursor(str(exc)) from exc
        now = self._clock()
        return [r for r in records if r.owner == owner and not r.expired(now)], next_cursor

    def submit_input(self, owner: str, task_id: str, responses: dict[str, Any]) -> None:
        """Record answers; resume the work once every outstanding request is answered.

        Keys that are not outstanding (never asked, already answered, or sent
        after the task moved on) are ignored, which makes retries safe.
        """
        for _ in range(_ANSWER_ATTEMPTS):
            record = self.get(owner, task_id)
            if record.status is not TaskStatus.INPUT_REQUIRED or not record.task_token:
                return
            accepted = {k: v for k, v in responses.items() if k in record.input_requests}
            if not accepted:
                return
            resume = set(accepted) == set(record.input_requests)
            try:
                self._store.answer_inputs(
                    task_id,
                    accepted,
                    resume=resume,
                    task_token=record.task_token,
                    now_ms=self._clock(),
                )
            except TransitionRejected:
                continue
            if resume and not self._workflow.resume(record.task_token):
                # The execution is gone (stopped, timed out): the answers can never
                # be used, so the task cannot finish. Say so instead of hanging.
                self._store.finish(
                    task_id,
                    status=TaskStatus.FAILED,
                    outcome=Outcome.PROTOCOL_ERROR,
                    result=None,
                    error={"code": -32603, "message": "The task's execution is no longer running"},
                    message="The task's execution ended while it waited for input.",
                    now_ms=self._clock(),
                )
            return

    def cancel(self, owner: str, task_id: str) -> TaskRecord:
        """Cancel an active task and stop its work; return the task as it now is.

        A task that already ended keeps its status; the caller decides whether
        that is an error in its protocol era.
        """
        record = self.get(owner, task_id)
        if record.status.terminal:
            return record
        try:
            cancelled = self._store.cancel(task_id, "The task was cancelled by the client.", self._clock())
        except TransitionRejected:
            # It ended between our read and our write; report what it ended as.
            return self.get(owner, task_id)
        self._workflow.stop(task_id, "cancelled by client")
        return cancelled
