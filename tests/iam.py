"""The IAM check: every AWS call recorded in a test run (taskgate/local/aws_calls.py) against
the policy of the function (or the state machine) that made it, in the template as the SAM
transform makes it, resources included.

The template names resources by Ref and GetAtt; here they are what the local runtime calls
them (taskgate/local/runtime.py), so a call's concrete ARN is matched against the policy's
resource patterns with IAM's wildcards."""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from taskgate.local.aws_calls import ACCOUNT
from taskgate.local.runtime import (
    EVENT_BUS,
    PIPELINE_NAME,
    REGION,
    REQUEST_STATE_SECRET,
    RESULT_BUCKET,
    SIGN_IN_KEY_SECRET,
    STATE_MACHINE_NAME,
    TABLE_NAME,
    WORKER_NAME,
)
from tests.cfn_eval import Evaluator
from tests.sam_translate import translate

ROLES = {
    "ApiFunction": "ApiFunctionRole",
    "WorkerFunction": "WorkerFunctionRole",
    "SweeperFunction": "SweeperFunctionRole",
    "TaskEventsFunction": "TaskEventsFunctionRole",
    "TaskStateMachine": "TaskStateMachineRole",
}


def _secret(name: str) -> str:
    return f"arn:aws:secretsmanager:{REGION}:{ACCOUNT}:secret:{name}-??????"


LOCAL: dict[tuple[str, str | None], str] = {
    ("TaskTable", None): TABLE_NAME,
    ("TaskTable", "Arn"): f"arn:aws:dynamodb:{REGION}:{ACCOUNT}:table/{TABLE_NAME}",
    ("ResultBucket", None): RESULT_BUCKET,
    ("ResultBucket", "Arn"): f"arn:aws:s3:::{RESULT_BUCKET}",
    # The local runtime's machine, and those replacing it (test_upgrades: taskgate-task-2).
    ("TaskStateMachine", None): f"arn:aws:states:{REGION}:{ACCOUNT}:stateMachine:{STATE_MACHINE_NAME}*",
    ("TaskStateMachine", "Name"): f"{STATE_MACHINE_NAME}*",
    # What TaskStateMachines (the deploy checks) answers: the machines the stack's tasks run on.
    (
        "TaskStateMachines",
        "Executions",
    ): f"arn:aws:states:{REGION}:{ACCOUNT}:execution:{STATE_MACHINE_NAME}*:*",
    ("TaskStateMachines", "Previous"): "",
    ("WorkerFunction", None): WORKER_NAME,
    ("PipelineStateMachine", None): f"arn:aws:states:{REGION}:{ACCOUNT}:stateMachine:{PIPELINE_NAME}",
    ("PipelineStateMachine", "Name"): PIPELINE_NAME,
    ("RequestStateSecret", None): _secret(REQUEST_STATE_SECRET),
    ("SignInKeySecret", None): _secret(SIGN_IN_KEY_SECRET),
    ("TaskEventBus", None): EVENT_BUS,
    ("TaskEventBus", "Arn"): f"arn:aws:events:{REGION}:{ACCOUNT}:event-bus/{EVENT_BUS}",
}
# Resources some tests make for themselves, standing for the stack's: the sweep-at-scale
# table (scripts/sweep_at_scale.py) and another stack's requestState secret
# (test_request_state_key.py).
STAND_INS = [
    (re.compile(r"(:table/)tasks-\d+"), r"\g<1>" + TABLE_NAME),
    (re.compile(r"(:secret:)another-"), r"\g<1>" + REQUEST_STATE_SECRET + "-"),
]
# Grants no call of ours makes, and why they are there.
SERVICE_SIDE = {
    ("TaskStateMachine", "CloudWatchLogsDelivery"): "Step Functions sets up its log delivery with them",
    # The .sync integrations: Step Functions waits through EventBridge rules it manages, passes
    # an ECS task's roles to ECS, and stops a job when the execution waiting for it is stopped.
    ("TaskStateMachine", "SyncExecutionEvents"): "Step Functions' managed rule for startExecution.sync",
    ("TaskStateMachine", "SyncBatchEvents"): "Step Functions' managed rule for submitJob.sync",
    ("TaskStateMachine", "SyncEcsEvents"): "Step Functions' managed rule for runTask.sync",
    ("TaskStateMachine", "PassEcsTaskRoles"): "Step Functions passes the task's roles to ECS",
}
# Granted for a path of ours that the tests do not reach, and why the path exists.
RARE = {
    (
        "WorkerFunction",
        "s3:DeleteObject",
    ): "a result written for a task cancelled meanwhile is discarded (results.discard)",
    # Stopping a job the state machine started: AWS does it when the execution waiting for it
    # is stopped (moto does not); taskgate stops it itself as well.
    ("TaskStateMachine", "states:StopExecution"): "AWS stops a .sync child when its parent is stopped",
    ("TaskStateMachine", "batch:TerminateJob"): "AWS stops a .sync job when its execution is stopped",
    ("TaskStateMachine", "ecs:StopTask"): "AWS stops a .sync task when its execution is stopped",
    ("TaskStateMachine", "glue:BatchStopJobRun"): "AWS stops a .sync run when its execution is stopped",
    ("TaskStateMachine", "glue:GetJobRuns"): "the Glue .sync integration's own look at its runs",
    # moto's Batch runs a job to its end as it is submitted, and moto's Glue has no
    # BatchStopJobRun: a stop midway is on the fakes (tests/unit/test_jobs.py).
    ("ApiFunction", "batch:TerminateJob"): "a cancel of a task waiting on a Batch job",
    ("ApiFunction", "glue:BatchStopJobRun"): "a cancel of a task waiting on a Glue run",
    ("ApiFunction", "batch:DescribeJobs"): "tasks/get of a task waiting on a Batch job still running",
    ("ApiFunction", "glue:GetJobRun"): "tasks/get of a task waiting on a Glue run still running",
    ("SweeperFunction", "states:GetExecutionHistory"): "the id of a Batch job, ECS task or Glue run to stop",
    # The sweeper stops what outlives its task's deadline: the pipeline is (test_jobs.py);
    # the other kinds are on the fakes.
    ("SweeperFunction", "batch:TerminateJob"): "a Batch job past its task's deadline",
    ("SweeperFunction", "ecs:StopTask"): "an ECS task past its task's deadline",
    ("SweeperFunction", "glue:BatchStopJobRun"): "a Glue run past its task's deadline",
}


def _pattern(text: str) -> re.Pattern[str]:
    return re.compile("".join(".*" if c == "*" else "." if c == "?" else re.escape(c) for c in text), re.S)


@dataclass
class Statement:
    sid: str
    actions: list[str]
    resources: list[str]

    def allows(self, action: str, resource: str) -> bool:
        return any(_pattern(a.lower()).fullmatch(action.lower()) for a in self.actions) and any(
            _pattern(r).fullmatch(resource) for r in self.resources
        )


@dataclass
class Row:
    function: str
    action: str
    resource: str
    calls: int
    allowed_by: str | None


@dataclass
class Report:
    rows: list[Row]
    unused: list[tuple[str, str, str, str]] = field(default_factory=list)

    @property
    def denied(self) -> list[Row]:
        return [r for r in self.rows if r.allowed_by is None]

    def table(self, rows: list[Row] | None = None) -> str:
        rows = self.rows if rows is None else rows
        widths = [max([len(h), *(len(str(getattr(r, f))) for r in rows)]) for h, f in _COLUMNS]
        lines = ["  ".join(h.ljust(w) for (h, _), w in zip(_COLUMNS, widths, strict=True))]
        for r in rows:
            values = [r.function, r.action, r.resource, str(r.calls), r.allowed_by or "NOT ALLOWED"]
            lines.append("  ".join(v.ljust(w) for v, w in zip(values, widths, strict=True)))
        return "\n".join(lines)


_COLUMNS = [
    ("function", "function"),
    ("operation", "action"),
    ("resource", "resource"),
    ("calls", "calls"),
    ("allowed by", "allowed_by"),
]


def statements(parameters: dict[str, str] | None = None) -> dict[str, list[Statement]]:
    """Each function's (and the state machine's) Allow statements, resolved."""
    translated = translate(parameters)

    def resource(name: str, attribute: str | None) -> Any:
        if (name, attribute) not in LOCAL:
            raise KeyError(f"no local stand-in for {name}.{attribute}")
        return LOCAL[(name, attribute)]

    evaluator = Evaluator(translated, parameters, resource=resource)
    resources = translated["Resources"]
    out: dict[str, list[Statement]] = {}
    for function, role in ROLES.items():
        found: list[Statement] = []
        properties = resources[role]["Properties"]
        policies = list(evaluator.value(properties.get("Policies", [])))
        # The stack's own managed policies the role names (its job grants).
        for arn in properties.get("ManagedPolicyArns", []):
            name = arn.get("Ref") if isinstance(arn, dict) else None
            if name in resources and resources[name]["Type"] == "AWS::IAM::ManagedPolicy":
                document = evaluator.value(resources[name]["Properties"]["PolicyDocument"])
                policies.append({"PolicyName": name, "PolicyDocument": document})
        for policy in policies:
            for index, s in enumerate(policy["PolicyDocument"]["Statement"]):
                if s.get("Effect") != "Allow":
                    continue
                listed = lambda v: v if isinstance(v, list) else [v]  # noqa: E731
                found.append(
                    Statement(
                        s.get("Sid") or f"{policy['PolicyName']}[{index}]",
                        listed(s["Action"]),
                        listed(s["Resource"]),
                    )
                )
        out[function] = found
    return out


_ID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|[0-9a-f]{32}")


def check(calls: list[dict[str, str]], parameters: dict[str, str] | None = None) -> Report:
    policies = statements(parameters)
    grouped: dict[tuple[str, str, str], int] = defaultdict(int)
    allowed: dict[tuple[str, str, str], str | None] = {}
    used: set[tuple[str, str, str]] = set()
    for call in calls:
        function, action, resource = call["function"], call["action"], call["resource"]
        for pattern, name in STAND_INS:
            resource = pattern.sub(name, resource)
        by = next((s for s in policies[function] if s.allows(action, resource)), None)
        shown = (function, action, _ID.sub("<id>", resource))
        grouped[shown] += 1
        if shown not in allowed or by is None:
            allowed[shown] = by.sid if by else None
        if by is not None:
            used.update(
                (function, by.sid, a) for a in by.actions if _pattern(a.lower()).fullmatch(action.lower())
            )
    rows = [Row(f, a, r, n, allowed[(f, a, r)]) for (f, a, r), n in sorted(grouped.items())]
    unused = [
        (function, s.sid, action, RARE.get((function, action), "NOT USED: remove it?"))
        for function, found in policies.items()
        for s in found
        for action in s.actions
        if (function, s.sid, action) not in used and (function, s.sid) not in SERVICE_SIDE
    ]
    return Report(rows, unused)
