"""Fixture tools the MCP conformance suite calls by name (the first one registered is
listed first: the suite calls it with no arguments)."""

from __future__ import annotations

import time

from pydantic import BaseModel, ConfigDict, Field

from taskgate.tools import Elicit, ProtocolError, ToolContext, ToolError, tool


class GreetInput(BaseModel):
    name: str = Field(default="World", description="Who to greet")


# Listed first and never a task: the suite calls the first tool with {} and a plain client.
@tool(description="Greet someone by name.", task_support="forbidden")
def greet(args: GreetInput, ctx: ToolContext) -> str:
    return f"Hello, {args.name}!"


class SlowComputeInput(BaseModel):
    seconds: float = Field(default=1, ge=0, le=3600, description="How long to work")
    label: str = Field(default="compute", description="A label echoed in the result")


@tool(description="Work for a number of seconds, reporting progress.", task_support="optional")
def slow_compute(args: SlowComputeInput, ctx: ToolContext) -> str:
    deadline = time.monotonic() + args.seconds
    step = 0
    while (left := deadline - time.monotonic()) > 0:
        step += 1
        ctx.progress(f"{args.label}: {args.seconds - left:.1f}s of {args.seconds:g}s")
        time.sleep(min(0.25, left))
    return f"{args.label} finished after {args.seconds:g} seconds"


class NoInput(BaseModel):
    pass


@tool(description="A job that always ends with a tool error.", task_support="required")
def failing_job(args: NoInput, ctx: ToolContext) -> str:
    raise ToolError("The job failed: simulated tool error")


@tool(description="A job that ends with a JSON-RPC error.", task_support="required")
def protocol_error_job(args: NoInput, ctx: ToolContext) -> str:
    raise ProtocolError(-32603, "Simulated protocol error during execution")


class ConfirmDeleteInput(BaseModel):
    filename: str = Field(description="The file to delete")


@tool(description="Delete a file after the user confirms.", task_support="optional")
def confirm_delete(args: ConfirmDeleteInput, ctx: ToolContext) -> str:
    answer = ctx.ask(
        "confirm_delete",
        Elicit(
            message=f"Delete {args.filename}?",
            properties={"confirm": {"type": "boolean", "description": "Delete the file"}},
            required=["confirm"],
        ),
    )
    if answer.accepted and answer.content.get("confirm") is True:
        return f"Deleted {args.filename}"
    return f"Kept {args.filename}"


@tool(description="Ask two questions at once.", task_support="optional")
def multi_input(args: NoInput, ctx: ToolContext) -> str:
    answers = ctx.ask_all(
        {
            "name": Elicit(
                message="What is your name?",
                properties={"name": {"type": "string"}},
                required=["name"],
            ),
            "color": Elicit(
                message="What is your favourite colour?",
                properties={"color": {"type": "string"}},
                required=["color"],
            ),
        }
    )
    name = answers["name"].content.get("name", "")
    color = answers["color"].content.get("color", "")
    return f"Hello, {name}! Your favourite colour is {color}."


def _ask_name(args: NoInput, ctx: ToolContext) -> None:
    ctx.ask(
        "user_name",
        Elicit(message="What is your name?", properties={"name": {"type": "string"}}, required=["name"]),
    )


@tool(
    description="Ask for a name before starting, then greet it as a task.",
    task_support="optional",
    prepare=_ask_name,
)
def test_tool_with_task(args: NoInput, ctx: ToolContext) -> str:
    answer = ctx.ask(
        "user_name",
        Elicit(message="What is your name?", properties={"name": {"type": "string"}}, required=["name"]),
    )
    return f"Hello, {answer.content.get('name', '')}!"


class EchoRegionInput(BaseModel):
    region: str = Field(
        description="Region to echo; mirrored in the Mcp-Param-Region header",
        json_schema_extra={"x-mcp-header": "Region"},
    )


@tool(description="Echo the region argument (routing-header fixture).", task_support="forbidden")
def echo_region(args: EchoRegionInput, ctx: ToolContext) -> str:
    return f"region={args.region}"


class ContactInput(BaseModel):
    # The advertised schema below carries the constraints; the model accepts its shape.
    model_config = ConfigDict(extra="allow")


JSON_SCHEMA_2020_12 = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "$defs": {
        "address": {
            "$anchor": "addressDef",
            "type": "object",
            "properties": {"street": {"type": "string"}, "city": {"type": "string"}},
        }
    },
    "properties": {
        "name": {"type": "string"},
        "address": {"$ref": "#/$defs/address"},
        "contactMethod": {"type": "string", "enum": ["phone", "email"]},
        "phone": {"type": "string"},
        "email": {"type": "string"},
    },
    "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
    "if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
    "then": {"required": ["phone"]},
    "else": {"required": ["email"]},
    "additionalProperties": False,
}


@tool(
    description="Accept a contact record (JSON Schema 2020-12 fixture).",
    task_support="forbidden",
    input_schema=JSON_SCHEMA_2020_12,
)
def json_schema_2020_12_tool(args: ContactInput, ctx: ToolContext) -> str:
    return "ok"


@tool(
    description="Close the SSE stream before answering, so the client must resume with Last-Event-ID (SEP-1699).",
    task_support="forbidden",
)
def test_reconnection(args: NoInput, ctx: ToolContext) -> str:
    ctx.close_stream()
    return "Reconnection test completed: the result came over a resumed stream."
