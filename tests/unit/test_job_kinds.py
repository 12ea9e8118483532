"""The kinds of job are one registry (taskgate/jobs/kinds.py): the state machine's StartJob
choice (statemachines/task.asl.json) and the job IAM statements (template.yaml's RunJobsPolicy,
JobStatusPolicy and JobStopPolicy) are held to it here, in both directions; and a fifth kind
defined in this module alone (its job class, its failure reader, a fake adapter) runs a task
to its end on the memory ports, with nothing under taskgate/ edited for it."""

from __future__ import annotations

import json
import pathlib
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import pytest
from cfnlint.decode import decode
from pydantic import BaseModel

from taskgate.domain.model import NewTask, TaskStatus
from taskgate.jobs.kinds import KINDS, Kind, Registry
from taskgate.jobs.vocabulary import JobProgress, JobSpec, PendingJob
from taskgate.testing.memory import MemoryJobs
from taskgate.tools import ToolContext
from taskgate.tools.registry import Tool, ToolRegistry
from tests.fakes import World

ROOT = pathlib.Path(__file__).resolve().parents[2]
KIND_FIELD = "$.job.request.kind"
RESOURCE_PREFIX = "arn:${Partition}:states:::"
# LoadJob reads the job a step stored: the state machine's own, whatever the kind.
LOAD_JOB = frozenset({"dynamodb:GetItem"})
SYNC_EVENTS = frozenset({"events:PutTargets", "events:PutRule", "events:DescribeRule"})


# -- what the ASL and the template say ----------------------------------------------------------


def _asl() -> dict[str, Any]:
    return json.loads((ROOT / "statemachines" / "task.asl.json").read_text())  # type: ignore[no-any-return]


def _kinds_in(choice: dict[str, Any]) -> set[str]:
    """The kinds a Choice rule tests for (alone, or inside an And)."""
    if choice.get("Variable") == KIND_FIELD and "StringEquals" in choice:
        return {choice["StringEquals"]}
    return {k for inner in choice.get("And", []) for k in _kinds_in(inner)}


def asl_choice(asl: dict[str, Any]) -> dict[str, set[str]]:
    """StartJob's choice: each kind and the states it may go to."""
    chosen: dict[str, set[str]] = {}
    for choice in asl["States"]["StartJob"]["Choices"]:
        for kind in _kinds_in(choice):
            chosen.setdefault(kind, set()).add(choice["Next"])
    return chosen


def _statements(template: dict[str, Any], policy: str) -> list[dict[str, Any]]:
    found = []
    for item in template["Resources"][policy]["Properties"]["PolicyDocument"]["Statement"]:
        if "Fn::If" in item:  # granted when its Parameter is set
            item = item["Fn::If"][1]
        found.append(item)
    return found


def _actions(statements: Iterable[dict[str, Any]]) -> set[str]:
    return {action for s in statements for action in s["Action"]}


def _events_rules(statements: Iterable[dict[str, Any]]) -> set[str]:
    """The EventBridge rules the .sync integrations manage, as the statements name them."""
    rules = set()
    for s in statements:
        if "events:PutRule" in s["Action"]:
            resource = s["Resource"]
            text = resource.get("Fn::Sub", "") if isinstance(resource, dict) else str(resource)
            rules.add(text.rsplit("rule/", 1)[-1])
    return rules


def disagreements(kinds: Iterable[Kind], asl: dict[str, Any], template: dict[str, Any]) -> list[str]:
    """Where the registry and the state machine or the IAM part ways (empty: they agree)."""
    kinds = list(kinds)
    problems: list[str] = []
    chosen = asl_choice(asl)
    for kind in kinds:
        if chosen.get(kind.name) != set(kind.states):
            problems.append(
                f"StartJob sends {kind.name} to {chosen.get(kind.name)}, the registry to {kind.states}"
            )
        for state in kind.states:
            resource = asl["States"].get(state, {}).get("Resource", "")
            if resource != RESOURCE_PREFIX + kind.integration:
                problems.append(f"{state} runs {resource!r}, the registry says {kind.integration!r}")
    unknown = set(chosen) - {k.name for k in kinds}
    if unknown:
        problems.append(f"StartJob chooses kinds the registry does not know: {sorted(unknown)}")
    run = _statements(template, "RunJobsPolicy")
    needed_run = set(LOAD_JOB).union(*(k.run_actions for k in kinds))
    if any(k.events_rule for k in kinds):
        needed_run |= SYNC_EVENTS
    for policy, statements, needed in (
        ("RunJobsPolicy", run, needed_run),
        (
            "JobStatusPolicy",
            _statements(template, "JobStatusPolicy"),
            set().union(*(k.status_actions for k in kinds)),
        ),
        (
            "JobStopPolicy",
            _statements(template, "JobStopPolicy"),
            set().union(*(k.stop_actions for k in kinds)),
        ),
    ):
        granted = _actions(statements)
        if needed - granted:
            problems.append(f"{policy} grants none of {sorted(needed - granted)}")
        if granted - needed:
            problems.append(f"{policy} grants {sorted(granted - needed)}, which no kind needs")
    rules = {k.events_rule for k in kinds if k.events_rule}
    if rules != _events_rules(run):
        problems.append(
            f"RunJobsPolicy manages the rules {sorted(_events_rules(run))}, the kinds {sorted(rules)}"
        )
    return problems


@pytest.fixture(scope="module")
def template() -> dict[str, Any]:
    found, matches = decode(str(ROOT / "template.yaml"))
    assert not matches and found is not None
    return found  # type: ignore[no-any-return]


def test_the_state_machine_and_the_iam_agree_with_the_registry(template: dict[str, Any]) -> None:
    assert sorted(k.name for k in KINDS) == ["batch", "callback", "ecs", "execution", "glue"]
    assert disagreements(KINDS, _asl(), template) == []


def test_a_kind_the_state_machine_does_not_know_is_found(template: dict[str, Any]) -> None:
    extra = Kind("slurm", "Slurm job", states=("RunSlurmJob",), integration="slurm:submit.sync")
    found = disagreements([*KINDS, extra], _asl(), template)
    assert any("StartJob sends slurm to None" in p for p in found), found


def test_a_kind_the_registry_lost_is_found(template: dict[str, Any]) -> None:
    without_glue = [k for k in KINDS if k.name != "glue"]
    found = disagreements(without_glue, _asl(), template)
    assert "StartJob chooses kinds the registry does not know: ['glue']" in found
    assert any("RunJobsPolicy grants ['glue:BatchStopJobRun'" in p for p in found), found


def test_an_iam_statement_missing_for_a_kind_is_found(template: dict[str, Any]) -> None:
    ecs = KINDS["ecs"]
    wants_more = ecs._replace(stop_actions=ecs.stop_actions | {"ecs:DeleteCluster"})
    kinds = [wants_more if k.name == "ecs" else k for k in KINDS]
    assert "JobStopPolicy grants none of ['ecs:DeleteCluster']" in disagreements(kinds, _asl(), template)


def test_a_registry_rejects_a_kind_twice() -> None:
    registry = Registry()
    registry.add(Kind("x", "X job"))
    with pytest.raises(ValueError, match="twice"):
        registry.add(Kind("x", "X job"))


# -- a fifth kind, defined here alone -------------------------------------------------------------


def _slurm_reasons(description: dict[str, Any]) -> list[str]:
    # What `scontrol show job` says of a failed job, its keys lower-cased by the vocabulary.
    return [str(description[k]) for k in ("jobstate", "reason") if description.get(k)]


SLURM = Kind(
    "slurm", "Slurm job", reasons=_slurm_reasons, states=("RunSlurmJob",), integration="slurm:submit.sync"
)


@dataclass(frozen=True)
class SlurmJob:
    """A Slurm batch script on an HPC cluster: this kind's job class, as a tool hands it off."""

    cluster: str
    script: str

    def spec(self, task_id: str, key: str) -> JobSpec:
        return JobSpec(
            "slurm", self.cluster, {"Cluster": self.cluster, "Script": self.script}, name=f"tg-{key}"
        )


class SlurmAdapter(MemoryJobs):
    """The fake service: what describing a running Slurm job reports."""

    def describe(self, task_id: str, job: PendingJob, execution: str | None = None) -> JobProgress | None:
        found = super().describe(task_id, job, execution)
        return JobProgress(f"squeue: {found.message}") if found is not None and job.kind == "slurm" else found


class In(BaseModel):
    script: str = "train.sh"


def _simulate(args: In, ctx: ToolContext) -> str:
    result = ctx.hand_off("train", SlurmJob("hpc-1", args.script))
    return f"trained: {result.output['steps']} steps"


def _world() -> World:
    tools = ToolRegistry()
    tools.add(Tool("simulate", "Train on the cluster.", In, _simulate, task_support="required"))
    world = World(tools)
    # The memory ports' Jobs is this kind's fake adapter (the ports read it when first asked).
    world.memory.jobs = SlurmAdapter()
    return world


def test_a_fifth_kind_defined_in_a_test_runs_a_task_to_its_end() -> None:
    with KINDS.added(SLURM):
        world = _world()
        task = world.tasks.create(NewTask(owner="ann", tool="simulate", arguments={"script": "train.sh"}))
        world.settle()
        waiting = world.tasks.get("ann", task.task_id)
        assert waiting.job is not None and waiting.job.kind == "slurm"
        assert waiting.status_message == "Waiting for the Slurm job tg-train: squeue: RUNNING"
        assert world.job_request(task.task_id)["params"] == {"Cluster": "hpc-1", "Script": "train.sh"}
        world.finish_job(task.task_id, {"steps": 40})
        world.settle()
        done = world.tasks.with_result(world.tasks.get("ann", task.task_id))
    assert done.status is TaskStatus.COMPLETED
    assert done.result is not None and done.result["content"][0]["text"] == "trained: 40 steps"


def test_a_fifth_kinds_failure_reads_through_its_reader() -> None:
    with KINDS.added(SLURM):
        world = _world()
        task = world.tasks.create(NewTask(owner="ann", tool="simulate", arguments={}))
        world.settle()
        cause = json.dumps({"JobState": "FAILED", "Reason": "NonZeroExitCode"})
        world.finish_job(task.task_id, error="States.TaskFailed", cause=cause)
        world.settle()
        failed = world.tasks.with_result(world.tasks.get("ann", task.task_id))
    assert failed.result is not None and failed.result["isError"] is True
    text = failed.result["content"][0]["text"]
    # The tool's uncaught JobFailed, in the words the kind's reader took from the cause.
    assert "The Slurm job tg-train failed (States.TaskFailed): FAILED; NonZeroExitCode" in text
