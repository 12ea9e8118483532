"""Two answers to one task's questions, arriving at the same moment, on the fakes.

The race: each answer reads the task, then writes. When both read before either
writes, both see two questions outstanding. If the decision to resume were taken
from that read, neither answer would resume and the task would wait forever with
no question left (issue 12, item 1). The decision belongs to the write: the one
that answers the last outstanding question moves the task back to working. Here
the interleaving is forced deterministically; tests/integration/test_concurrent_answers.py
races real threads against DynamoDB and the real state machine.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from taskgate.domain.model import NewTask, TaskStatus
from tests.fakes import World
from tests.mcp_client import Legacy

NAME = {"action": "accept", "content": {"name": "Ann"}}
COLOR = {"action": "accept", "content": {"color": "teal"}}


def _parked(world: World, owner: str = "anonymous") -> str:
    task_id: str = world.tasks.create(NewTask(owner=owner, tool="multi_input", arguments={})).task_id
    world.settle()
    assert world.store.records[task_id].status is TaskStatus.INPUT_REQUIRED
    return task_id


def _race(world: World, task_id: str, first: Callable[[], Any], second: Callable[[], Any]) -> None:
    """Run ``first``; right after its read of the task, run ``second`` to the end;
    then let ``first`` carry on with what it read (now stale)."""
    get = world.store.get
    raced = False

    def get_then_let_the_other_answer_in(wanted: str, **kwargs: Any) -> Any:
        nonlocal raced
        record = get(wanted, **kwargs)
        if wanted == task_id and not raced:
            raced = True
            second()
        return record

    world.store.get = get_then_let_the_other_answer_in  # type: ignore[method-assign]
    try:
        first()
    finally:
        world.store.get = get  # type: ignore[method-assign]
    assert raced


def _assert_resumed_and_done(world: World, task_id: str) -> None:
    row = world.store.records[task_id]
    assert row.status is TaskStatus.WORKING, (row.status, row.input_requests)
    world.settle()
    done = world.store.records[task_id]
    assert done.status is TaskStatus.COMPLETED
    assert done.result is not None
    assert done.result["content"][0]["text"] == "Hello, Ann! Your favourite colour is teal."
    assert world.store.list_active() == []  # the live-task slot is free again


def test_two_concurrent_tasks_update_calls_resume_the_task(world: World) -> None:
    task_id = _parked(world)
    mcp = world.mcp()

    def answer(key: str, value: dict[str, Any]) -> Callable[[], Any]:
        return lambda: mcp.result("tasks/update", {"taskId": task_id, "inputResponses": {key: value}})

    _race(world, task_id, answer("name", NAME), answer("color", COLOR))
    _assert_resumed_and_done(world, task_id)


def test_two_concurrent_elicitation_answers_resume_the_task(world: World, http: Any) -> None:
    """2025-11-25: an SDK answers the two elicitation/create requests of one stream at once."""
    legacy = Legacy(http)
    legacy.initialize()
    task_id = legacy.result("tools/call", {"name": "multi_input", "arguments": {}, "task": {}})["task"][
        "taskId"
    ]
    world.settle()

    def answer(key: str, value: dict[str, Any]) -> Callable[[], Any]:
        return lambda: legacy.answer(f"tg-elicit:{task_id}:{key}", value)

    _race(world, task_id, answer("name", NAME), answer("color", COLOR))
    _assert_resumed_and_done(world, task_id)


@pytest.mark.parametrize("order", ["name-first", "color-first"])
def test_an_answer_that_read_a_stale_task_still_resumes_it(world: World, order: str) -> None:
    """The stale reader's answer turns out to be the last one: it resumes, whichever
    of the two it is."""
    task_id = _parked(world)
    name = lambda: world.tasks.submit_input("anonymous", task_id, {"name": NAME})  # noqa: E731
    color = lambda: world.tasks.submit_input("anonymous", task_id, {"color": COLOR})  # noqa: E731
    first, second = (name, color) if order == "name-first" else (color, name)
    _race(world, task_id, first, second)
    _assert_resumed_and_done(world, task_id)


def test_one_answer_of_both_questions_racing_a_partial_one_resumes_once(world: World) -> None:
    task_id = _parked(world)
    resumes = world.workflow.resumed
    _race(
        world,
        task_id,
        lambda: world.tasks.submit_input("anonymous", task_id, {"name": NAME, "color": COLOR}),
        lambda: world.tasks.submit_input("anonymous", task_id, {"name": NAME}),
    )
    assert world.workflow.resumed == resumes + 1  # exactly one SendTaskSuccess
    _assert_resumed_and_done(world, task_id)
