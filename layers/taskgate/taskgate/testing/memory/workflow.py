"""``Workflow`` as the state machine behaves, without running anything by itself."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...domain.model import Outcome, TaskStatus
from .store import MemoryTaskStore

if TYPE_CHECKING:
    pass


class MemoryWorkflow:
    """``Workflow`` as the state machine behaves, without running anything by itself.

    ``start`` queues an execution; ``Memory.settle`` runs the queued steps through the
    real worker, parks on a token when a step asks (as AwaitInput does), and queues the
    execution again when ``resume`` is called with that token. With
    ``complete_into`` set (the bench), ``start`` finishes the task at once.
    """

    def __init__(self, complete_into: MemoryTaskStore | None = None) -> None:
        self.started = 0
        self.resumed = 0
        self.stopped = 0
        self._complete_into = complete_into
        # task id -> RUNNING | SUCCEEDED | FAILED | ABORTED
        self.executions: dict[str, str] = {}
        self.stop_reasons: dict[str, str] = {}
        self.runnable: list[str] = []
        self.waiting: dict[str, str] = {}  # token -> task id
        self.heartbeats: list[str] = []
        # Set to an exception to make the next call of that name raise it.
        self.fail_next: dict[str, Exception] = {}
        # The stored execution ids Stop and Describe were given (None: a row without one).
        self.addressed: list[str | None] = []

    def _maybe_fail(self, name: str) -> None:
        exc = self.fail_next.pop(name, None)
        if exc is not None:
            raise exc

    def execution_for(self, task_id: str) -> str:
        return f"execution:{task_id}"

    def start(self, task_id: str, input_wait_seconds: int) -> str:
        self._maybe_fail("start")
        self.started += 1
        if task_id in self.executions:
            return self.execution_for(task_id)  # same name, same input: idempotent, as Step Functions is
        self.executions[task_id] = "RUNNING"
        store = self._complete_into
        if store is not None:
            record = store.records[task_id]
            store.finish(
                task_id,
                status=TaskStatus.COMPLETED,
                outcome=Outcome.SUCCESS,
                result={"content": [{"type": "text", "text": "done"}], "isError": False},
                error=None,
                message="The operation completed.",
                now_ms=record.created_at_ms,
                alive=record.kept_alive(record.created_at_ms),
            )
            self.executions[task_id] = "SUCCEEDED"
            return self.execution_for(task_id)
        self.runnable.append(task_id)
        return self.execution_for(task_id)

    def resume(self, task_token: str) -> bool:
        self._maybe_fail("resume")
        self.resumed += 1
        task_id = self.waiting.pop(task_token, None)
        if task_id is None or self.executions.get(task_id) != "RUNNING":
            return False
        self.runnable.append(task_id)
        return True

    def heartbeat(self, task_token: str) -> bool:
        self._maybe_fail("heartbeat")
        self.heartbeats.append(task_token)
        task_id = self.waiting.get(task_token)
        return task_id is not None and self.executions.get(task_id) == "RUNNING"

    def stop(self, task_id: str, reason: str, execution: str | None = None) -> None:
        self._maybe_fail("stop")
        self.stopped += 1
        self.addressed.append(execution)
        if self.executions.get(task_id) == "RUNNING":
            self.executions[task_id] = "ABORTED"
            self.stop_reasons[task_id] = reason
        self.runnable = [t for t in self.runnable if t != task_id]

    def status(self, task_id: str, execution: str | None = None) -> str | None:
        self._maybe_fail("status")
        self.addressed.append(execution)
        if self._complete_into is not None:
            return "RUNNING"
        return self.executions.get(task_id)
