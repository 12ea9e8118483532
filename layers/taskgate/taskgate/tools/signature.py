"""What a tool function must look like, checked when ``@tool`` registers it.

Every mistake here used to pass registration and fail later, at a ``tools/list`` or in the
middle of a task ("Internal error while running the tool"). Now it is refused when the
module is imported (in ``make serve``, in a test, at a function's cold start), with the
tool's name, what is wrong and what to write instead.
"""

from __future__ import annotations

import functools
import inspect
import re
import types
import typing
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal, get_args, get_origin

from pydantic import BaseModel, PydanticUserError

TASK_SUPPORT = ("forbidden", "optional", "required")
# MCP 2025-11-25, "Tool names": 1 to 128 characters of these. Other characters break the
# Mcp-Name header a 2026-07-28 request routes by, and clients that show names.
_NAME = re.compile(r"[A-Za-z0-9_.-]{1,128}")
_POSITIONAL = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
# Return annotations taskgate can turn into a CallToolResult (tools/registry.py,
# to_call_tool_result), besides a pydantic model.
_RESULT_TYPES: tuple[Any, ...] = (str, dict, list, Any, object)


class ToolDefinitionError(TypeError):
    """A tool written in a way taskgate cannot serve; the message names it and says the fix."""

    def __init__(self, name: str, problem: str, fix: str) -> None:
        super().__init__(f"tool {name!r}: {problem}. {fix}")
        self.tool = name


@dataclass(frozen=True)
class ToolShape:
    input_model: type[BaseModel]
    output_model: type[BaseModel] | None


def check_tool(
    fn: Callable[..., Any], name: str, task_support: str, prepare: Callable[..., Any] | None
) -> ToolShape:
    """The tool's input and output models, or ``ToolDefinitionError``."""
    if not _NAME.fullmatch(name):
        raise ToolDefinitionError(
            name,
            "the name is not a valid MCP tool name",
            "Use 1 to 128 letters, digits, '_', '-' or '.' (@tool(name=...) or the function's name).",
        )
    if task_support not in TASK_SUPPORT:
        raise ToolDefinitionError(
            name,
            f"task_support={task_support!r} is not one of {', '.join(map(repr, TASK_SUPPORT))}",
            'Use "optional" (a task when the client asks for one), "required" or "forbidden".',
        )
    signature = _signature(fn, name)
    model = _input_model(signature, name)
    output = _output_model(signature.return_annotation, name)
    _schema(model, "validation", name, "input")
    if output is not None:
        _schema(output, "serialization", name, "output")
    if prepare is not None:
        _two_parameters(_signature(prepare, name, "its prepare function"), name, "its prepare function")
    return ToolShape(model, output)


def _signature(fn: Callable[..., Any], name: str, what: str = "the function") -> inspect.Signature:
    try:
        return inspect.signature(fn, eval_str=True)
    except (NameError, SyntaxError, TypeError) as exc:
        raise ToolDefinitionError(
            name,
            f"the type hints of {what} cannot be read ({type(exc).__name__}: {exc})",
            "Import every type its signature names at module level (not under TYPE_CHECKING): "
            "taskgate reads them when the tool is registered.",
        ) from exc


def _example(name: str) -> str:
    return f"def {name.replace('-', '_').replace('.', '_')}(args: MyInput, ctx: ToolContext)"


def _two_parameters(
    signature: inspect.Signature, name: str, what: str
) -> tuple[inspect.Parameter, inspect.Parameter]:
    """The (arguments, context) parameters: taskgate calls ``fn(args, ctx)``."""
    params = [p for p in signature.parameters.values() if p.kind in _POSITIONAL]
    if len(params) < 2:
        raise ToolDefinitionError(
            name,
            f"{what} takes {len(params)} positional parameter(s); taskgate calls it with two, "
            "the arguments and the context",
            f"Write it as `{_example(name)}` (keep ctx even if unused).",
        )
    for extra in params[2:]:
        if extra.default is inspect.Parameter.empty:
            raise ToolDefinitionError(
                name,
                f"{what} has a third parameter, {extra.name!r}, without a default; "
                "taskgate passes only the arguments and the context",
                "Move it into the input model as a field.",
            )
    return params[0], params[1]


def _input_model(signature: inspect.Signature, name: str) -> type[BaseModel]:
    what, example = "the function", _example(name)
    first, second = _two_parameters(signature, name, what)
    model = first.annotation
    if model is inspect.Parameter.empty:
        raise ToolDefinitionError(
            name,
            f"the first parameter of {what}, {first.name!r}, has no type hint",
            f"Annotate it with a pydantic model of the tool's arguments: `{example}`, "
            "where `class MyInput(BaseModel)` lists them (an empty model for none).",
        )
    if not (inspect.isclass(model) and issubclass(model, BaseModel)):
        raise ToolDefinitionError(
            name,
            f"the first parameter of {what}, {first.name!r}, is a {_type_name(model)}, not a pydantic model",
            f"Put the arguments in a model: `class MyInput(BaseModel): ...`, then `{example}`.",
        )
    context = second.annotation
    if context is not inspect.Parameter.empty and not _is_context(context):
        raise ToolDefinitionError(
            name,
            f"the second parameter of {what}, {second.name!r}, is annotated {_type_name(context)}; "
            "taskgate passes a ToolContext there",
            "Annotate it `ctx: ToolContext` (from taskgate.tools); put every argument in the input model.",
        )
    return model


def _is_context(annotation: Any) -> bool:
    from .context import ToolContext

    return annotation is Any or (inspect.isclass(annotation) and issubclass(annotation, ToolContext))


def _output_model(returns: Any, name: str) -> type[BaseModel] | None:
    """The pydantic model a tool returns (its ``outputSchema``), or None; refuses a return
    type taskgate cannot turn into a result."""
    if returns is inspect.Signature.empty:
        return None
    if inspect.isclass(returns) and issubclass(returns, BaseModel):
        return returns
    if not _servable(returns):
        raise ToolDefinitionError(
            name,
            f"it is annotated to return {_type_name(returns)}, which is not a tool result",
            "Return a str, a dict, a pydantic model (its schema becomes the tool's outputSchema) "
            "or content blocks (taskgate.tools.content: image, audio, embedded, resource_link); "
            "raise ToolError for a failure. For an async def, annotate what it returns once awaited.",
        )
    return None


def _servable(annotation: Any) -> bool:
    if annotation in _RESULT_TYPES:
        return True
    origin = get_origin(annotation)
    if origin in (dict, list):
        return True
    if origin is Literal:
        return all(isinstance(v, str) for v in get_args(annotation))
    if origin in (typing.Union, types.UnionType):
        members = [a for a in get_args(annotation) if a is not type(None)]
        # Optional[X] is refused as X | None would be: None is not a result.
        return len(members) == len(get_args(annotation)) and all(
            (inspect.isclass(a) and issubclass(a, BaseModel)) or _servable(a) for a in members
        )
    return False


@functools.cache
def model_schema(
    model: type[BaseModel], mode: Literal["validation", "serialization"] = "validation"
) -> dict[str, Any]:
    # Generating a JSON Schema is most of a tools/call's own CPU; models do not change.
    schema = model.model_json_schema(mode=mode)
    schema.pop("title", None)
    schema.setdefault("type", "object")
    schema.setdefault("properties", {})
    return schema


def _schema(
    model: type[BaseModel], mode: Literal["validation", "serialization"], name: str, kind: str
) -> None:
    """The model's JSON Schema, made now (and cached for tools/list): a field pydantic
    cannot describe (an arbitrary class) fails here, not at a client's first tools/list."""
    try:
        model_schema(model, mode)
    except PydanticUserError as exc:
        raise ToolDefinitionError(
            name,
            f"its {kind} model {model.__name__} has no JSON Schema ({exc.message})",
            "Use JSON types in the model (str, int, float, bool, lists, dicts, nested models, "
            "datetime, enums); keep other objects out of the tool's arguments and results.",
        ) from exc


def _type_name(annotation: Any) -> str:
    if annotation is None or annotation is type(None):
        return "None"
    if inspect.isclass(annotation) and get_origin(annotation) is None:
        return f"`{annotation.__name__}`"
    return f"`{str(annotation).replace('typing.', '')}`"
