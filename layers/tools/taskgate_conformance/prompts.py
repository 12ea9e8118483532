"""Fixture prompts the MCP conformance suite gets by name (its prompts-* scenarios,
completion-complete, and input-required-result-non-tool-request)."""

from __future__ import annotations

from pydantic import BaseModel, Field

from taskgate.tools import Elicit
from taskgate.tools.prompts import Message, PromptContext, embedded_resource_block, image_block, prompt

from .resources import PNG_BASE64


@prompt(title="Simple Test Prompt", description="A simple prompt without arguments")
def test_simple_prompt(ctx: PromptContext) -> str:
    return "This is a simple prompt for testing."


class TwoArguments(BaseModel):
    arg1: str = Field(description="First test argument")
    arg2: str = Field(description="Second test argument")


@prompt(
    title="Prompt With Arguments",
    description="A prompt with required arguments",
    complete={"arg1": ["test", "testValue1", "other"], "arg2": ["testValue2"]},
)
def test_prompt_with_arguments(args: TwoArguments, ctx: PromptContext) -> str:
    return f"Prompt with arguments: arg1='{args.arg1}', arg2='{args.arg2}'"


class EmbedArguments(BaseModel):
    resourceUri: str = Field(description="URI of the resource to embed")


@prompt(title="Prompt With Embedded Resource", description="A prompt that includes an embedded resource")
def test_prompt_with_embedded_resource(args: EmbedArguments, ctx: PromptContext) -> list[Message]:
    return [
        Message.user(
            embedded_resource_block(
                args.resourceUri, text="Embedded resource content for testing.", mime_type="text/plain"
            )
        ),
        Message.user("Please process the embedded resource above."),
    ]


@prompt(title="Prompt With Image", description="A prompt that includes image content")
def test_prompt_with_image(ctx: PromptContext) -> list[Message]:
    return [
        Message.user(image_block(PNG_BASE64, "image/png")),
        Message.user("Please analyze the image above."),
    ]


@prompt(
    title="Prompt That Asks First",
    description="Asks the user for context (a multi-round-trip prompts/get), then builds the prompt",
)
def test_input_required_result_prompt(ctx: PromptContext) -> str:
    answer = ctx.ask(
        "user_context",
        Elicit(
            message="What context should the prompt use?",
            properties={"context": {"type": "string", "description": "Context for the prompt"}},
            required=["context"],
        ),
    )
    return f"Use this context: {answer.content.get('context', '')}"
