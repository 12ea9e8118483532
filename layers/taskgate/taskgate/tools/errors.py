"""How a tool fails: in its own terms (``ToolError``) or as a protocol error (``ProtocolError``)."""

from __future__ import annotations

from typing import Any


class ToolError(Exception):
    """The tool ran and failed in its own terms: a result with ``isError: true``."""


class ProtocolError(Exception):
    """The request itself failed: a JSON-RPC error, reported as a failed task."""

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
