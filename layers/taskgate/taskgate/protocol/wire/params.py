"""Params models of the methods both eras serve: pydantic at the edge.

Strict, so nothing is coerced (a ``"60"`` is not a ttl); extra fields are kept,
because clients send ``_meta`` and fields of later revisions. Schemas are built
on first use, not at import: most cold starts serve one method.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints

# Far above any id we issue (36 characters), far below DynamoDB's 2 KB key limit.
MAX_ID_LENGTH = 256

Key = Annotated[str, StringConstraints(min_length=1, max_length=MAX_ID_LENGTH)]


class Params(BaseModel):
    model_config = ConfigDict(strict=True, extra="allow", defer_build=True, populate_by_name=True)

    meta: dict[str, Any] | None = Field(default=None, alias="_meta")


class NoParams(Params):
    pass


class TaskRef(Params):
    taskId: Key


class TaskAnswers(TaskRef):
    inputResponses: dict[Key, Any]


class Page(Params):
    cursor: str | None = None


class TaskRequest(BaseModel):
    model_config = ConfigDict(strict=True, extra="allow", defer_build=True)

    ttl: Annotated[int, Field(gt=0)] | None = None


class ToolCall(Params):
    name: str
    arguments: dict[str, Any] | None = None
    # 2025-11-25: run as a task.
    task: TaskRequest | None = None
    # 2026-07-28: answers to questions asked by an earlier round (MRTR), and the sealed
    # state that round handed out, echoed.
    inputResponses: dict[Key, Any] | None = None
    requestState: str | None = None

    def progress_token(self) -> str | int | None:
        token = (self.meta or {}).get("progressToken")
        return token if isinstance(token, (str, int)) and not isinstance(token, bool) else None


class SetLevel(Params):
    level: Literal["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"]


class Initialize(Params):
    protocolVersion: str | None = None
    capabilities: dict[str, Any] | None = None
    clientInfo: dict[str, Any] | None = None
