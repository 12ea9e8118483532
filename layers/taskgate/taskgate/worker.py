"""One step of a task's work, as the state machine's RunTool state asks for it.

The step reads the task row, runs the tool with a context bound to that row,
and either records the terminal outcome (a conditional write, so cancelled
stays cancelled) or tells the state machine to park for input.
"""

from __future__ import annotations

import logging
import time
from typing import Any

from pydantic import ValidationError

from .domain.errors import TransitionRejected
from .domain.model import Outcome, TaskStatus
from .domain.ports import Clock, TaskStore
from .tools.context import InputNeeded, ProtocolError, TaskCancelled, ToolContext
from .tools.registry import ToolRegistry

logger = logging.getLogger(__name__)


def _done(status: TaskStatus | None) -> dict[str, Any]:
    # ``status`` is what this step ended the task as (None if it ended elsewhere,
    # e.g. cancelled); the state machine reads only ``kind``.
    return {"kind": "done", "status": status.value if status else None}


class _StoreControl:
    def __init__(self, store: TaskStore, task_id: str, clock: Clock, min_interval_ms: int) -> None:
        self._store = store
        self._task_id = task_id
        self._clock = clock
        # Clients poll no faster than pollIntervalMs, so a message written more
        # often is never seen; each skipped write is a DynamoDB write not paid for.
        self._min_interval = min_interval_ms / 1000
        self._last_write = float("-inf")

    def progress(self, message: str) -> None:
        now = time.monotonic()
        if now - self._last_write < self._min_interval:
            return
        self._last_write = now
        try:
            self._store.report_progress(self._task_id, message, self._clock())
        except TransitionRejected as exc:
            raise TaskCancelled(self._task_id) from exc

    def is_cancelled(self) -> bool:
        record = self._store.get(self._task_id)
        return record is None or record.status.terminal

    def checkpoint(self, state: Any) -> None:
        try:
            self._store.save_checkpoint(self._task_id, state, self._clock())
        except TransitionRejected as exc:
            raise TaskCancelled(self._task_id) from exc


class Worker:
    def __init__(self, store: TaskStore, tools: ToolRegistry, clock: Clock) -> None:
        self._store = store
        self._tools = tools
        self._clock = clock

    def run_step(self, task_id: str) -> dict[str, Any]:
        """Return ``{"kind": "done"}`` or ``{"kind": "input_required", "inputRequests": …}``."""
        record = self._store.get(task_id)
        if record is None or record.status is not TaskStatus.WORKING:
            return _done(None)
        tool = self._tools.get(record.tool)
        if tool is None:
            return self._fail(task_id, -32602, f"Unknown tool: {record.tool}")
        ctx = ToolContext(
            task_id=task_id,
            answers=record.input_responses,
            state=record.checkpoint,
            control=_StoreControl(self._store, task_id, self._clock, record.poll_interval_ms),
        )
        try:
            result = tool.run(record.arguments, ctx)
        except InputNeeded as need:
            return {"kind": "input_required", "inputRequests": need.requests}
        except TaskCancelled:
            return _done(None)
        except ProtocolError as exc:
            return self._finish_failed(task_id, exc.to_error(), f"Tool execution failed: {exc.message}")
        except ValidationError as exc:
            return self._fail(
                task_id, -32602, f"Invalid arguments for {record.tool}: {exc.error_count()} error(s)"
            )
        except Exception:
            # The client gets a reason, never the trace; the trace goes to our logs.
            logger.exception("tool %s raised", record.tool, extra={"taskId": task_id})
            return self._fail(task_id, -32603, "Internal error while running the tool")
        is_error = bool(result.get("isError"))
        wrote = self._store.finish(
            task_id,
            status=TaskStatus.COMPLETED,
            outcome=Outcome.TOOL_ERROR if is_error else Outcome.SUCCESS,
            result=result,
            error=None,
            message="The tool reported an error." if is_error else "The operation completed.",
            now_ms=self._clock(),
        )
        return _done(TaskStatus.COMPLETED if wrote else None)

    def _fail(self, task_id: str, code: int, message: str) -> dict[str, Any]:
        return self._finish_failed(task_id, {"code": code, "message": message}, message)

    def _finish_failed(self, task_id: str, error: dict[str, Any], message: str) -> dict[str, Any]:
        wrote = self._store.finish(
            task_id,
            status=TaskStatus.FAILED,
            outcome=Outcome.PROTOCOL_ERROR,
            result=None,
            error=error,
            message=message,
            now_ms=self._clock(),
        )
        return _done(TaskStatus.FAILED if wrote else None)
