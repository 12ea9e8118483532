"""What one state of a task's execution carries while it waits for a job (issue 29, n5): at
most 256 KiB, or Step Functions fails the execution with States.DataLimitExceeded, which no
Catch (States.ALL) handles - the task would be left for the sweeper. A child execution's
output may come close to that by itself, so the state keeps it once: the outcome takes the
place of the request that started the job (whose parameters, the child's input, may be as
large), instead of sitting beside it."""

from __future__ import annotations

import json
import pathlib
from typing import Any

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
LIMIT = 256 * 1024
JOB_STATES = ("RunExecution", "RunBatchJob", "RunEcsTask", "RunGlueJob")


def _states() -> dict[str, Any]:
    return json.loads((ROOT / "statemachines" / "task.asl.json").read_text())["States"]  # type: ignore[no-any-return]


def _path(document: dict[str, Any], path: str) -> Any:
    node: Any = document
    for part in path.removeprefix("$.").split("."):
        node = node[part]
    return node


def _put(document: dict[str, Any], path: str | None, value: Any) -> dict[str, Any]:
    """ResultPath: ``value`` placed into a copy of the state's input (None: the input as is)."""
    out = json.loads(json.dumps(document))
    if path is None:
        return out
    if path == "$":
        return value  # type: ignore[no-any-return]
    *parents, last = path.removeprefix("$.").split(".")
    node = out
    for part in parents:
        node = node.setdefault(part, {})
    node[last] = value
    return out


def _select(selector: dict[str, Any] | None, result: Any) -> Any:
    """ResultSelector, for the paths these states use ($ and $.Field)."""
    if selector is None:
        return result
    return {
        key.removesuffix(".$"): (result if value == "$" else _path(result, value))
        if key.endswith(".$")
        else value
        for key, value in selector.items()
    }


def _size(value: Any) -> int:
    return len(json.dumps(value, separators=(",", ":")).encode())


def _input(params: dict[str, Any]) -> dict[str, Any]:
    """The execution's state as a job state receives it (LoadJob's result under $.job)."""
    request = {"kind": "execution", "key": "load", "timeoutSeconds": 3600, "params": params}
    return {
        "taskId": "t" * 36,
        "executionArn": "arn:" + "x" * 120,
        "job": {"status": "working", "key": "load", "request": request},
    }


@pytest.mark.parametrize("state", JOB_STATES)
def test_a_jobs_outcome_takes_the_requests_place(state: str) -> None:
    spec = _states()[state]
    child_input = {"Input": {"rows": "i" * (100 * 1024)}}
    child_output = {"Output": {"rows": "o" * (200 * 1024)}}
    # What the integration returns: for a child execution, DescribeExecution with the output
    # (the input too, but ResultSelector keeps what the task needs).
    result = {**child_output, "Status": "SUCCEEDED"}
    after = _put(_input(child_input), spec["ResultPath"], _select(spec.get("ResultSelector"), result))
    assert _size(after) < LIMIT, (
        f"{state}'s output would be {_size(after)} bytes: States.DataLimitExceeded, which no Catch handles"
    )
    # The next state reads the outcome and the key from where this one left them.
    record = _states()["RecordJobOutcome"]["Parameters"]
    outcome = record["ExpressionAttributeValues"][":outcome"]["S.$"]
    assert outcome.startswith("States.JsonToString($.") and _path(
        after, outcome[len("States.JsonToString(") : -1]
    )
    assert _path(after, record["ExpressionAttributeNames"]["#key.$"]) == "load"
    # A failure's error lands in the same place.
    for catch in spec["Catch"]:
        assert catch["ResultPath"] == spec["ResultPath"], state


def test_every_state_that_records_an_outcome_reads_it_from_where_the_job_states_put_it() -> None:
    states = _states()
    slot = states["RunExecution"]["ResultPath"]
    writers = {
        name
        for name, s in states.items()
        if s.get("Next") == "RecordJobOutcome"
        or any(c.get("Next") == "RecordJobOutcome" for c in s.get("Catch", []))
    }
    assert writers >= {*JOB_STATES, "UnknownJob", "AwaitCallback", "AwaitCallbackWithHeartbeat"}
    for name in writers:
        state = states[name]
        places = {c["ResultPath"] for c in state.get("Catch", []) if c.get("Next") == "RecordJobOutcome"}
        if state.get("Next") == "RecordJobOutcome":
            places.add(state["ResultPath"])
        assert places == {slot}, (name, places)
