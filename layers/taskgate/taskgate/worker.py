"""One step of a task's work, as the state machine's RunTool state asks for it.

The step reads the task row, runs the tool with a context bound to that row,
and either records the terminal outcome (a conditional write, so cancelled
stays cancelled) or tells the state machine to park for input.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable
from typing import Any

from pydantic import ValidationError

from .domain.errors import TransitionRejected
from .domain.model import Outcome, TaskRecord, TaskStatus
from .domain.ports import BlobStore, Clock, TaskStore
from .tools.context import InputNeeded, ProtocolError, TaskCancelled, TaskYield, ToolContext
from .tools.registry import ToolRegistry

logger = logging.getLogger(__name__)

# Room left in a 400 KB DynamoDB item for the arguments and bookkeeping beside a result.
_ROW_BUDGET_BYTES = 350_000


def _done(status: TaskStatus | None, record: TaskRecord | None = None, now_ms: int = 0) -> dict[str, Any]:
    # ``status`` is what this step ended the task as (None if it ended elsewhere,
    # e.g. cancelled); ``ageMs`` is its time from creation to that end, for metrics.
    out: dict[str, Any] = {"kind": "done", "status": status.value if status else None}
    if status is not None and record is not None:
        out["ageMs"] = now_ms - record.created_at_ms
        out["owner"] = record.owner
    return out


class _StoreControl:
    def __init__(
        self,
        store: TaskStore,
        record: TaskRecord,
        clock: Clock,
        remaining_ms: Callable[[], int] | None,
        yield_margin_ms: int,
    ) -> None:
        self._store = store
        self._record = record
        self._clock = clock
        self._remaining_ms = remaining_ms
        self._yield_margin_ms = yield_margin_ms
        # Clients poll no faster than pollIntervalMs, so a message written more
        # often is never seen; each skipped write is a DynamoDB write not paid for.
        self._min_interval = record.poll_interval_ms / 1000
        self._last_write = float("-inf")

    def progress(self, message: str) -> None:
        now = time.monotonic()
        if now - self._last_write < self._min_interval:
            return
        self._last_write = now
        at = self._clock()
        try:
            self._store.report_progress(self._record.task_id, message, at, self._record.kept_alive(at))
        except TransitionRejected as exc:
            raise TaskCancelled(self._record.task_id) from exc

    def is_cancelled(self) -> bool:
        record = self._store.get(self._record.task_id)
        return record is None or record.status.terminal

    def checkpoint(self, state: Any) -> None:
        at = self._clock()
        try:
            self._store.save_checkpoint(self._record.task_id, state, at, self._record.kept_alive(at))
        except TransitionRejected as exc:
            raise TaskCancelled(self._record.task_id) from exc
        if self._remaining_ms is not None and self._remaining_ms() < self._yield_margin_ms:
            raise TaskYield(self._record.task_id)


class Worker:
    def __init__(
        self,
        store: TaskStore,
        tools: ToolRegistry,
        clock: Clock,
        *,
        blobs: BlobStore | None = None,
        max_inline_result_bytes: int = 262_144,
        max_runtime_ms: int = 0,
        yield_margin_ms: int = 60_000,
    ) -> None:
        self._store = store
        self._tools = tools
        self._clock = clock
        self._blobs = blobs
        self._max_inline = max_inline_result_bytes
        self._max_runtime_ms = max_runtime_ms
        self._yield_margin_ms = yield_margin_ms

    def run_step(self, task_id: str, remaining_ms: Callable[[], int] | None = None) -> dict[str, Any]:
        """``{"kind": "done", "status": …}``; ``{"kind": "input_required"}`` once the
        questions are stored, for the state machine to park; or ``{"kind": "continue"}``
        when the tool checkpointed with too little time left in this invocation."""
        record = self._store.get(task_id)
        if record is None or record.status is not TaskStatus.WORKING:
            return _done(None)
        if self._max_runtime_ms and self._clock() - record.created_at_ms > self._max_runtime_ms:
            return self._fail(record, -32603, "The task exceeded its maximum run time.")
        tool = self._tools.get(record.tool)
        if tool is None:
            return self._fail(record, -32602, f"Unknown tool: {record.tool}")
        ctx = ToolContext(
            task_id=task_id,
            answers=record.input_responses,
            state=record.checkpoint,
            control=_StoreControl(self._store, record, self._clock, remaining_ms, self._yield_margin_ms),
        )
        try:
            result = tool.run(record.arguments, ctx)
        except InputNeeded as need:
            at = self._clock()
            try:
                self._store.ask(task_id, need.requests, at, record.kept_alive(at))
            except TransitionRejected:
                return _done(None)  # cancelled while the tool ran: never park
            return {"kind": "input_required"}
        except TaskYield:
            return {"kind": "continue"}
        except TaskCancelled:
            return _done(None)
        except ProtocolError as exc:
            return self._finish_failed(record, exc.to_error(), f"Tool execution failed: {exc.message}")
        except ValidationError as exc:
            return self._fail(
                record, -32602, f"Invalid arguments for {record.tool}: {exc.error_count()} error(s)"
            )
        except Exception:
            # The client gets a reason, never the trace; the trace goes to our logs.
            logger.exception("tool %s raised", record.tool, extra={"taskId": task_id})
            return self._fail(record, -32603, "Internal error while running the tool")
        return self._complete(record, result)

    def _complete(self, record: TaskRecord, result: dict[str, Any]) -> dict[str, Any]:
        is_error = bool(result.get("isError"))
        encoded = json.dumps(result, separators=(",", ":"), ensure_ascii=False).encode()
        args_size = len(json.dumps(record.arguments, separators=(",", ":"), ensure_ascii=False).encode())
        inline: dict[str, Any] | None = result
        ref: str | None = None
        if len(encoded) > self._max_inline or len(encoded) + args_size > _ROW_BUDGET_BYTES:
            if self._blobs is None:
                return self._fail(
                    record,
                    -32603,
                    f"The result ({len(encoded)} bytes) is too large and no result bucket is configured",
                )
            ref = f"results/{record.task_id}.json"
            self._blobs.put(ref, encoded)
            inline = None
        now = self._clock()
        wrote = self._store.finish(
            record.task_id,
            status=TaskStatus.COMPLETED,
            outcome=Outcome.TOOL_ERROR if is_error else Outcome.SUCCESS,
            result=inline,
            error=None,
            message="The tool reported an error." if is_error else "The operation completed.",
            now_ms=now,
            alive=record.kept_alive(now),
            result_ref=ref,
        )
        if not wrote and ref is not None and self._blobs is not None:
            # Cancelled meanwhile: nobody will ever read this object.
            self._blobs.delete(ref)
        return _done(TaskStatus.COMPLETED if wrote else None, record, now)

    def _fail(self, record: TaskRecord, code: int, message: str) -> dict[str, Any]:
        return self._finish_failed(record, {"code": code, "message": message}, message)

    def _finish_failed(self, record: TaskRecord, error: dict[str, Any], message: str) -> dict[str, Any]:
        now = self._clock()
        wrote = self._store.finish(
            record.task_id,
            status=TaskStatus.FAILED,
            outcome=Outcome.PROTOCOL_ERROR,
            result=None,
            error=error,
            message=message,
            now_ms=now,
            alive=record.kept_alive(now),
        )
        return _done(TaskStatus.FAILED if wrote else None, record, now)
