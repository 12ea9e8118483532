"""Every AWS call taskgate's functions and the state machine make, recorded for the IAM
check (tests/integration/test_iam_calls.py): which function made it, the IAM action it needs
and the resource it names. Development only.

``install(directory)`` (or ``TASKGATE_AWS_CALL_LOG=<directory>`` and ``install_from_env()``,
which the local servers call at start) wraps botocore's one method every client call passes,
and appends one JSON line per call to ``<directory>/calls-<pid>.jsonl``.

Who made a call is read from the Python stack, as in Lambda each function has its own
process: a worker step (functions/worker, domain/worker.py) is WorkerFunction, a sweep is
SweeperFunction, a wake-up put on the bus (functions/events, domain/wake_ups.py) is
TaskEventsFunction, moto's state machine executor is TaskStateMachine, and the request path
(protocol, http_app, domain/service.py, functions/api) is ApiFunction. Calls made by none
of them (a test's own setup and checks, the local runtime creating its resources) are not
recorded.
"""

from __future__ import annotations

import json
import os
import sys
import threading
from pathlib import Path
from typing import Any

ACCOUNT = "123456789012"
ENV = "TASKGATE_AWS_CALL_LOG"

# The first of these found anywhere on the stack names the caller (most specific first).
_MARKERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("TaskEventsFunction", ("functions/events/events_handler.py", "taskgate/domain/wake_ups.py")),
    ("WorkerFunction", ("functions/worker/worker_handler.py", "taskgate/domain/worker.py")),
    ("SweeperFunction", ("functions/sweeper/sweeper_handler.py", "taskgate/domain/sweeper.py")),
    ("TaskStateMachine", ("moto/stepfunctions/parser/",)),
    (
        "ApiFunction",
        (
            "functions/api/api_handler.py",
            "taskgate/http_app.py",
            "taskgate/protocol/",
            "taskgate/domain/service.py",
            "taskgate/auth/",
        ),
    ),
)
_lock = threading.Lock()
_installed: Path | None = None
# Off while a test run's unit tier runs in the same process (their calls are canned).
active = True


def caller() -> str | None:
    files: list[str] = []
    frame = sys._getframe(2)
    while frame is not None:
        files.append(frame.f_code.co_filename.replace(os.sep, "/"))
        frame = frame.f_back  # type: ignore[assignment]
    for name, markers in _MARKERS:
        if any(marker in path for path in files for marker in markers):
            return name
    return None


def requirements(
    service: str, operation: str, params: dict[str, Any], region: str, error: str | None = None
) -> list[tuple[str, str]]:
    """The (IAM action, resource ARN) pairs one call needs."""
    if service in ("batch", "ecs", "glue"):
        return _job_requirements(service, operation, params, region)
    if service == "events" and operation == "PutEvents":
        return _bus_requirements(params, region)
    return _taskgate_requirements(service, operation, params, region, error)


def _taskgate_requirements(
    service: str, operation: str, params: dict[str, Any], region: str, error: str | None
) -> list[tuple[str, str]]:
    account = ACCOUNT

    def table(name: str, index: str | None = None) -> str:
        arn = f"arn:aws:dynamodb:{region}:{account}:table/{name}"
        return f"{arn}/index/{index}" if index else arn

    if service == "dynamodb":
        if operation in ("BatchGetItem", "BatchWriteItem"):
            return [(f"dynamodb:{operation}", table(name)) for name in params.get("RequestItems", {})]
        if operation == "TransactWriteItems":
            kinds = {
                "Put": "PutItem",
                "Update": "UpdateItem",
                "Delete": "DeleteItem",
                "ConditionCheck": "ConditionCheckItem",
            }
            return [
                (f"dynamodb:{kinds[kind]}", table(body["TableName"]))
                for item in params.get("TransactItems", [])
                for kind, body in item.items()
            ]
        return [(f"dynamodb:{operation}", table(params["TableName"], params.get("IndexName")))]
    if service == "s3":
        bucket = f"arn:aws:s3:::{params.get('Bucket', '')}"
        if operation in ("ListObjectsV2", "ListObjects", "HeadBucket"):
            return [("s3:ListBucket", bucket)]
        obj = f"{bucket}/{params.get('Key', '')}"
        action = {"HeadObject": "s3:GetObject", "PutObjectTagging": "s3:PutObjectTagging"}.get(
            operation, f"s3:{operation}"
        )
        needs = [(action, obj)]
        if operation == "PutObject" and params.get("Tagging"):
            needs.append(("s3:PutObjectTagging", obj))
        if operation in ("GetObject", "HeadObject") and error in ("NoSuchKey", "404", "AccessDenied"):
            # S3 says NoSuchKey (not 403) for a missing object only to a caller with ListBucket.
            needs.append(("s3:ListBucket", bucket))
        return needs
    if service == "stepfunctions":
        if operation == "StartExecution":
            return [("states:StartExecution", params["stateMachineArn"])]
        if operation in ("DescribeExecution", "StopExecution", "GetExecutionHistory"):
            return [(f"states:{operation}", params["executionArn"])]
        return [(f"states:{operation}", "*")]  # SendTask*: IAM takes no resource for them
    if service == "secretsmanager":
        return [(f"secretsmanager:{operation}", params["SecretId"])]
    if service == "lambda" and operation == "Invoke":
        name = params["FunctionName"]
        if not name.startswith("arn:"):
            name = f"arn:aws:lambda:{region}:{account}:function:{name}"
        return [("lambda:InvokeFunction", name)]
    return [(f"{service}:{operation}", "*")]


def _bus_requirements(params: dict[str, Any], region: str) -> list[tuple[str, str]]:
    """IAM checks PutEvents against each entry's bus (a name, or an ARN)."""
    buses = {entry.get("EventBusName") or "default" for entry in params.get("Entries", [])}
    return [
        (
            "events:PutEvents",
            bus if bus.startswith("arn:") else f"arn:aws:events:{region}:{ACCOUNT}:event-bus/{bus}",
        )
        for bus in sorted(buses)
    ]


def _job_requirements(
    service: str, operation: str, params: dict[str, Any], region: str
) -> list[tuple[str, str]]:
    """The jobs tools hand off (jobs/vocabulary.py): the resources IAM scopes their calls to."""
    account = ACCOUNT

    def arn(kind: str, name: str) -> str:
        return name if name.startswith("arn:") else f"arn:aws:{service}:{region}:{account}:{kind}/{name}"

    action = f"{service}:{operation}"
    if service == "batch":
        if operation == "SubmitJob":
            # IAM checks SubmitJob against the queue and the job definition.
            return [
                (action, arn("job-queue", params["jobQueue"])),
                (action, arn("job-definition", params["jobDefinition"])),
            ]
        if operation == "TerminateJob":
            return [(action, arn("job", params["jobId"]))]
        return [(action, "*")]  # DescribeJobs: no resource-level permissions
    if service == "ecs":
        if operation == "RunTask":
            return [(action, arn("task-definition", params["taskDefinition"]))]
        cluster = str(params.get("cluster", "default")).rsplit("/", 1)[-1]
        tasks = params.get("tasks") or [params.get("task", "")]
        return [(action, arn("task", t if "/" in t else f"{cluster}/{t}")) for t in tasks]
    return [(action, arn("job", params["JobName"]))]  # glue: StartJobRun, GetJobRun(s), BatchStopJobRun


def install(directory: Path) -> None:
    """Record every call of this process into ``directory`` (idempotent)."""
    global _installed
    import botocore.client

    with _lock:
        if _installed is not None:
            _installed = directory
            return
        _installed = directory
        client_class: Any = botocore.client.BaseClient
        original = client_class._make_api_call

        def recording(self: Any, operation_name: str, api_params: dict[str, Any]) -> Any:
            who = caller() if active else None
            if who is None:
                return original(self, operation_name, api_params)
            error: str | None = None
            try:
                return original(self, operation_name, api_params)
            except botocore.exceptions.ClientError as exc:
                error = str(exc.response.get("Error", {}).get("Code", ""))
                raise
            finally:
                _write(
                    who,
                    self.meta.service_model.service_name,
                    operation_name,
                    api_params,
                    self.meta.region_name,
                    error,
                )

        client_class._make_api_call = recording


def _write(
    who: str, service: str, operation: str, params: dict[str, Any], region: str, error: str | None
) -> None:
    try:
        needs = requirements(service, operation, params, region or "us-east-1", error)
    except (KeyError, TypeError, AttributeError):
        needs = [(f"{service}:{operation}", "?")]
    directory = _installed
    if directory is None:
        return
    lines = "".join(
        json.dumps({"function": who, "operation": f"{service}:{operation}", "action": a, "resource": r})
        + "\n"
        for a, r in needs
    )
    with _lock, (directory / f"calls-{os.getpid()}.jsonl").open("a") as out:
        out.write(lines)


def install_from_env() -> None:
    directory = os.environ.get(ENV)
    if directory:
        Path(directory).mkdir(parents=True, exist_ok=True)
        install(Path(directory))


def read(directory: Path) -> list[dict[str, str]]:
    calls: list[dict[str, str]] = []
    for path in sorted(directory.glob("calls-*.jsonl")):
        calls.extend(json.loads(line) for line in path.read_text().splitlines() if line.strip())
    return calls
