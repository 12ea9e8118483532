"""Domain pieces with no AWS in them: limits, ids, time format, the tool context and registry."""

from __future__ import annotations

import uuid

import pytest
from pydantic import BaseModel

from taskgate.clock import iso_from_ms, ms_from_iso
from taskgate.domain.limits import Limits
from taskgate.domain.service import new_task_id
from taskgate.tools import Elicit, ToolContext, ToolError, tool
from taskgate.tools.context import Answer, InputNeeded
from taskgate.tools.registry import ToolRegistry, to_call_tool_result, tool_error_result


def test_effective_ttl_is_capped_and_defaulted() -> None:
    limits = Limits(
        default_ttl_ms=60_000,
        max_ttl_ms=120_000,
        poll_interval_ms=500,
        max_active_per_owner=0,
        max_argument_bytes=1000,
        max_input_response_bytes=1000,
        max_checkpoint_bytes=1000,
    )
    assert limits.effective_ttl(None) == 60_000
    assert limits.effective_ttl(0) == 60_000
    assert limits.effective_ttl(90_000) == 90_000
    assert limits.effective_ttl(10**12) == 120_000


def test_task_ids_are_random_uuid4() -> None:
    ids = {new_task_id() for _ in range(2000)}
    assert len(ids) == 2000
    for task_id in list(ids)[:50]:
        assert uuid.UUID(task_id).version == 4


def test_timestamps_round_trip_in_both_writers_formats() -> None:
    assert iso_from_ms(1_764_412_800_123) == "2025-11-29T10:40:00.123Z"
    assert ms_from_iso("2025-11-29T10:40:00.123Z") == 1_764_412_800_123
    # Step Functions (and moto) write $$.State.EnteredTime in their own spelling.
    assert ms_from_iso("2025-11-29T10:40:00.123456+00:00") == 1_764_412_800_123


def test_ask_raises_for_unanswered_questions_only() -> None:
    q = Elicit(message="Name?", properties={"name": {"type": "string"}}, required=["name"])
    ctx = ToolContext(answers={"a": {"action": "accept", "content": {"name": "Ann"}}})
    assert ctx.ask("a", q) == Answer(action="accept", content={"name": "Ann"})
    with pytest.raises(InputNeeded) as need:
        ctx.ask_all({"a": q, "b": q})
    assert set(need.value.requests) == {"b"}
    request = need.value.requests["b"]
    assert request["method"] == "elicitation/create"
    assert request["params"]["requestedSchema"] == {
        "type": "object",
        "properties": {"name": {"type": "string"}},
        "required": ["name"],
    }


def test_declined_answers_are_not_accepted() -> None:
    assert Answer.parse({"action": "decline"}).accepted is False
    assert Answer.parse({"action": "accept", "content": {"x": 1}}).content == {"x": 1}


def test_tool_results_become_call_tool_results() -> None:
    class Out(BaseModel):
        n: int

    assert to_call_tool_result("hi") == {"content": [{"type": "text", "text": "hi"}], "isError": False}
    structured = to_call_tool_result(Out(n=3))
    assert structured["structuredContent"] == {"n": 3} and structured["isError"] is False
    assert to_call_tool_result({"content": [], "isError": True})["isError"] is True
    assert tool_error_result(ToolError("nope")) == {
        "content": [{"type": "text", "text": "nope"}],
        "isError": True,
    }
    with pytest.raises(TypeError):
        to_call_tool_result(42)


def test_a_tool_needs_typed_arguments() -> None:
    with pytest.raises(TypeError, match="has no type hint"):

        @tool(name="untyped_tool_for_test")
        def untyped(args, ctx: ToolContext) -> str:  # type: ignore[no-untyped-def]
            return ""


def test_registry_refuses_two_tools_with_one_name() -> None:
    from taskgate.tools.registry import Tool

    class In(BaseModel):
        pass

    reg = ToolRegistry()
    reg.add(Tool(name="t", description="", input_model=In, fn=lambda a, c: "1"))
    with pytest.raises(ValueError):
        reg.add(Tool(name="t", description="", input_model=In, fn=lambda a, c: "2"))
