"""How a tool fails: in its own terms (``ToolError``, ``CheckpointTooLarge``) or as a protocol
error (``ProtocolError``)."""

from __future__ import annotations

from typing import Any


class ToolError(Exception):
    """The tool ran and failed in its own terms: a result with ``isError: true``."""


class CheckpointTooLarge(ToolError):
    """Raised by ``ctx.checkpoint`` when the state would not fit in the task's row
    (``MAX_CHECKPOINT_BYTES``, or less when the row is nearly full): nothing was
    saved. Uncaught, the tool ends with an error result that says so; a tool can
    catch it and checkpoint less, keeping bulky state in its own storage."""

    def __init__(self, size: int, limit: int) -> None:
        super().__init__(
            f"The checkpoint state is {size} bytes; the limit is {limit}. Nothing was saved: "
            "checkpoint less (keep bulky state in your own storage, keyed by ctx.task_id)."
        )
        self.size = size
        self.limit = limit


class ProtocolError(Exception):
    """The request itself failed: a JSON-RPC error (in a task, reported as a failed task).
    The protocol layer raises the same class (``protocol.errors.RpcError``)."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data

    def to_error(self) -> dict[str, Any]:
        err: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.data is not None:
            err["data"] = self.data
        return err
