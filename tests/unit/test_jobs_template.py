"""The template gives handed-off jobs what they need and no more: the state machine starts
and waits for exactly the jobs JobArns names (and the example pipeline); the
API may look at them and stop them, the sweeper only stop them; the worker gets none of it;
the callback route is open (its secret is the capability)."""

from __future__ import annotations

import json
import pathlib
import re
from typing import Any

import pytest
from cfnlint.decode import decode

ROOT = pathlib.Path(__file__).resolve().parents[2]
REGION, ACCOUNT = "us-east-1", "123456789012"


def _template() -> dict[str, Any]:
    template, matches = decode(str(ROOT / "template.yaml"))
    assert not matches and template is not None
    return template  # type: ignore[no-any-return]


class Resolver:
    """Enough of CloudFormation's intrinsic functions to read the policies as deployed."""

    def __init__(self, template: dict[str, Any], parameters: dict[str, Any]) -> None:
        self.template = template
        self.values: dict[str, Any] = {
            "AWS::Partition": "aws",
            "AWS::Region": REGION,
            "AWS::AccountId": ACCOUNT,
            "AWS::StackName": "stack",
            "TaskStateMachine.Name": "stack-task",
            "PipelineStateMachine.Name": "stack-pipeline",
            "PipelineStateMachine": f"arn:aws:states:{REGION}:{ACCOUNT}:stateMachine:stack-pipeline",
        }
        for name, spec in template["Parameters"].items():
            value = parameters.get(name, spec.get("Default"))
            if spec["Type"] == "CommaDelimitedList" and isinstance(value, str):
                value = value.split(",")
            self.values[name] = value

    def condition(self, name: str) -> bool:
        return bool(self.eval(self.template["Conditions"][name]))

    def eval(self, node: Any) -> Any:
        if isinstance(node, list):
            return [v for v in (self.eval(x) for x in node) if v is not _NO_VALUE]
        if not isinstance(node, dict):
            return node
        if len(node) == 1:
            ((fn, arg),) = node.items()
            if fn == "Ref":
                return _NO_VALUE if arg == "AWS::NoValue" else self.values.get(arg, f"<{arg}>")
            if fn == "Fn::GetAtt":
                return f"<{'.'.join(arg) if isinstance(arg, list) else arg}>"
            if fn == "Fn::Join":
                return arg[0].join(str(v) for v in self.eval(arg[1]))
            if fn == "Fn::Split":
                return str(self.eval(arg[1])).split(arg[0])
            if fn == "Fn::Select":
                return self.eval(arg[1])[int(arg[0])]
            if fn == "Fn::Sub":
                text, extra = (arg, {}) if isinstance(arg, str) else (arg[0], self.eval(arg[1]))
                return re.sub(
                    r"\$\{([\w:.]+)\}", lambda m: str({**self.values, **extra}.get(m.group(1))), text
                )
            if fn == "Fn::If":
                return self.eval(arg[1] if self.condition(arg[0]) else arg[2])
            if fn == "Fn::Equals":
                a, b = self.eval(arg)
                return a == b
            if fn == "Fn::Not":
                return not self.eval(arg[0])
            if fn == "Condition":
                return self.condition(arg)
        return {k: self.eval(v) for k, v in node.items()}


_NO_VALUE = object()


def statements(resolver: Resolver, resource: str) -> dict[str, dict[str, Any]]:
    props = resolver.template["Resources"][resource]["Properties"]
    document = props.get("PolicyDocument")
    if document is None:  # a function's or state machine's inline policies
        document = {
            "Statement": [s for p in props["Policies"] if isinstance(p, dict) for s in p.get("Statement", [])]
        }
    return {s["Sid"]: s for s in resolver.eval(document["Statement"])}


def test_with_no_jobs_named_only_the_pipeline_is_granted() -> None:
    r = Resolver(_template(), {})
    assert set(statements(r, "RunJobsPolicy")) == {
        "TaskTableJobs",
        "RunThePipeline",
        "WatchAndStopThePipeline",
        "SyncExecutionEvents",
    }
    assert statements(r, "RunJobsPolicy")["RunThePipeline"]["Resource"] == r.values["PipelineStateMachine"]
    assert set(statements(r, "JobStatusPolicy")) == {"FindSubmittedJobs", "WatchThePipeline"}
    assert set(statements(r, "JobStopPolicy")) == {"FindSubmittedJobs", "StopThePipeline"}


def test_the_named_jobs_are_granted_one_by_one() -> None:
    machines = [
        f"arn:aws:states:{REGION}:{ACCOUNT}:stateMachine:etl",
        f"arn:aws:states:{REGION}:{ACCOUNT}:stateMachine:ml",
    ]
    jobs = [
        *machines,
        f"arn:aws:batch:{REGION}:{ACCOUNT}:job-queue/q",
        f"arn:aws:batch:{REGION}:{ACCOUNT}:job-definition/d:1",
        f"arn:aws:ecs:{REGION}:{ACCOUNT}:cluster/c",
        f"arn:aws:ecs:{REGION}:{ACCOUNT}:task-definition/t:*",
        f"arn:aws:glue:{REGION}:{ACCOUNT}:job/nightly",
    ]
    r = Resolver(_template(), {"JobArns": ",".join(jobs)})
    run = statements(r, "RunJobsPolicy")
    # One list of every kind: each statement names all of it, and its actions apply only to
    # the ARNs of their own kind (starting a Glue job's ARN as an execution is nothing).
    assert run["StartJobStateMachines"]["Resource"] == jobs
    # Each machine's executions, derived from its ARN (the other kinds' ARNs pass through).
    executions = [
        f"arn:aws:states:{REGION}:{ACCOUNT}:execution:etl:*",
        f"arn:aws:states:{REGION}:{ACCOUNT}:execution:ml:*",
    ]
    assert run["WatchAndStopJobExecutions"]["Resource"][:2] == executions
    assert run["SubmitBatchJobs"]["Resource"] == jobs
    assert run["RunEcsTasks"]["Condition"] == {"ArnEquals": {"ecs:cluster": jobs}}
    assert run["RunGlueJobs"]["Resource"] == jobs
    assert "PassEcsTaskRoles" not in run  # none named
    status, stop = statements(r, "JobStatusPolicy"), statements(r, "JobStopPolicy")
    assert (
        status["WatchJobExecutions"]["Resource"][:2]
        == stop["StopJobExecutions"]["Resource"][:2]
        == executions
    )
    # The API and the sweeper never start a job; the status policy never stops one.
    for statement in (*status.values(), *stop.values()):
        assert not any(
            a.endswith(("StartExecution", "SubmitJob", "RunTask", "StartJobRun")) for a in statement["Action"]
        )
    for statement in status.values():
        assert not any(
            a.endswith(("StopExecution", "TerminateJob", "StopTask", "BatchStopJobRun"))
            for a in statement["Action"]
        )


def test_every_kind_of_job_the_state_machine_starts_is_granted() -> None:
    asl = json.loads((ROOT / "statemachines" / "task.asl.json").read_text())
    started = {
        s["Resource"].split(":::")[1] for s in asl["States"].values() if ".sync" in s.get("Resource", "")
    }
    assert started == {
        "states:startExecution.sync:2",
        "batch:submitJob.sync",
        "ecs:runTask.sync",
        "glue:startJobRun.sync",
    }
    r = Resolver(
        _template(),
        {
            "JobArns": ",".join(
                [
                    "arn:aws:states:r:a:stateMachine:m",
                    "arn:aws:batch:r:a:job-queue/q",
                    "arn:aws:ecs:r:a:cluster/c",
                    "arn:aws:iam::a:role/task",
                    "arn:aws:glue:r:a:job/g",
                ]
            )
        },
    )
    granted = {a for s in statements(r, "RunJobsPolicy").values() for a in s["Action"]}
    assert {
        "states:StartExecution",
        "batch:SubmitJob",
        "ecs:RunTask",
        "glue:StartJobRun",
        "iam:PassRole",
    } <= granted


def test_only_the_api_and_the_sweeper_control_jobs_and_the_worker_has_no_job_grants() -> None:
    resources = _template()["Resources"]

    def managed(name: str) -> list[Any]:
        return [p for p in resources[name]["Properties"]["Policies"] if not isinstance(p, dict) or "Ref" in p]

    assert {"Ref": "JobStatusPolicy"} in managed("ApiFunction") and {"Ref": "JobStopPolicy"} in managed(
        "ApiFunction"
    )
    assert {"Ref": "JobStopPolicy"} in managed("SweeperFunction")
    assert {"Ref": "JobStatusPolicy"} not in managed("SweeperFunction")
    assert {"Ref": "RunJobsPolicy"} in managed("TaskStateMachine")
    # The worker's role is a resource of its own (its tools' needs): none of the jobs' policies.
    worker_role = json.dumps(resources["WorkerFunctionRole"])
    assert "Job" not in worker_role
    worker_env = resources["WorkerFunction"]["Properties"]["Environment"]["Variables"]
    assert {"PUBLIC_URL", "PIPELINE_STATE_MACHINE_ARN"} <= set(worker_env)


def test_the_callback_route_is_open_and_goes_to_the_api() -> None:
    route = _template()["Resources"]["CallbackRoute"]["Properties"]
    assert route["RouteKey"] == "POST /callbacks/{taskId}"
    assert route["AuthorizationType"] == "NONE"
    assert "CallbackRoute" in _template()["Resources"]["McpApiApiGatewayDefaultStage"]["DependsOn"]


@pytest.mark.parametrize("name", ["PipelineStateMachine"])
def test_the_local_runtime_creates_the_pipeline_the_template_deploys(name: str) -> None:
    from taskgate.local import runtime

    uri = _template()["Resources"][name]["Properties"]["DefinitionUri"]
    assert uri == "statemachines/pipeline.asl.json"
    assert "pipeline.asl.json" in pathlib.Path(runtime.__file__).read_text()
