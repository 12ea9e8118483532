"""Fixture tools the MCP conformance suite calls by name (the first one registered is
listed first: the suite calls it with no arguments)."""

from __future__ import annotations

import json
import time

from pydantic import BaseModel, ConfigDict, Field

from taskgate.tools import Elicit, ListRoots, ProtocolError, Sample, ToolContext, ToolError, tool
from taskgate.tools import content as c


class GreetInput(BaseModel):
    name: str = Field(default="World", description="Who to greet")


# Listed first and never a task: the suite calls the first tool with {} and a plain client.
@tool(description="Greet someone by name.", task_support="forbidden")
def greet(args: GreetInput, ctx: ToolContext) -> str:
    return f"Hello, {args.name}!"


class SlowComputeInput(BaseModel):
    seconds: float = Field(default=1, ge=0, le=3600, description="How long to work")
    label: str = Field(default="compute", description="A label echoed in the result")


# Expected to run for ``seconds``: a plain call of a long one runs as a hidden task.
@tool(
    description="Work for a number of seconds, reporting progress.",
    task_support="optional",
    expected_seconds=lambda args: args.seconds,
)
def slow_compute(args: SlowComputeInput, ctx: ToolContext) -> str:
    deadline = time.monotonic() + args.seconds
    while (left := deadline - time.monotonic()) > 0:
        done = round(args.seconds - left, 2)
        ctx.progress(f"{args.label}: {done:.1f}s of {args.seconds:g}s", progress=done, total=args.seconds)
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


# -- content types (tools-call-*) -------------------------------------------------------
# A 1x1 red PNG and a silent WAV, base64: the suite checks types and MIME types, not pixels.
PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="
WAV = "UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA="


@tool(description="Return a simple text result.", task_support="forbidden")
def test_simple_text(args: NoInput, ctx: ToolContext) -> list[c.Block]:
    return [c.text("This is a simple text response for testing.")]


@tool(description="Return an image (a 1x1 PNG).", task_support="forbidden")
def test_image_content(args: NoInput, ctx: ToolContext) -> list[c.Block]:
    return [c.image(PNG, "image/png")]


@tool(description="Return audio (a short WAV).", task_support="forbidden")
def test_audio_content(args: NoInput, ctx: ToolContext) -> list[c.Block]:
    return [c.audio(WAV, "audio/wav")]


@tool(description="Return an embedded text resource.", task_support="forbidden")
def test_embedded_resource(args: NoInput, ctx: ToolContext) -> list[c.Block]:
    return [
        c.embedded(
            "test://embedded-resource", text="This is an embedded resource content.", mime_type="text/plain"
        )
    ]


@tool(description="Return text, an image and an embedded resource together.", task_support="forbidden")
def test_multiple_content_types(args: NoInput, ctx: ToolContext) -> list[c.Block]:
    return [
        c.text("Multiple content types test:"),
        c.image(PNG, "image/png"),
        c.embedded(
            "test://mixed-content-resource", text='{"test":"data","value":123}', mime_type="application/json"
        ),
    ]


@tool(description="Return a tool error (a result with isError: true).", task_support="forbidden")
def test_error_handling(args: NoInput, ctx: ToolContext) -> str:
    raise ToolError("This tool intentionally returns an error for testing")


# -- progress and logging ---------------------------------------------------------------
@tool(description="Report progress three times (0, 50, 100 of 100), then answer.", task_support="forbidden")
def test_tool_with_progress(args: NoInput, ctx: ToolContext) -> str:
    for step, value in enumerate((0, 50, 100)):
        if step:
            time.sleep(0.05)
        ctx.progress(f"Step {step + 1} of 3", progress=value, total=100)
    return "Progress test completed"


@tool(description="Log three info messages while it runs.", task_support="forbidden")
def test_tool_with_logging(args: NoInput, ctx: ToolContext) -> str:
    for step, message in enumerate(
        ("Tool execution started", "Tool processing data", "Tool execution completed")
    ):
        if step:
            time.sleep(0.05)
        ctx.log("info", message)
    return "Tool with logging executed successfully"


@tool(
    description="Log one message: sent only to a client that asked for a log level.", task_support="forbidden"
)
def test_logging_tool(args: NoInput, ctx: ToolContext) -> str:
    ctx.log("info", "test_logging_tool ran")
    return "Logged one message"


# -- input requests: elicitation, sampling, roots ---------------------------------------
class MessageInput(BaseModel):
    message: str = Field(description="The message to show the user")


@tool(
    description="Ask the user for a username and an email address (form elicitation).",
    task_support="optional",
)
def test_elicitation(args: MessageInput, ctx: ToolContext) -> str:
    answer = ctx.ask(
        "user_info",
        Elicit(
            message=args.message,
            properties={
                "username": {"type": "string", "description": "User's response"},
                "email": {"type": "string", "description": "User's email address"},
            },
            required=["username", "email"],
        ),
    )
    return f"User response: action={answer.action}, content={json.dumps(answer.content)}"


@tool(description="Elicit a form whose fields have defaults (SEP-1034).", task_support="optional")
def test_elicitation_sep1034_defaults(args: NoInput, ctx: ToolContext) -> str:
    answer = ctx.ask(
        "defaults",
        Elicit(
            message="Please review the defaults",
            properties={
                "name": {"type": "string", "description": "Your name", "default": "John Doe"},
                "age": {"type": "integer", "description": "Your age", "default": 30},
                "score": {"type": "number", "description": "Your score", "default": 95.5},
                "status": {
                    "type": "string",
                    "description": "Your status",
                    "enum": ["active", "inactive", "pending"],
                    "default": "active",
                },
                "verified": {"type": "boolean", "description": "Verified?", "default": True},
            },
        ),
    )
    return f"Elicitation completed: action={answer.action}, content={json.dumps(answer.content)}"


@tool(description="Elicit every kind of enum field (SEP-1330).", task_support="optional")
def test_elicitation_sep1330_enums(args: NoInput, ctx: ToolContext) -> str:
    def titled(prefix: str, titles: tuple[str, ...]) -> list[dict[str, str]]:
        return [{"const": f"value{i}", "title": f"{t} {prefix}"} for i, t in enumerate(titles, 1)]

    answer = ctx.ask(
        "enums",
        Elicit(
            message="Pick some options",
            properties={
                "untitledSingle": {"type": "string", "enum": ["option1", "option2", "option3"]},
                "titledSingle": {"type": "string", "oneOf": titled("Option", ("First", "Second", "Third"))},
                "legacyEnum": {
                    "type": "string",
                    "enum": ["opt1", "opt2", "opt3"],
                    "enumNames": ["Option One", "Option Two", "Option Three"],
                },
                "untitledMulti": {
                    "type": "array",
                    "minItems": 1,
                    "maxItems": 3,
                    "items": {"type": "string", "enum": ["option1", "option2", "option3"]},
                },
                "titledMulti": {
                    "type": "array",
                    "minItems": 1,
                    "maxItems": 3,
                    "items": {"anyOf": titled("Choice", ("First", "Second", "Third"))},
                },
            },
        ),
    )
    return f"Elicitation completed: action={answer.action}, content={json.dumps(answer.content)}"


class PromptInput(BaseModel):
    prompt: str = Field(description="What to ask the client's LLM")


@tool(description="Ask the client's LLM (sampling) and return its answer.", task_support="optional")
def test_sampling(args: PromptInput, ctx: ToolContext) -> str:
    sampled = ctx.sample(args.prompt, max_tokens=100)
    return f"LLM response: {sampled.text}"


@tool(
    description="Needs the sampling capability; refused (-32021) to a client without it.",
    task_support="forbidden",
)
def test_missing_capability(args: NoInput, ctx: ToolContext) -> str:
    sampled = ctx.sample("Say 'Success'", max_tokens=10)
    return f"Success: {sampled.text}"


@tool(
    description="Ask a question on a call that streams (never a request on the stream).",
    task_support="forbidden",
)
def test_streaming_elicitation(args: NoInput, ctx: ToolContext) -> str:
    ctx.progress("Preparing the question")
    answer = ctx.ask(
        "streamed", Elicit(message="Continue?", properties={"ok": {"type": "boolean"}}, required=["ok"])
    )
    return f"Streaming elicitation: action={answer.action}"


# -- multi round-trip requests (SEP-2322) ------------------------------------------------
def _name_question(message: str = "What is your name?") -> Elicit:
    return Elicit(message=message, properties={"name": {"type": "string"}}, required=["name"])


def _confirm_question() -> Elicit:
    return Elicit(message="Please confirm", properties={"ok": {"type": "boolean"}}, required=["ok"])


@tool(description="Ask the user's name (an input_required round), then greet them.", task_support="forbidden")
def test_input_required_result_elicitation(args: NoInput, ctx: ToolContext) -> str:
    answer = ctx.ask("user_name", _name_question())
    return f"Hello, {answer.content.get('name', 'friend')}!"


@tool(description="Ask the client's LLM in an input_required round.", task_support="forbidden")
def test_input_required_result_sampling(args: NoInput, ctx: ToolContext) -> str:
    sampled = ctx.sample("What is the capital of France?", key="sample_request", max_tokens=100)
    return f"The model said: {sampled.text}"


@tool(description="Ask the client for its roots in an input_required round.", task_support="forbidden")
def test_input_required_result_list_roots(args: NoInput, ctx: ToolContext) -> str:
    roots = ctx.list_roots(key="roots_request")
    return "Roots: " + ", ".join(r.uri for r in roots)


@tool(description="Carry state between rounds in a sealed requestState.", task_support="forbidden")
def test_input_required_result_request_state(args: NoInput, ctx: ToolContext) -> str:
    if ctx.state is None:
        ctx.checkpoint({"started": True})
    answer = ctx.ask("confirm", _confirm_question())
    return f"state-ok: confirmed={answer.content.get('ok')}"


@tool(description="Ask for an elicitation, a sample and the roots in one round.", task_support="forbidden")
def test_input_required_result_multiple_inputs(args: NoInput, ctx: ToolContext) -> str:
    ctx.checkpoint({"round": "inputs"})
    got = ctx.gather(
        {
            "user_name": _name_question(),
            "greeting": Sample.prompt("Generate a greeting", max_tokens=50),
            "client_roots": ListRoots(),
        }
    )
    roots = ", ".join(r.uri for r in got["client_roots"])
    return f"{got['greeting'].text} {got['user_name'].content.get('name', '')} (roots: {roots})"


@tool(description="Ask in two rounds, each with a new requestState.", task_support="forbidden")
def test_input_required_result_multi_round(args: NoInput, ctx: ToolContext) -> str:
    if ctx.state is None:
        ctx.checkpoint({"round": 1})
    name = ctx.ask("step1", _name_question("Step 1: What is your name?")).content.get("name", "friend")
    color = ctx.ask(
        "step2",
        Elicit(
            message="Step 2: What is your favorite color?",
            properties={"color": {"type": "string"}},
            required=["color"],
        ),
    ).content.get("color", "")
    return f"Multi-round complete for {name} who likes {color}"


@tool(description="Refuse a requestState that was tampered with.", task_support="forbidden")
def test_input_required_result_tampered_state(args: NoInput, ctx: ToolContext) -> str:
    if ctx.state is None:
        ctx.checkpoint({"kind": "tamper-test"})
    ctx.ask("confirm", _confirm_question())
    return "integrity-ok: state verified"


@tool(
    description="Ask only for what the client declared (elicitation, else sampling).",
    task_support="forbidden",
)
def test_input_required_result_capabilities(args: NoInput, ctx: ToolContext) -> str:
    if ctx.supports("elicitation"):
        answer = ctx.ask(
            "elicit_input",
            Elicit(message="Elicitation input", properties={"value": {"type": "string"}}, required=["value"]),
        )
        return f"Elicited: {answer.content.get('value', '')}"
    if ctx.supports("sampling"):
        return f"Sampled: {ctx.sample('Sample request', key='sample_input', max_tokens=50).text}"
    return "The client declared neither elicitation nor sampling"
