"""A request is checked once, where the era resolves it: nothing after re-checks the
arguments' size or model, or the answers' size (a traced 2026 tools/call did each twice)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Any

import pytest

from taskgate.domain.limits import Limits
from taskgate.tools.registry import Tool
from tests.fakes import World


@pytest.fixture
def checks(monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    counted: Counter[str] = Counter()

    def spy(owner: type, name: str) -> None:
        original: Callable[..., Any] = getattr(owner, name)

        def counting(*args: Any, **kwargs: Any) -> Any:
            counted[name] += 1
            return original(*args, **kwargs)

        monkeypatch.setattr(owner, name, counting)

    for owner, name in ((Limits, "check_arguments"), (Limits, "check_answers"), (Tool, "parse")):
        spy(owner, name)
    return counted


def test_a_task_call_checks_its_arguments_and_answers_once(world: World, checks: Counter[str]) -> None:
    created = world.mcp().call("slow_compute", {"seconds": 0, "label": "once"})
    assert created["resultType"] == "task"
    assert checks == {"check_arguments": 1, "check_answers": 1, "parse": 1}


def test_a_plain_call_parses_its_arguments_once(world: World, checks: Counter[str]) -> None:
    result = world.mcp().call("greet", {"name": "Ada"}, tasks=False)
    assert "Ada" in result["content"][0]["text"]
    assert checks == {"check_arguments": 1, "check_answers": 1, "parse": 1}


def test_the_answers_of_every_round_together_stay_within_their_bound() -> None:
    world = World(max_input_response_bytes=200)
    mcp = world.mcp()
    first = mcp.call("test_input_required_result_multi_round", {}, tasks=False)
    assert first["resultType"] == "input_required"
    (key,) = first["inputRequests"]
    answer = {"action": "accept", "content": {"name": "n" * 120}}
    second = mcp.request(
        "tools/call",
        {
            "name": "test_input_required_result_multi_round",
            "arguments": {},
            "inputResponses": {key: answer},
            "requestState": first.get("requestState"),
        },
        tasks=False,
    )
    assert "result" in second, second
    (key2,) = second["result"]["inputRequests"]
    third = mcp.request(
        "tools/call",
        {
            "name": "test_input_required_result_multi_round",
            "arguments": {},
            "inputResponses": {key2: {"action": "accept", "content": {"color": "c" * 120}}},
            "requestState": second["result"]["requestState"],
        },
        tasks=False,
    )
    # Each round's own answers fit; the two rounds' together do not.
    assert third["error"]["code"] == -32602 and third["error"]["data"] == {"limit": 200}
