"""Prompts and completion in both eras, on the fakes: typed arguments, message kinds,
the 2026 multi-round-trip prompt, and completion of prompt arguments and template
variables (fixed choices, Literal fields, owner-scoped functions)."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel

from taskgate.tools.catalog import CompletionContext, complete
from taskgate.tools.prompts import Message, Prompt, PromptContext, prompt
from tests.fakes import World
from tests.mcp_client import Legacy, Mcp

ELICITING = {"elicitation": {}}


def _meta(capabilities: dict[str, Any]) -> dict[str, Any]:
    return {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": capabilities,
    }


def _get(mcp: Mcp, params: dict[str, Any], capabilities: dict[str, Any]) -> dict[str, Any]:
    status, body = mcp.client.send("prompts/get", params, meta=_meta(capabilities))
    body["_http_status"] = status
    return body  # type: ignore[no-any-return]


def test_prompts_list_describes_every_prompt_and_its_arguments(mcp: Mcp) -> None:
    result = mcp.result("prompts/list")
    prompts = {p["name"]: p for p in result["prompts"]}
    assert list(prompts)[:5] == [
        "test_simple_prompt",
        "test_prompt_with_arguments",
        "test_prompt_with_embedded_resource",
        "test_prompt_with_image",
        "test_input_required_result_prompt",
    ]
    assert all(p["description"] for p in prompts.values())
    assert "arguments" not in prompts["test_simple_prompt"]
    assert prompts["test_prompt_with_arguments"]["arguments"] == [
        {"name": "arg1", "required": True, "description": "First test argument"},
        {"name": "arg2", "required": True, "description": "Second test argument"},
    ]
    focus = prompts["request_orders_report"]["arguments"][1]
    assert focus == {"name": "focus", "required": False, "description": "What the summary should dwell on"}
    assert (result["ttlMs"], result["cacheScope"]) == (300_000, "public")


def test_text_image_and_embedded_resource_messages(mcp: Mcp) -> None:
    simple = mcp.result("prompts/get", {"name": "test_simple_prompt"})
    assert simple["resultType"] == "complete"
    assert simple["messages"] == [
        {"role": "user", "content": {"type": "text", "text": "This is a simple prompt for testing."}}
    ]
    args = mcp.result(
        "prompts/get",
        {"name": "test_prompt_with_arguments", "arguments": {"arg1": "testValue1", "arg2": "testValue2"}},
    )
    assert (
        args["messages"][0]["content"]["text"]
        == "Prompt with arguments: arg1='testValue1', arg2='testValue2'"
    )
    embedded = mcp.result(
        "prompts/get",
        {
            "name": "test_prompt_with_embedded_resource",
            "arguments": {"resourceUri": "test://example-resource"},
        },
    )["messages"]
    assert embedded[0]["content"] == {
        "type": "resource",
        "resource": {
            "uri": "test://example-resource",
            "mimeType": "text/plain",
            "text": "Embedded resource content for testing.",
        },
    }
    image = mcp.result("prompts/get", {"name": "test_prompt_with_image"})["messages"][0]["content"]
    assert image["type"] == "image" and image["mimeType"] == "image/png" and image["data"]


def test_arguments_are_typed_by_the_model_and_checked(mcp: Mcp) -> None:
    ok = mcp.result("prompts/get", {"name": "request_orders_report", "arguments": {"year": "2023"}})
    assert "orders_report tool for 2023" in ok["messages"][0]["content"]["text"]
    assert "focusing on revenue" in ok["messages"][0]["content"]["text"]
    for arguments in ({"year": "soon"}, {"year": "1999"}, {}, {"year": "2023", "focus": "mood"}):
        body = mcp.request("prompts/get", {"name": "request_orders_report", "arguments": arguments})
        assert body["error"]["code"] == -32602, arguments
        assert body["error"]["message"] == "Invalid arguments for prompt request_orders_report"
        assert body["error"]["data"]["errors"]
    # The protocol's arguments are strings: anything else is refused before the prompt runs.
    numeric = mcp.request("prompts/get", {"name": "request_orders_report", "arguments": {"year": 2023}})
    assert numeric["error"]["code"] == -32602
    assert mcp.request("prompts/get", {"name": "no_such_prompt"})["error"]["message"] == (
        "Unknown prompt: no_such_prompt"
    )


def test_the_2025_era_serves_prompts_too(legacy: Legacy) -> None:
    listed = legacy.result("prompts/list")
    assert "ttlMs" not in listed and listed["prompts"][0]["name"] == "test_simple_prompt"
    got = legacy.result(
        "prompts/get", {"name": "test_prompt_with_arguments", "arguments": {"arg1": "a", "arg2": "b"}}
    )
    assert "resultType" not in got and got["messages"][0]["content"]["text"].endswith("arg2='b'")
    # This era has no way to ask inside prompts/get.
    asks = legacy.request("prompts/get", {"name": "test_input_required_result_prompt"})
    assert asks["error"]["code"] == -32602 and "2026-07-28" in asks["error"]["message"]


def test_a_prompt_that_asks_is_a_multi_round_trip_get(mcp: Mcp) -> None:
    first = _get(mcp, {"name": "test_input_required_result_prompt"}, ELICITING)["result"]
    assert first["resultType"] == "input_required"
    assert set(first["inputRequests"]) == {"user_context"}
    request = first["inputRequests"]["user_context"]
    assert request["method"] == "elicitation/create"
    assert request["params"]["requestedSchema"]["properties"]["context"]["type"] == "string"
    assert "ttlMs" not in first and "messages" not in first
    answer = {"user_context": {"action": "accept", "content": {"context": "test context"}}}
    second = _get(mcp, {"name": "test_input_required_result_prompt", "inputResponses": answer}, ELICITING)
    assert second["result"]["resultType"] == "complete"
    assert second["result"]["messages"][0]["content"]["text"] == "Use this context: test context"
    # A wrong key is no answer: it asks again.
    wrong = {"wrong_key": {"action": "accept", "content": {"data": "x"}}}
    again = _get(mcp, {"name": "test_input_required_result_prompt", "inputResponses": wrong}, ELICITING)
    assert again["result"]["resultType"] == "input_required"


def test_a_prompt_that_asks_needs_the_elicitation_capability(mcp: Mcp) -> None:
    body = _get(mcp, {"name": "test_input_required_result_prompt"}, {"sampling": {}})
    assert body["_http_status"] == 400
    assert body["error"]["code"] == -32021
    assert body["error"]["data"] == {"requiredCapabilities": {"elicitation": {}}}


def test_review_prompt_embeds_the_callers_own_report(world: World) -> None:
    alice, bob = world.mcp("alice"), world.mcp("bob")
    task_id = alice.call("orders_report", {"year": 2024, "orders": 200})["taskId"]
    world.settle()
    mine = alice.result("prompts/get", {"name": "review_orders_report", "arguments": {"taskId": task_id}})
    embedded = mine["messages"][0]["content"]
    assert embedded["type"] == "resource"
    assert embedded["resource"]["uri"] == f"reports://orders/{task_id}"
    assert embedded["resource"]["mimeType"] == "text/markdown"
    assert embedded["resource"]["text"].startswith("# Orders report 2024")
    theirs = bob.result("prompts/get", {"name": "review_orders_report", "arguments": {"taskId": task_id}})
    assert theirs["messages"] == [
        {
            "role": "user",
            "content": {
                "type": "text",
                "text": f"There is no finished orders report {task_id}; run orders_report first.",
            },
        }
    ]


# -- completion -----------------------------------------------------------------------


def _complete(mcp: Mcp, ref: dict[str, Any], name: str, value: str, **extra: Any) -> dict[str, Any]:
    return mcp.request(
        "completion/complete", {"ref": ref, "argument": {"name": name, "value": value}, **extra}
    )


def test_prompt_arguments_complete_from_their_choices(mcp: Mcp, legacy: Legacy) -> None:
    ref = {"type": "ref/prompt", "name": "test_prompt_with_arguments"}
    body = _complete(mcp, ref, "arg1", "test")
    assert body["result"] == {
        "resultType": "complete",
        "completion": {"values": ["test", "testValue1"], "total": 2, "hasMore": False},
    }
    # A Literal field completes by itself; matching ignores case.
    focus = _complete(mcp, {"type": "ref/prompt", "name": "request_orders_report"}, "focus", "C")
    assert focus["result"]["completion"]["values"] == ["categories"]
    years = _complete(mcp, {"type": "ref/prompt", "name": "request_orders_report"}, "year", "202")
    assert years["result"]["completion"]["values"][:2] == ["2025", "2024"]
    # An argument with nothing to offer completes to nothing.
    empty = _complete(
        mcp, {"type": "ref/prompt", "name": "test_prompt_with_embedded_resource"}, "resourceUri", ""
    )
    assert empty["result"]["completion"] == {"values": [], "total": 0, "hasMore": False}
    legacy_body = legacy.result(
        "completion/complete", {"ref": ref, "argument": {"name": "arg2", "value": ""}}
    )
    assert legacy_body == {"completion": {"values": ["testValue2"], "total": 1, "hasMore": False}}


def test_template_variables_complete_and_task_ids_are_the_callers(world: World) -> None:
    alice, bob = world.mcp("alice"), world.mcp("bob")
    fixture = _complete(alice, {"type": "ref/resource", "uri": "test://template/{id}/data"}, "id", "4")
    assert fixture["result"]["completion"]["values"] == ["456"]
    task_id = alice.call("orders_report", {"year": 2024, "orders": 200})["taskId"]
    world.settle()
    ref = {"type": "ref/resource", "uri": "reports://orders/{taskId}"}
    assert _complete(alice, ref, "taskId", "")["result"]["completion"]["values"] == [task_id]
    assert _complete(alice, ref, "taskId", task_id[:4])["result"]["completion"]["values"] == [task_id]
    assert _complete(bob, ref, "taskId", "")["result"]["completion"]["values"] == []


def test_completion_errors_are_32602(mcp: Mcp) -> None:
    unknown_prompt = _complete(mcp, {"type": "ref/prompt", "name": "nope"}, "a", "")
    assert unknown_prompt["error"]["message"] == "Unknown prompt: nope"
    unknown_arg = _complete(mcp, {"type": "ref/prompt", "name": "test_simple_prompt"}, "a", "")
    assert unknown_arg["error"]["code"] == -32602
    unknown_template = _complete(mcp, {"type": "ref/resource", "uri": "test://static-text"}, "a", "")
    assert unknown_template["error"]["message"] == "Unknown resource template: test://static-text"
    unknown_var = _complete(mcp, {"type": "ref/resource", "uri": "test://template/{id}/data"}, "x", "")
    assert unknown_var["error"]["code"] == -32602
    bad_ref = _complete(mcp, {"type": "ref/tool", "name": "greet"}, "a", "")
    assert bad_ref["error"]["code"] == -32602
    assert (
        mcp.request("completion/complete", {"ref": {"type": "ref/prompt", "name": "x"}})["error"]["code"]
        == -32602
    )


def test_completion_caps_at_100_values_and_passes_the_context() -> None:
    seen: list[dict[str, str]] = []

    def many(value: str, ctx: CompletionContext) -> list[str]:
        seen.append(ctx.arguments)
        return [f"{value}{i}" for i in range(250)]

    done = complete(many, "v", CompletionContext(owner="x", arguments={"language": "python"}))
    assert len(done.values) == 100 and done.total == 250 and done.has_more
    assert seen == [{"language": "python"}]
    assert complete(["Alpha", "beta"], "al", CompletionContext(owner="x")).values == ["Alpha"]


class Args(BaseModel):
    a: str


def test_the_decorator_checks_completers_and_signatures() -> None:
    with pytest.raises(TypeError, match="unknown arguments"):

        @prompt(complete={"b": ["x"]})
        def wrong_completer(args: Args, ctx: PromptContext) -> str:
            return ""

    with pytest.raises(TypeError, match="takes"):

        @prompt()
        def too_many(args: Args, ctx: PromptContext, extra: int) -> str:
            return ""


def test_prompt_results_of_every_shape() -> None:
    def shapes(ctx: PromptContext) -> list[Any]:
        return [
            "text",
            Message.assistant("reply"),
            {"role": "user", "content": {"type": "text", "text": "raw"}},
        ]

    p = Prompt(name="p", fn=shapes, description="d")
    assert p.get({}, PromptContext(owner="x")) == {
        "description": "d",
        "messages": [
            {"role": "user", "content": {"type": "text", "text": "text"}},
            {"role": "assistant", "content": {"type": "text", "text": "reply"}},
            {"role": "user", "content": {"type": "text", "text": "raw"}},
        ],
    }
    with pytest.raises(TypeError):
        Prompt(name="bad", fn=lambda ctx: 42).get({}, PromptContext(owner="x"))
