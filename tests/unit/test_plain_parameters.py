"""Tools as Python MCP authors write them (issue 31, item 2): plain typed parameters become the
inputSchema as FastMCP 4.2.3 makes it (titles aside; tests/fastmcp_schemas.json, recorded from
FastMCP itself by tests/e2e/test_plain_parameters.py), and the function is called with its own
parameters, the arguments parsed once into the same model everywhere."""

from __future__ import annotations

import json
import pathlib
from typing import Any

import pytest
from pydantic import BaseModel

from taskgate.testing import ToolTester, accept
from taskgate.tools import Elicit, ToolContext, tool
from taskgate.tools.registry import registry
from taskgate.tools.signature import ToolDefinitionError, check_tool, model_schema
from tests import signature_examples, signature_tools  # noqa: F401 - registers the sig_ tools

RECORDED = json.loads((pathlib.Path(__file__).parents[1] / "fastmcp_schemas.json").read_text())


@pytest.mark.parametrize("fn", signature_examples.SIGNATURES, ids=lambda fn: fn.__name__)
def test_the_input_schema_is_fastmcps_for_the_same_function(fn: Any) -> None:
    shape = check_tool(fn, fn.__name__, "optional", None)
    ours = signature_examples.without_titles(model_schema(shape.input_model))
    assert RECORDED["fastmcp"] == "4.2.3"
    assert ours == RECORDED["schemas"][fn.__name__]


def _tester() -> ToolTester:
    return ToolTester(*[t for t in registry if t.name.startswith("sig_")])


@pytest.mark.parametrize(
    ("name", "arguments", "called_with"),
    [
        ("sig_defaults", {"path": "src"}, {"path": "src", "include_tests": False, "depth": 2}),
        ("sig_optional", {"name": "Ada", "nickname": None}, {"name": "Ada", "nickname": None}),
        ("sig_literal", {"mode": "slow"}, {"mode": "slow"}),
        ("sig_listed", {"tags": ["a", "b"], "limit": 1}, {"tags": ["a", "b"], "limit": 1}),
        ("sig_annotated", {"query": "q"}, {"query": "q", "top": 10}),
        (
            "sig_nested",
            {"name": "Ada", "address": {"street": "Rue"}},
            {"name": "Ada", "address": {"street": "Rue", "city": "Paris"}},
        ),
        ("sig_keyword_ctx", {"city": "Lyon"}, {"city": "Lyon", "days": 3}),
        ("sig_enumerated", {"color": "red", "shades": ["green"]}, {"color": "red", "shades": ["green"]}),
    ],
)
def test_each_is_called_with_its_own_parameters_as_a_plain_call_and_as_a_task(
    name: str, arguments: dict[str, Any], called_with: dict[str, Any]
) -> None:
    tester = _tester()
    assert json.loads(tester.call(name, arguments).text) == called_with
    run = tester.start(name, arguments)
    assert run.status == "completed" and json.loads(run.text) == called_with


def test_arguments_the_function_does_not_take_or_of_the_wrong_type_are_the_callers_error() -> None:
    tester = _tester()
    assert tester.call("sig_literal", {"mode": "fast", "speed": 3}).error["code"] == -32602
    assert tester.call("sig_literal", {"mode": "medium"}).error["code"] == -32602


SEEN: list[Any] = []


def _remember(args: Any, ctx: ToolContext) -> None:
    SEEN.append(("prepare", type(args).__name__, args.target))


@tool(
    name="plain_deploy",
    description="Deploys once a person confirms.",
    task_support="optional",
    prepare=_remember,
    expected_seconds=lambda args: SEEN.append(("expected", type(args).__name__, args.target)) or 0.0,
)
def plain_deploy(target: str, ctx: ToolContext, dry_run: bool = False) -> str:
    answer = ctx.ask("go", Elicit(message=f"Deploy {target}?", properties={"ok": {"type": "boolean"}}))
    return f"{target}: {'deployed' if answer.accepted else 'kept'} (dry run {dry_run})"


def test_prepare_expected_seconds_and_every_step_get_the_same_parsed_arguments() -> None:
    SEEN.clear()
    tool_ = registry.get("plain_deploy")
    assert tool_ is not None and tool_.expected_for(tool_.parse({"target": "web"})) == 0.0
    run = ToolTester(tool_).start("plain_deploy", {"target": "web", "dry_run": True})
    assert run.status == "input_required"
    run.answer(go=accept(ok=True))  # the second step parses the stored arguments again
    assert run.text == "web: deployed (dry run True)" and run.runs == 2
    kinds = {kind for kind, _, _ in SEEN}
    assert {"prepare", "expected"} <= kinds
    assert {(model, target) for _, model, target in SEEN} == {("PlainDeployArguments", "web")}


class Input(BaseModel):
    street: str


class Handle:
    pass


def test_the_single_model_form_keeps_working_and_wins_for_one_model_argument() -> None:
    def one_model(args: Input, ctx: ToolContext) -> str:
        return args.street

    shape = check_tool(one_model, "one_model", "optional", None)
    assert shape.input_model is Input and shape.calling is None  # fn(args, ctx), as before


def test_a_type_pydantic_cannot_describe_is_refused_with_the_fix() -> None:
    def opaque(handle: Handle, ctx: ToolContext) -> str:
        return ""

    with pytest.raises(ToolDefinitionError) as caught:
        check_tool(opaque, "opaque", "optional", None)
    assert "tool 'opaque': its parameters cannot be read as arguments" in str(caught.value)
    assert "Use JSON types in the hints" in str(caught.value)
