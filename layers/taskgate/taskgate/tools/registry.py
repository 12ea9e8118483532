"""Tools are plain functions with a typed input model; this registry describes and runs them."""

from __future__ import annotations

import importlib
import inspect
import json
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel

from .awaiting import finish
from .context import ToolContext, ToolError
from .signature import Calling, ToolDefinitionError, check_tool, model_schema

TaskSupport = Literal["forbidden", "optional", "required"]
ToolFn = Callable[[Any, ToolContext], Any]
PrepareFn = Callable[[Any, ToolContext], None]


def to_call_tool_result(value: Any) -> dict[str, Any]:
    """What a tool returns, as a CallToolResult: text, content blocks (``tools.content``),
    a dict result, a model, or a whole CallToolResult."""
    if isinstance(value, dict) and "content" in value:
        result = dict(value)
        result.setdefault("isError", False)
        return result
    if isinstance(value, str):
        return {"content": [{"type": "text", "text": value}], "isError": False}
    if isinstance(value, list):
        if not all(isinstance(b, dict) and isinstance(b.get("type"), str) for b in value):
            raise TypeError("a tool returning a list returns content blocks (see taskgate.tools.content)")
        return {"content": list(value), "isError": False}
    if isinstance(value, BaseModel):
        data = value.model_dump(mode="json")
        return {
            "content": [{"type": "text", "text": value.model_dump_json()}],
            "structuredContent": data,
            "isError": False,
        }
    if isinstance(value, dict):
        return {
            "content": [{"type": "text", "text": json.dumps(value, ensure_ascii=False)}],
            "structuredContent": value,
            "isError": False,
        }
    raise TypeError(f"tool returned {type(value).__name__}; return str, dict or a model")


def tool_error_result(exc: ToolError) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": str(exc)}], "isError": True}


@dataclass(frozen=True)
class Tool:
    """A tool, as its decorator registered it."""

    name: str
    description: str
    input_model: type[BaseModel]
    fn: ToolFn
    task_support: TaskSupport = "optional"
    title: str | None = None
    # Questions the tool asks before its body runs. Where a task can be preceded by a
    # plain input-required round of tools/call (2026-07-28), it runs there first and the
    # task inherits the answers; wherever the tool runs (a task's step, a plain call) it
    # runs again before the body, so its questions are asked where no such round exists
    # (a 2025-11-25 task) and answered ones pass at once. It should only ask.
    prepare: PrepareFn | None = None
    # A hand-written JSON Schema to advertise instead of the model's; the model
    # still validates the arguments.
    schema_override: dict[str, Any] | None = None
    # The structured result's model (a pydantic return annotation), advertised as
    # ``outputSchema``; or a hand-written output schema.
    output_model: type[BaseModel] | None = None
    output_schema_override: dict[str, Any] | None = None
    # About how long one call runs (seconds), or a function of the parsed arguments that
    # says so. A plain call expected to run longer than the inline limit runs as a hidden
    # task (protocol/calls/plan.py); None: a quick tool, always run inline.
    expected_seconds: float | Callable[[Any], float] | None = None
    # How ``fn`` takes the parsed arguments and the context (tools/signature.py): None for
    # ``fn(args, ctx)``; a tool of plain typed parameters is called with them by name.
    calling: Calling | None = None

    def expected_for(self, args: BaseModel) -> float | None:
        """How long a call with ``args`` (its parsed arguments) is expected to run; None
        when not declared."""
        if self.expected_seconds is None:
            return None
        if callable(self.expected_seconds):
            return float(self.expected_seconds(args))
        return float(self.expected_seconds)

    def output_schema(self) -> dict[str, Any] | None:
        if self.output_schema_override is not None:
            return self.output_schema_override
        if self.output_model is not None:
            return model_schema(self.output_model, "serialization")
        return None

    def input_schema(self) -> dict[str, Any]:
        if self.schema_override is not None:
            return self.schema_override
        return model_schema(self.input_model)

    def describe(self, *, with_task_support: bool) -> dict[str, Any]:
        out: dict[str, Any] = {
            "name": self.name,
            "description": self.description,
            "inputSchema": self.input_schema(),
        }
        output = self.output_schema()
        if output is not None:
            out["outputSchema"] = output
        if self.title:
            out["title"] = self.title
        if with_task_support:
            out["execution"] = {"taskSupport": self.task_support}
        return out

    def parse(self, arguments: dict[str, Any]) -> BaseModel:
        return self.input_model.model_validate(arguments)

    def run(self, arguments: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
        """``call`` with ``arguments`` as stored (a task's step parses them again)."""
        return self.call(self.parse(arguments), ctx)

    def call(self, args: BaseModel, ctx: ToolContext) -> dict[str, Any]:
        """Run on arguments already parsed, to a CallToolResult; ToolError becomes
        ``isError: true``.

        InputNeeded, TaskCancelled and ProtocolError pass through to the caller,
        which knows whether this is a task or an inline call.
        """
        try:
            if self.prepare is not None:
                finish(self.prepare(args, ctx))
            # An async def tool's coroutine runs to its end here, on an event loop of its own.
            value = finish(self.fn(args, ctx) if self.calling is None else self.calling(self.fn, args, ctx))
            if self.output_model is not None and isinstance(value, dict) and "content" not in value:
                # A plain dict from a tool with an output model: checked against it.
                value = self.output_model.model_validate(value)
            return to_call_tool_result(value)
        except ToolError as exc:
            return tool_error_result(exc)


class ToolRegistry:
    def __init__(self) -> None:
        self._tools: dict[str, Tool] = {}

    def add(self, t: Tool) -> None:
        if t.name in self._tools and self._tools[t.name].fn is not t.fn:
            raise ValueError(
                f"tool {t.name!r} is registered twice: two functions have this name "
                "(in the modules ToolModules lists); give one another, @tool(name=...)"
            )
        self._tools[t.name] = t

    def get(self, name: str) -> Tool | None:
        return self._tools.get(name)

    def __iter__(self) -> Iterator[Tool]:
        # Registration order: deployers list their tools the way they want them shown.
        return iter(list(self._tools.values()))

    def __len__(self) -> int:
        return len(self._tools)

    def load(self, modules: Iterable[str]) -> ToolRegistry:
        """Import ``modules``, whose decorators register their tools (here, for the
        module-level ``registry``)."""
        for module in modules:
            importlib.import_module(module)
        return self


registry = ToolRegistry()


def tool(
    *,
    name: str | None = None,
    description: str | None = None,
    task_support: TaskSupport = "optional",
    title: str | None = None,
    prepare: PrepareFn | None = None,
    input_schema: dict[str, Any] | None = None,
    output_schema: dict[str, Any] | None = None,
    expected_seconds: float | Callable[[Any], float] | None = None,
) -> Callable[[ToolFn], ToolFn]:
    """Register a function (a ``def`` or an ``async def``) as an MCP tool: its typed
    parameters are the tool's arguments, ``def search(query: str, ctx: ToolContext, limit: int
    = 10)``, or one pydantic model holds them, ``def search(args: SearchInput, ctx:
    ToolContext)`` (tools/signature.py). ``ctx`` is optional. A pydantic model as
    the return annotation is the tool's ``outputSchema``: its result carries the model as
    ``structuredContent`` (and as JSON text, for clients that read only content). A tool
    written in a way taskgate cannot serve is refused here (``ToolDefinitionError``, a
    TypeError naming the tool and the fix), not when a client calls it.

    ``expected_seconds`` (a number, or a function of the parsed arguments) says how long a
    call runs: a plain call (a host that never asks for a task) of a long one runs durably
    as a hidden task, its progress streamed to the caller, instead of inside the request
    that API Gateway cuts at 30 seconds. Leave it out for quick tools.
    """

    def decorate(fn: ToolFn) -> ToolFn:
        tool_name = name or str(getattr(fn, "__name__", ""))
        shape = check_tool(fn, tool_name, task_support, prepare)
        if expected_seconds is not None:
            if task_support == "forbidden":
                raise ToolDefinitionError(
                    tool_name,
                    'expected_seconds needs a tool that can run as a task, not task_support "forbidden"',
                    'Use task_support="optional" (plain calls of it then run as hidden tasks), or drop expected_seconds.',
                )
            if not callable(expected_seconds) and not expected_seconds >= 0:
                raise ToolDefinitionError(
                    tool_name,
                    "expected_seconds is not a number of seconds",
                    "Give a number >= 0, or a function of the arguments.",
                )
        registry.add(
            Tool(
                name=tool_name,
                description=description or inspect.getdoc(fn) or "",
                input_model=shape.input_model,
                fn=fn,
                task_support=task_support,
                title=title,
                prepare=prepare,
                schema_override=input_schema,
                output_model=shape.output_model,
                output_schema_override=output_schema,
                expected_seconds=expected_seconds,
                calling=shape.calling,
            )
        )
        return fn

    return decorate
