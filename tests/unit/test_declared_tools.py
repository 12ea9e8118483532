"""Tools declared in JSON (taskgate.tools.declared): no Python, one job each, the IAM in
the template. The example file ships in taskgate_tools; bad declarations fail the load."""

from __future__ import annotations

import json
from typing import Any

import pytest

from taskgate.tools.declared import Declaration, DeclarationError, read, tool_from
from tests.fakes import World

PIPELINE = "arn:aws:states:us-east-1:123456789012:stateMachine:stack-pipeline"


@pytest.fixture
def world(monkeypatch: pytest.MonkeyPatch) -> World:
    monkeypatch.setenv("PIPELINE_STATE_MACHINE_ARN", PIPELINE)
    return World(tool_declarations=("taskgate_tools:jobs.json",))


def declared(**overrides: Any) -> Declaration:
    base: dict[str, Any] = {
        "name": "t",
        "description": "d",
        "inputSchema": {"type": "object", "properties": {"day": {"type": "string"}}, "required": ["day"]},
        "job": {"kind": "glue", "jobName": "nightly", "arguments": {"--day.$": "$.day"}},
    }
    return Declaration.model_validate({**base, **overrides})


def test_the_example_declaration_is_served_with_its_own_schema(world: World) -> None:
    import importlib.resources

    on_file = json.loads((importlib.resources.files("taskgate_tools") / "jobs.json").read_text())["tools"][0]
    tools = {t["name"]: t for t in world.mcp().result("tools/list")["tools"]}
    assert tools["load_source"]["inputSchema"] == on_file["inputSchema"]
    assert tools["load_source"]["description"] == on_file["description"]


def test_a_declared_tool_starts_its_job_and_renders_the_output(world: World) -> None:
    mcp = world.mcp()
    task_id = mcp.call("load_source", {"source": "s3://b/day/"})["taskId"]
    world.settle()
    params = world.job_request(task_id)["params"]
    assert params["StateMachineArn"] == PIPELINE
    assert params["Input"] == {"source": "s3://b/day/", "stageSeconds": 2, "failAt": ""}
    world.finish_job(task_id, {"source": "s3://b/day/", "rowsLoaded": 1000, "stages": ["extract"]})
    result = mcp.get(task_id)["result"]
    assert result["content"] == [{"type": "text", "text": "Loaded 1000 rows from s3://b/day/."}]
    assert result["structuredContent"]["rowsLoaded"] == 1000 and result["isError"] is False


def test_arguments_are_checked_against_the_declared_schema(world: World) -> None:
    reply = world.mcp().request("tools/call", {"name": "load_source", "arguments": {"stage_seconds": 5}})
    assert reply["error"]["code"] == -32602
    reply = world.mcp().request(
        "tools/call", {"name": "load_source", "arguments": {"source": "s", "extra": 1}}
    )
    assert reply["error"]["code"] == -32602
    assert world.store.records == {}


def test_a_missing_environment_variable_is_a_clear_tool_error(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("PIPELINE_STATE_MACHINE_ARN")
    mcp = world.mcp()
    task_id = mcp.call("load_source", {"source": "s"})["taskId"]
    world.settle()
    result = mcp.get(task_id)["result"]
    assert result["isError"] is True
    assert "needs the environment variable PIPELINE_STATE_MACHINE_ARN" in result["content"][0]["text"]
    assert world.memory.jobs.started == []


def test_fields_come_from_arguments_by_jsonpath_and_optional_ones_may_be_absent() -> None:
    from taskgate.tools.declared import _fill, _job

    job = {
        "jobQueue": "${QUEUE}",
        "jobDefinition": "d",
        "jobName.$": "$.name",
        "parameters": {"day.$": "$.day", "first.$": "$.items[0]"},
    }
    fields = _fill(job, {"day": "2027-01-15", "items": ["a", "b"]}, {"QUEUE": "arn:q"})
    assert fields == {
        "jobQueue": "arn:q",
        "jobDefinition": "d",
        "parameters": {"day": "2027-01-15", "first": "a"},
    }
    params = _job("batch", fields).spec("task", "job").params
    assert params["JobQueue"] == "arn:q" and params["Parameters"] == {"day": "2027-01-15", "first": "a"}
    assert params["JobName"] == "taskgate-job"


@pytest.mark.parametrize(
    ("overrides", "problem"),
    [
        ({"job": {"kind": "lambda"}}, "job kind must be one of"),
        ({"job": {"kind": "glue"}}, "a glue job needs jobName"),
        ({"job": {"kind": "glue", "jobName": "n", "cluster": "c"}}, "a glue job has no cluster"),
        ({"job": {"kind": "glue", "jobName.$": "day"}}, "is not a JSONPath"),
        ({"inputSchema": {"type": "array"}}, "inputSchema must be an object schema"),
        ({"inputSchema": {"type": "object", "properties": {"x": {}}}}, "property 'x' needs a type"),
        ({"result": {"markdown": "x"}}, "result takes text and structured.$"),
    ],
)
def test_a_declaration_that_does_not_fit_is_refused_at_load(overrides: dict[str, Any], problem: str) -> None:
    with pytest.raises(DeclarationError, match=problem.replace("$", r"\$").replace(".", r"\.")):
        tool_from(declared(**overrides))


def test_an_unreadable_file_fails_the_load_saying_which(tmp_path: Any) -> None:
    bad = tmp_path / "tools.json"
    bad.write_text('{"tools": [{"name": "x"}]}')
    with pytest.raises(DeclarationError, match=f"tool declarations {bad}"):
        read.__wrapped__(str(bad))
    with pytest.raises(DeclarationError, match="no_such_package"):
        read.__wrapped__("no_such_package:jobs.json")
