"""One step of a task's work, as the state machine's RunTool state asks for it.

The step reads the task row, runs the tool with a context bound to that row,
and either records the terminal outcome (a conditional write, so cancelled
stays cancelled) or tells the state machine to park for input.
"""

from __future__ import annotations

import logging
from typing import Any

from pydantic import ValidationError

from .domain.errors import TransitionRejected
from .domain.model import Outcome, TaskStatus
from .domain.ports import Clock, TaskStore
from .tools.context import InputNeeded, ProtocolError, TaskCancelled, ToolContext
from .tools.registry import ToolRegistry

logger = logging.getLogger(__name__)

DONE: dict[str, Any] = {"kind": "done"}


class _StoreControl:
    def __init__(self, store: TaskStore, task_id: str, clock: Clock) -> None:
        self._store = store
        self._task_id = task_id
        self._clock = clock

    def progress(self, message: str) -> None:
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
            return DONE
        tool = self._tools.get(record.tool)
        if tool is None:
            self._fail(task_id, -32602, f"Unknown tool: {record.tool}")
            return DONE
        ctx = ToolContext(
            task_id=task_id,
            answers=record.input_responses,
            state=record.checkpoint,
            control=_StoreControl(self._store, task_id, self._clock),
        )
        try:
            result = tool.run(record.arguments, ctx)
        except InputNeeded as need:
            return {"kind": "input_required", "inputRequests": need.requests}
        except TaskCancelled:
            return DONE
        except ProtocolError as exc:
            self._finish_failed(task_id, exc.to_error(), f"Tool execution failed: {exc.message}")
            return DONE
        except ValidationError as exc:
            self._fail(task_id, -32602, f"Invalid arguments for {record.tool}: {exc.error_count()} error(s)")
            return DONE
        except Exception:
            # The client gets a reason, never the trace; the trace goes to our logs.
            logger.exception("tool %s raised", record.tool, extra={"taskId": task_id})
            self._fail(task_id, -32603, "Internal error while running the tool")
            return DONE
        is_error = bool(result.get("isError"))
        self._store.finish(
            task_id,
            status=TaskStatus.COMPLETED,
            outcome=Outcome.TOOL_ERROR if is_error else Outcome.SUCCESS,
            result=result,
            error=None,
            message="The tool reported an error." if is_error else "The operation completed.",
            now_ms=self._clock(),
        )
        return DONE

    def _fail(self, task_id: str, code: int, message: str) -> None:
        self._finish_failed(task_id, {"code": code, "message": message}, message)

    def _finish_failed(self, task_id: str, error: dict[str, Any], message: str) -> None:
        self._store.finish(
            task_id,
            status=TaskStatus.FAILED,
            outcome=Outcome.PROTOCOL_ERROR,
            result=None,
            error=error,
            message=message,
            now_ms=self._clock(),
        )
