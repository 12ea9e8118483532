"""What resources, prompts and completers share: the caller they serve, the caller's
tasks as they may read them, and argument completion.

A resource or a prompt never touches DynamoDB either: it sees the caller's owner and
a read-only view of the caller's own tasks (``ctx.tasks``), nothing else.
"""

from __future__ import annotations

import enum
import inspect
import typing
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from pydantic import BaseModel

# completion/complete answers at most this many values (the schema's maxItems).
MAX_COMPLETIONS = 100


@dataclass(frozen=True)
class TaskView:
    """One of the caller's tasks, as a resource or prompt may see it."""

    task_id: str
    tool: str
    status: str
    created_at_ms: int
    # The CallToolResult of a completed task (None otherwise, or when it is too large
    # to hand over in one piece: read it through its result resource instead).
    result: dict[str, Any] | None = None


class TaskReader(Protocol):
    """The caller's own tasks, read-only. Another owner's task does not exist here."""

    def get(self, task_id: str, *, with_result: bool = False) -> TaskView | None: ...

    def recent(self, *, tool: str | None = None, limit: int = 50) -> list[TaskView]: ...


class NoTasks:
    """A reader with nothing in it (where no task store is wired)."""

    def get(self, task_id: str, *, with_result: bool = False) -> TaskView | None:
        return None

    def recent(self, *, tool: str | None = None, limit: int = 50) -> list[TaskView]:
        return []


@dataclass(frozen=True)
class CallerContext:
    """Who is asking, and their tasks."""

    owner: str
    tasks: TaskReader = field(default_factory=NoTasks)


@dataclass(frozen=True)
class CompletionContext(CallerContext):
    """A completer's view: the caller, and the arguments already chosen
    (``context.arguments`` of the request)."""

    arguments: dict[str, str] = field(default_factory=dict)


CompleterFn = Callable[[str, CompletionContext], Iterable[str]]
# A fixed list of choices, or a function of (value typed so far, context).
Completer = Sequence[str] | CompleterFn


@dataclass(frozen=True)
class Completion:
    """The values a completion offers."""

    values: list[str]
    total: int
    has_more: bool

    def to_result(self) -> dict[str, Any]:
        return {"completion": {"values": self.values, "total": self.total, "hasMore": self.has_more}}


def complete(completer: Completer | None, value: str, ctx: CompletionContext) -> Completion:
    """Run a completer: fixed choices are filtered by prefix (case-insensitive), a
    function is trusted to filter itself. At most ``MAX_COMPLETIONS`` values."""
    if completer is None:
        candidates: list[str] = []
    elif callable(completer):
        candidates = [str(v) for v in completer(value, ctx)]
    else:
        prefix = value.casefold()
        candidates = [c for c in completer if c.casefold().startswith(prefix)]
    return Completion(candidates[:MAX_COMPLETIONS], len(candidates), len(candidates) > MAX_COMPLETIONS)


def choices_of(model: type[BaseModel] | None, name: str) -> list[str] | None:
    """The fixed choices of a ``Literal`` or ``Enum`` field, which complete by themselves."""
    if model is None:
        return None
    info = next((f for n, f in model.model_fields.items() if (f.alias or n) == name), None)
    if info is None:
        return None
    annotation = info.annotation
    if typing.get_origin(annotation) is Literal:
        return [str(v) for v in typing.get_args(annotation)]
    if inspect.isclass(annotation) and issubclass(annotation, enum.Enum):
        return [str(m.value) for m in annotation]
    return None


def split_signature(fn: Callable[..., Any], what: str) -> type[BaseModel] | None:
    """``fn(args: Model, ctx)`` or ``fn(ctx)``: the arguments model, if it takes one."""
    params = list(inspect.signature(fn, eval_str=True).parameters.values())
    if not params or len(params) > 2:
        raise TypeError(f"{fn.__name__}: a {what} takes (ctx) or (args: Model, ctx)")
    model = params[0].annotation
    if len(params) == 2:
        if not (inspect.isclass(model) and issubclass(model, BaseModel)):
            raise TypeError(f"{fn.__name__}: the first parameter of a {what} must be a pydantic model")
        return model
    return None
