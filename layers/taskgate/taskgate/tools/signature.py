"""What a tool function must look like, checked when ``@tool`` registers it.

A tool takes its arguments in one of two forms:

- **plain typed parameters**, as FastMCP and the MCP SDK read them:
  ``def search(query: str, ctx: ToolContext, limit: int = 10)``. The parameters (all but the
  one annotated ``ToolContext``, wherever it is, which is optional) become a pydantic model
  whose JSON Schema is the tool's ``inputSchema``: defaults, ``Optional``, ``Literal``,
  ``list[str]``, ``Annotated[…, Field(description=…)]``, nested models and enums as pydantic
  describes them, and no argument the function does not take (``additionalProperties: false``).
- **one pydantic model**: ``def search(args: SearchInput, ctx: ToolContext)``, the model's
  fields being the arguments. A function whose only argument is a pydantic model is read this
  way.

Either way taskgate parses the arguments once into that model: ``prepare``, a callable
``expected_seconds`` and every step of a task (which parses the stored arguments again) get
the same model instance; the function is then called with its own parameters.

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

from pydantic import BaseModel, ConfigDict, Field, PydanticUserError, create_model
from pydantic.fields import FieldInfo

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
class Calling:
    """How taskgate calls a tool's function with the parsed arguments (a model instance) and
    the context: its own parameters (the plain form: model field -> parameter), or the model
    itself as the first argument; the context, when the function takes one, by its name."""

    parameters: tuple[tuple[str, str], ...] | None
    context: str | None

    def __call__(self, fn: Callable[..., Any], args: BaseModel, ctx: Any) -> Any:
        passed = {self.context: ctx} if self.context is not None else {}
        if self.parameters is None:
            return fn(args, **passed)
        return fn(**{parameter: getattr(args, field) for field, parameter in self.parameters}, **passed)


@dataclass(frozen=True)
class ToolShape:
    """The models a tool function's signature declares, and how it is called."""

    input_model: type[BaseModel]
    output_model: type[BaseModel] | None
    # None: fn(args, ctx), the single-model form with the context second.
    calling: Calling | None = None


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
    model, calling = _arguments(signature, name)
    output = _output_model(signature.return_annotation, name)
    _schema(model, "validation", name, "input")
    if output is not None:
        _schema(output, "serialization", name, "output")
    if prepare is not None:
        _two_parameters(_signature(prepare, name, "its prepare function"), name, "its prepare function")
    return ToolShape(model, output, calling)


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


def _arguments(signature: inspect.Signature, name: str) -> tuple[type[BaseModel], Calling | None]:
    """The tool's arguments model and how its function is called: the single-model form when
    its one argument is a pydantic model, else its plain typed parameters."""
    for param in signature.parameters.values():
        if param.kind in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD):
            raise ToolDefinitionError(
                name,
                f"the function takes *{param.name}/**{param.name}; an MCP client calls a tool with named arguments",
                "Name each argument with a type hint (`path: str, depth: int = 1`), or take one pydantic model.",
            )
        if param.kind is inspect.Parameter.POSITIONAL_ONLY:
            raise ToolDefinitionError(
                name,
                f"its parameter {param.name!r} is positional-only; taskgate passes arguments by name",
                "Remove the `/` from the signature.",
            )
    context = _context_parameter(signature, name)
    arguments = [p for p in signature.parameters.values() if p.name != context]
    first = arguments[0] if arguments else None
    if (
        first is not None
        and inspect.isclass(first.annotation)
        and issubclass(first.annotation, BaseModel)
        and all(p.default is not inspect.Parameter.empty for p in arguments[1:])
    ):
        # The single-model form (extra parameters with defaults are left to their defaults).
        second = list(signature.parameters.values())[1:2]
        usual = context is not None and second and second[0].name == context and second[0].kind in _POSITIONAL
        return first.annotation, None if usual else Calling(None, context)
    return _plain_model(arguments, name), Calling(
        tuple((_field_name(p.name), p.name) for p in arguments), context
    )


def _context_parameter(signature: inspect.Signature, name: str) -> str | None:
    """The parameter taskgate passes the ToolContext to: the one annotated ToolContext (or Any),
    else an unannotated one named ``ctx`` or ``context``; None when the function takes none."""
    params = list(signature.parameters.values())
    annotated = [
        p
        for p in params
        if p.annotation is not inspect.Parameter.empty
        and _is_context(p.annotation)
        and p.annotation is not Any
    ]
    if len(annotated) > 1:
        raise ToolDefinitionError(
            name,
            f"{len(annotated)} parameters are annotated ToolContext ({', '.join(p.name for p in annotated)})",
            "Keep one `ctx: ToolContext`.",
        )
    if annotated:
        return annotated[0].name
    for param in params:
        if param.name in ("ctx", "context"):
            if param.annotation is inspect.Parameter.empty or param.annotation is Any:
                return param.name
            raise ToolDefinitionError(
                name,
                f"its parameter {param.name!r} is annotated {_type_name(param.annotation)}; "
                "taskgate passes a ToolContext there",
                "Annotate it `ctx: ToolContext` (from taskgate.tools), or give the argument another name.",
            )
    return None


def _field_name(parameter: str) -> str:
    # A parameter named like a BaseModel attribute (json, schema, copy, model_*) is kept
    # under another field name, with the parameter's name as its alias on the wire.
    return (
        f"arg_{parameter}" if hasattr(BaseModel, parameter) or parameter.startswith("model_") else parameter
    )


def _plain_model(arguments: list[inspect.Parameter], name: str) -> type[BaseModel]:
    """A pydantic model of the function's own parameters: the plain form's arguments."""
    fields: dict[str, Any] = {}
    for param in arguments:
        if param.annotation is inspect.Parameter.empty:
            raise ToolDefinitionError(
                name,
                f"its parameter {param.name!r} has no type hint, so its inputSchema cannot say what it takes",
                f"Annotate every argument (`{param.name}: str`, `count: int = 1`), as FastMCP and the MCP SDK "
                f"read them, or take one pydantic model: `{_example(name)}`.",
            )
        if param.name.startswith("_"):
            raise ToolDefinitionError(
                name,
                f"its parameter {param.name!r} starts with '_', which a JSON Schema property (a pydantic field) cannot",
                "Rename it without the leading underscore.",
            )
        default = param.default if param.default is not inspect.Parameter.empty else ...
        field = _field_name(param.name)
        if field != param.name and not isinstance(default, FieldInfo):
            default = Field(default, alias=param.name)
        fields[field] = (param.annotation, default)
    try:
        return create_model(
            _model_name(name),
            __config__=ConfigDict(extra="forbid", populate_by_name=True),
            **fields,
        )
    except (PydanticUserError, TypeError, ValueError) as exc:
        raise ToolDefinitionError(
            name,
            f"its parameters cannot be read as arguments ({type(exc).__name__}: {exc})",
            "Use JSON types in the hints (str, int, float, bool, lists, dicts, pydantic models, enums, Literal).",
        ) from exc


def _model_name(name: str) -> str:
    return "".join(part.capitalize() for part in re.split(r"[^A-Za-z0-9]+", name) if part) + "Arguments"


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
