"""Tools as people write them (issue 17, item 3): ``async def`` tools run, in a task and in a
plain call, even where the caller's thread already runs an event loop (Lambda's API); and a
tool written in a way taskgate cannot serve is refused when ``@tool`` registers it, with the
tool's name and the fix, instead of failing a client's call later. On the old main an async
tool registered and every call of it failed with "Internal error while running the tool"."""

from __future__ import annotations

import asyncio
from datetime import datetime
from typing import TYPE_CHECKING, Any

import pytest
from pydantic import BaseModel, ConfigDict

from taskgate.testing import ToolTester, accept
from taskgate.tools import ToolContext, ToolError, tool
from taskgate.tools.registry import Tool, registry
from taskgate.tools.signature import ToolDefinitionError, check_tool
from tests import fixture_tools

if TYPE_CHECKING:
    from decimal import Decimal


class In(BaseModel):
    n: int = 1


# -- async def ---------------------------------------------------------------------------


def test_an_async_tool_runs_as_a_task_with_its_question_progress_and_logs() -> None:
    run = ToolTester(fixture_tools.async_rollout).start("async_rollout", {"service": "api", "waves": 3})
    assert run.status == "input_required"
    assert run.questions["confirm"].message == "Roll out api in 3 waves?"
    run.answer(confirm=accept(ok=True))
    assert (run.status, run.text) == ("completed", "api rolled out in 3 waves")
    assert [(p.progress, p.total) for p in run.progress] == [(1, 3), (2, 3), (3, 3)]
    assert [line.message for line in run.logs][-1] == "wave 3 done"


def test_an_async_tool_runs_as_a_plain_call() -> None:
    run = ToolTester(fixture_tools.async_rollout).call("async_rollout", {"service": "db", "waves": 2})
    assert run.status == "input_required" and run.task_id is None
    run.answer(confirm=accept(ok=False))
    assert run.status == "completed" and run.is_error and run.text == "db: not confirmed"


def test_an_async_tool_runs_where_the_thread_already_runs_an_event_loop() -> None:
    # Lambda's API handles a plain call on Mangum's event loop thread: asyncio.run cannot
    # run there, so the tool's coroutine gets a thread and a loop of its own.
    async def waits(args: In, ctx: ToolContext) -> str:
        await asyncio.sleep(0)
        ctx.progress("halfway")
        return f"waited {args.n}"

    tester = ToolTester(Tool("waits", "", In, waits))

    async def inside_a_loop() -> str:
        return tester.call("waits", {"n": 2}).text

    assert asyncio.run(inside_a_loop()) == "waited 2"


def test_an_async_tools_tool_error_is_an_error_result() -> None:
    async def refuses(args: In, ctx: ToolContext) -> str:
        raise ToolError("not today")

    run = ToolTester(Tool("refuses", "", In, refuses)).start("refuses")
    assert run.status == "completed" and run.is_error and run.text == "not today"


# -- mistakes refused at registration ------------------------------------------------------


def _register(fn: Any, **options: Any) -> None:
    tool(**options)(fn)


def _refusal(fn: Any, **options: Any) -> str:
    with pytest.raises(ToolDefinitionError) as caught:
        _register(fn, **options)
    assert registry.get(options.get("name", fn.__name__)) is None  # nothing registered
    return str(caught.value)


def test_a_bad_task_support_names_the_tool_and_the_values() -> None:
    def report(args: In, ctx: ToolContext) -> str:
        return ""

    message = _refusal(report, name="def_report", task_support="requried")
    assert message.startswith("tool 'def_report': task_support='requried' is not one of")
    assert "'forbidden', 'optional', 'required'" in message


def test_an_untyped_argument_says_to_annotate_it_or_use_a_model() -> None:
    def untyped(args, ctx):  # type: ignore[no-untyped-def]
        return ""

    message = _refusal(untyped, name="def_untyped")
    assert "its parameter 'args' has no type hint" in message
    assert "`args: str`" in message and "def def_untyped(args: MyInput, ctx: ToolContext)" in message


def test_arguments_that_are_not_a_model_are_plain_typed_parameters() -> None:
    # Refused before issue 31 ("not a pydantic model"); now the plain form, as FastMCP reads it.
    def plain_dict(args: dict[str, Any], ctx: ToolContext) -> str:
        return ""

    shape = check_tool(plain_dict, "def_dict", "optional", None)
    assert shape.input_model.model_json_schema()["properties"]["args"]["type"] == "object"
    assert shape.calling is not None and shape.calling.parameters == (("args", "args"),)


def test_the_context_is_optional_in_both_forms() -> None:
    # The single-model form without ctx (refused before: "keep ctx even if unused").
    def lonely(args: In) -> str:
        return f"n={args.n}"

    run = ToolTester(
        Tool("lonely", "", In, lonely, calling=check_tool(lonely, "lonely", "optional", None).calling)
    )
    assert run.call("lonely", {"n": 3}).text == "n=3"


def test_a_context_named_ctx_of_another_type_and_star_arguments_are_refused() -> None:
    def swapped(args: In, ctx: In) -> str:
        return ""

    assert "taskgate passes a ToolContext there" in _refusal(swapped, name="def_swapped")

    def starred(*names: str) -> str:
        return ""

    assert "an MCP client calls a tool with named arguments" in _refusal(starred, name="def_starred")

    def private(_secret: str, ctx: ToolContext) -> str:
        return ""

    assert "Rename it without the leading underscore" in _refusal(private, name="def_private")


@pytest.mark.parametrize("returns", [bytes, int, datetime, set[str], None])
def test_a_return_type_that_is_not_a_result_is_refused(returns: Any) -> None:
    def fn(args: In, ctx: ToolContext) -> Any:
        return None

    fn.__annotations__["return"] = returns
    message = _refusal(fn, name="def_returns")
    assert "which is not a tool result" in message
    assert "Return a str, a dict, a pydantic model" in message


@pytest.mark.parametrize("returns", [str, dict[str, Any], list[dict[str, Any]], In, "str | In", Any])
def test_result_types_taskgate_serves_are_accepted(returns: Any) -> None:
    def fn(args: In, ctx: ToolContext) -> Any:
        return ""

    fn.__annotations__["return"] = returns
    shape = check_tool(fn, "def_ok", "optional", None)
    assert shape.input_model is In and shape.output_model == (In if returns is In else None)


class Handle:
    pass


class Opaque(BaseModel):
    model_config = ConfigDict(arbitrary_types_allowed=True)
    handle: Handle


def test_a_model_without_a_json_schema_is_refused_at_registration() -> None:
    def opaque_out(args: In, ctx: ToolContext) -> Opaque:
        return Opaque(handle=Handle())

    message = _refusal(opaque_out, name="def_opaque")
    assert "its output model Opaque has no JSON Schema" in message and "Use JSON types" in message


def test_type_hints_that_cannot_be_resolved_say_where_to_import() -> None:
    def hidden(args: In, ctx: ToolContext) -> Decimal:  # Decimal exists only for the type checker
        raise AssertionError

    message = _refusal(hidden, name="def_hidden")
    assert "cannot be read (NameError" in message and "not under TYPE_CHECKING" in message


def test_a_name_clients_cannot_route_is_refused() -> None:
    def fine(args: In, ctx: ToolContext) -> str:
        return ""

    assert "not a valid MCP tool name" in _refusal(fine, name="has space")


def test_two_tools_with_one_name_say_how_to_rename() -> None:
    with pytest.raises(ValueError, match=r"registered twice.*@tool\(name=\.\.\.\)"):
        ToolTester(Tool("twin", "", In, lambda a, c: "1"), Tool("twin", "", In, lambda a, c: "2"))


def test_async_resources_and_prompts_are_awaited_too() -> None:
    from taskgate.tools.prompts import Prompt, PromptContext
    from taskgate.tools.resources import Resource, ResourceContext

    async def changelog(ctx: ResourceContext) -> str:
        await asyncio.sleep(0)
        return f"changes for {ctx.owner}"

    async def review(ctx: PromptContext) -> str:
        await asyncio.sleep(0)
        return "Review this."

    read = Resource("docs://changelog", "changelog", changelog).read(
        "docs://changelog", ResourceContext("ann")
    )
    assert read[0]["text"] == "changes for ann"
    got = Prompt("review", review).get({}, PromptContext("ann"))
    assert got["messages"][0]["content"] == {"type": "text", "text": "Review this."}
