"""Tools declared in JSON, without Python: each starts one job and waits for it at no compute.

A deployer names declaration files in ``TOOL_DECLARATIONS`` (template Parameter
ToolDeclarations), each ``package:file.json`` inside a tools package (the layer ships
it), and grants the jobs with the template's JobArns. A file holds::

    {"tools": [{
        "name": "load_day",
        "description": "Load one day of data through the pipeline.",
        "inputSchema": {"type": "object",
                        "properties": {"day": {"type": "string", "pattern": "^\\\\d{4}-\\\\d{2}-\\\\d{2}$"}},
                        "required": ["day"]},
        "job": {"kind": "execution", "stateMachineArn": "${PIPELINE_STATE_MACHINE_ARN}",
                "input": {"day.$": "$.day", "stageSeconds": 2}},
        "result": {"text": "Loaded {rowsLoaded} rows from {source}.", "structured.$": "$"}
    }]}

- ``inputSchema``: a flat object schema (properties of type string, integer, number,
  boolean, array or object, with description, default, enum, pattern, minLength,
  maxLength, minimum, maximum), advertised as it is and enforced.
- ``job``: ``kind`` (execution, batch, ecs, glue) and that job's fields (below). In any
  string, ``${NAME}`` is the worker's environment variable NAME (read when the tool
  runs); a key ending in ``.$`` takes its value from the arguments by JSONPath
  (``$.day``, ``$.items[0]``, ``$`` for all of them), as Step Functions' Parameters do.
  execution: stateMachineArn, input · batch: jobQueue, jobDefinition, jobName,
  parameters, containerOverrides · ecs: cluster, taskDefinition, subnets,
  securityGroups, assignPublicIp, launchType, overrides · glue: jobName, arguments.
- ``result``: how the job's output becomes the tool's result: ``text`` with ``{a.b}``
  placeholders read from the output, and/or ``structured.$``, a JSONPath into it
  (``structuredContent``). Without ``result``, the output is returned as it is.

A declaration that does not fit is refused when the tools load (the function's cold
start fails and says which, as a misspelt ToolModules does).
"""

from __future__ import annotations

import functools
import importlib.resources
import json
import os
import re
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model

from .context import ToolContext, ToolError
from .registry import Tool, ToolRegistry

if TYPE_CHECKING:
    from .jobs import Job

_TYPES: dict[str, Any] = {
    "string": str,
    "integer": int,
    "number": float,
    "boolean": bool,
    "array": list,
    "object": dict,
}
_CONSTRAINTS = {
    "pattern": "pattern",
    "minLength": "min_length",
    "maxLength": "max_length",
    "minimum": "ge",
    "maximum": "le",
}
_FIELDS: dict[str, set[str]] = {
    "execution": {"stateMachineArn", "input"},
    "batch": {"jobQueue", "jobDefinition", "jobName", "parameters", "containerOverrides"},
    "ecs": {
        "cluster",
        "taskDefinition",
        "subnets",
        "securityGroups",
        "assignPublicIp",
        "launchType",
        "overrides",
    },
    "glue": {"jobName", "arguments"},
}
_REQUIRED: dict[str, set[str]] = {
    "execution": {"stateMachineArn"},
    "batch": {"jobQueue", "jobDefinition"},
    "ecs": {"cluster", "taskDefinition", "subnets"},
    "glue": {"jobName"},
}
_PATH = re.compile(r"^\$((?:\.[A-Za-z_][A-Za-z0-9_-]*|\[\d+\])*)$")
_PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_.-]*)\}")
_ENV = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")


class DeclarationError(ValueError):
    """A declaration file that cannot be served (raised when the tools load)."""


class Declaration(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    name: str = Field(pattern=r"^[A-Za-z0-9_.-]{1,128}$")
    title: str | None = None
    description: str
    input_schema: dict[str, Any] = Field(alias="inputSchema")
    job: dict[str, Any]
    result: dict[str, Any] | None = None
    task_support: Literal["optional", "required"] = Field(default="optional", alias="taskSupport")


class DeclarationFile(BaseModel):
    model_config = ConfigDict(extra="forbid")

    tools: list[Declaration]


def path_value(path: str, data: Any) -> Any:
    """The value at a JSONPath of the simple form ``$.a.b[0]`` (KeyError when it is missing)."""
    match = _PATH.match(path)
    if match is None:
        raise DeclarationError(f"{path!r} is not a JSONPath of the form $.a.b[0]")
    value = data
    for part in re.findall(r"\.([^.\[]+)|\[(\d+)\]", match.group(1)):
        key, index = part
        if key:
            if not isinstance(value, dict) or key not in value:
                raise KeyError(key)
            value = value[key]
        else:
            if not isinstance(value, list) or int(index) >= len(value):
                raise KeyError(index)
            value = value[int(index)]
    return value


def _check_path(path: Any, where: str) -> None:
    if not isinstance(path, str) or not _PATH.match(path):
        raise DeclarationError(f"{where}: {path!r} is not a JSONPath of the form $.a.b[0]")


def _check_paths(node: Any, where: str) -> None:
    if isinstance(node, dict):
        for key, value in node.items():
            if key.endswith(".$"):
                _check_path(value, where)
            else:
                _check_paths(value, where)
    elif isinstance(node, list):
        for value in node:
            _check_paths(value, where)


def _fill(node: Any, arguments: dict[str, Any], env: dict[str, str]) -> Any:
    """``node`` with ``.$`` keys read from the arguments and ``${NAME}`` from ``env``."""
    if isinstance(node, dict):
        out: dict[str, Any] = {}
        for key, value in node.items():
            if key.endswith(".$"):
                try:
                    out[key[:-2]] = path_value(value, arguments)
                except KeyError:
                    continue  # an optional argument left out: so is the field
            else:
                out[key] = _fill(value, arguments, env)
        return out
    if isinstance(node, list):
        return [_fill(v, arguments, env) for v in node]
    if isinstance(node, str):

        def variable(match: re.Match[str]) -> str:
            name = match.group(1)
            if name not in env:
                raise ToolError(
                    f"This tool's job needs the environment variable {name}, which is not set here."
                )
            return env[name]

        return _ENV.sub(variable, node)
    return node


def input_model(name: str, schema: dict[str, Any]) -> type[BaseModel]:
    """A pydantic model enforcing a flat object schema (the declared inputSchema)."""
    if schema.get("type") != "object" or not isinstance(schema.get("properties", {}), dict):
        raise DeclarationError(f"{name}: inputSchema must be an object schema with properties")
    required = set(schema.get("required", []))
    fields: dict[str, Any] = {}
    for prop, spec in schema.get("properties", {}).items():
        kind = _TYPES.get(spec.get("type", ""))
        if kind is None:
            raise DeclarationError(f"{name}: property {prop!r} needs a type ({', '.join(_TYPES)})")
        if "enum" in spec:
            kind = Literal[tuple(spec["enum"])]
        constraints = {_CONSTRAINTS.get(k, k): v for k, v in spec.items() if k in _CONSTRAINTS}
        default = spec.get("default", ... if prop in required else None)
        annotation = kind if prop in required or "default" in spec else kind | None
        fields[prop] = (annotation, Field(default, description=spec.get("description"), **constraints))
    extra: Literal["allow", "forbid"] = (
        "forbid" if schema.get("additionalProperties", True) is False else "allow"
    )
    model: type[BaseModel] = create_model(f"{name}_input", __config__=ConfigDict(extra=extra), **fields)
    return model


def _job(kind: str, fields: dict[str, Any]) -> Job:
    from ..jobs.batch import BatchJob
    from ..jobs.ecs import EcsTask
    from ..jobs.execution import StepFunctionsExecution
    from ..jobs.glue import GlueJobRun

    if kind == "execution":
        return StepFunctionsExecution(fields["stateMachineArn"], fields.get("input"))
    if kind == "batch":
        return BatchJob(
            fields["jobQueue"],
            fields["jobDefinition"],
            fields.get("jobName"),
            fields.get("parameters", {}),
            fields.get("containerOverrides", {}),
        )
    if kind == "ecs":
        return EcsTask(
            fields["cluster"],
            fields["taskDefinition"],
            fields["subnets"],
            fields.get("securityGroups", ()),
            bool(fields.get("assignPublicIp", False)),
            fields.get("launchType", "FARGATE"),
            fields.get("overrides", {}),
        )
    return GlueJobRun(fields["jobName"], fields.get("arguments", {}))


def _render(result: dict[str, Any] | None, output: Any) -> Any:
    if result is None:
        return output if isinstance(output, (dict, str)) else json.dumps(output)
    out: dict[str, Any] = {"content": [], "isError": False}
    if "text" in result:

        def placeholder(match: re.Match[str]) -> str:
            try:
                value = path_value("$." + match.group(1), output)
            except KeyError:
                raise ToolError(
                    f"The job's output has no {match.group(1)!r} for this tool's result."
                ) from None
            return value if isinstance(value, str) else json.dumps(value)

        out["content"].append({"type": "text", "text": _PLACEHOLDER.sub(placeholder, result["text"])})
    if "structured.$" in result:
        try:
            structured = path_value(result["structured.$"], output)
        except KeyError:
            raise ToolError(f"The job's output has nothing at {result['structured.$']}.") from None
        if not isinstance(structured, dict):
            structured = {"value": structured}
        out["structuredContent"] = structured
        if "text" not in result:
            out["content"].append({"type": "text", "text": json.dumps(structured, ensure_ascii=False)})
    return out


def tool_from(declaration: Declaration) -> Tool:
    kind = declaration.job.get("kind")
    if kind not in _FIELDS:
        raise DeclarationError(f"{declaration.name}: job kind must be one of {', '.join(_FIELDS)}")
    given = {k.removesuffix(".$") for k in declaration.job if k != "kind"}
    unknown = given - _FIELDS[kind]
    if unknown:
        raise DeclarationError(f"{declaration.name}: a {kind} job has no {', '.join(sorted(unknown))}")
    missing = _REQUIRED[kind] - given
    if missing:
        raise DeclarationError(f"{declaration.name}: a {kind} job needs {', '.join(sorted(missing))}")
    _check_paths(declaration.job, declaration.name)
    if declaration.result is not None:
        if not set(declaration.result) <= {"text", "structured.$"}:
            raise DeclarationError(f"{declaration.name}: result takes text and structured.$")
        if "structured.$" in declaration.result:
            _check_path(declaration.result["structured.$"], declaration.name)
    model = input_model(declaration.name, declaration.input_schema)
    spec = {k: v for k, v in declaration.job.items() if k != "kind"}

    def run(args: BaseModel, ctx: ToolContext) -> Any:
        arguments = args.model_dump(mode="json", exclude_none=True)
        fields = _fill(spec, arguments, dict(os.environ))
        output = ctx.hand_off("job", _job(kind, fields)).output
        return _render(declaration.result, output)

    return Tool(
        name=declaration.name,
        description=declaration.description,
        input_model=model,
        fn=run,
        task_support=declaration.task_support,
        title=declaration.title,
        schema_override=declaration.input_schema,
    )


@functools.cache
def read(source: str) -> tuple[Tool, ...]:
    """The tools a declaration file (``package:file.json``, or a path) declares (read once
    per process: every root built in it serves the same tools)."""
    package, sep, name = source.partition(":")
    try:
        text = (
            (importlib.resources.files(package) / name).read_text()
            if sep
            else open(source, encoding="utf-8").read()  # noqa: SIM115
        )
        parsed = DeclarationFile.model_validate(json.loads(text))
    except (OSError, ModuleNotFoundError, ValueError) as exc:
        problem = exc.errors()[0]["msg"] if isinstance(exc, ValidationError) else str(exc)
        raise DeclarationError(f"tool declarations {source}: {problem}") from None
    return tuple(tool_from(d) for d in parsed.tools)


def declare(registry: ToolRegistry, sources: Iterable[str]) -> ToolRegistry:
    for source in sources:
        for declared in read(source):
            registry.add(declared)
    return registry
