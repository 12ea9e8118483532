"""Stand up taskgate's AWS resources inside moto, in this process.

The same table shape, the same ``statemachines/task.asl.json`` (with the
template's substitutions) and the same worker handler as a deployment; only the
endpoints differ. ``tests/unit/test_template.py`` keeps the table in step
with ``template.yaml``. The example pipeline (``statemachines/pipeline.asl.json``)
that ``run_pipeline`` hands off is created beside it, as the template creates it.

Jobs tools hand off run where moto runs them: another state machine's execution
(executed, like the task's), Batch (without Docker: a job succeeds as it is
submitted, or fails with ``MOTO_SIMPLE_BATCH_FAIL_AFTER`` set), ECS (a task stops
after a few looks at it) and Glue (a run succeeds at once).
"""

from __future__ import annotations

import importlib.util
import io
import json
import logging
import os
import secrets
import time
import traceback
import zipfile
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

from .. import wiring
from . import moto_fixes

if TYPE_CHECKING:
    from .change_stream import ChangeStream

REGION = "us-east-1"
TABLE_NAME = "taskgate-tasks"
RESULT_BUCKET = "taskgate-results-local"
STATE_MACHINE_NAME = "taskgate-task"
PIPELINE_NAME = "taskgate-pipeline"
REQUEST_STATE_SECRET = "taskgate-request-state"
SIGN_IN_KEY_SECRET = "taskgate-sign-in-key"
WORKER_NAME = "taskgate-worker"
# The stack's event bus (TaskEventBus), where the change stream's consumer puts wake-ups.
EVENT_BUS = "taskgate-tasks"

TABLE_DEFINITION: dict[str, Any] = {
    "KeySchema": [{"AttributeName": "taskId", "KeyType": "HASH"}],
    "AttributeDefinitions": [
        {"AttributeName": "taskId", "AttributeType": "S"},
        {"AttributeName": "ownerId", "AttributeType": "S"},
        {"AttributeName": "createdAt", "AttributeType": "S"},
        {"AttributeName": "activeOwner", "AttributeType": "S"},
    ],
    "GlobalSecondaryIndexes": [
        {
            "IndexName": "byOwner",
            "KeySchema": [
                {"AttributeName": "ownerId", "KeyType": "HASH"},
                {"AttributeName": "createdAt", "KeyType": "RANGE"},
            ],
            "Projection": {"ProjectionType": "KEYS_ONLY"},
        },
        {
            "IndexName": "byActive",
            "KeySchema": [
                {"AttributeName": "activeOwner", "KeyType": "HASH"},
                {"AttributeName": "createdAt", "KeyType": "RANGE"},
            ],
            "Projection": {"ProjectionType": "KEYS_ONLY"},
        },
    ],
    "BillingMode": "PAY_PER_REQUEST",
    # The change stream TaskEventsFunction reads (domain/wake_ups.py).
    "StreamSpecification": {"StreamEnabled": True, "StreamViewType": "NEW_AND_OLD_IMAGES"},
}
TTL_ATTRIBUTE = "expiresAt"

_LOCAL_ENV = {
    "AWS_ACCESS_KEY_ID": "testing",
    "AWS_SECRET_ACCESS_KEY": "testing",
    "AWS_SESSION_TOKEN": "testing",
    "AWS_DEFAULT_REGION": REGION,
    "AWS_REGION": REGION,
    "POWERTOOLS_SERVICE_NAME": "taskgate",
    "POWERTOOLS_METRICS_NAMESPACE": "taskgate",
    "POWERTOOLS_TRACE_DISABLED": "true",
    # botocore 1.44 sends DynamoDB Streams calls to account-based hosts
    # (123456789012.streams-ddb...), which moto 5.2.1 does not serve: a project's fresh venv has it.
    "AWS_ACCOUNT_ID_ENDPOINT_MODE": "disabled",
}


def repo_root() -> Path:
    """Where the state machine and the worker handler are: this checkout's top, or the
    installed package's copy (a deployer's project runs the same ones); TASKGATE_ROOT wins."""
    configured = os.environ.get("TASKGATE_ROOT")
    if configured:
        return Path(configured)
    from .stack import source

    return source()


class TraceBelow(logging.Formatter):
    """Mixed into a deployed function's log formatter (Powertools' JSON): an exception's
    traceback is printed below the line as Python prints it, instead of escaped inside it. The
    local server's terminal is read by a person, CloudWatch by a query."""

    def format(self, record: logging.LogRecord) -> str:
        if not record.exc_info or record.exc_info[0] is None:
            return super().format(record)
        exc_info, exc_text = record.exc_info, record.exc_text
        record.exc_info, record.exc_text = None, None
        try:
            line = super().format(record)
        finally:
            record.exc_info, record.exc_text = exc_info, exc_text
        return line + "\n" + "".join(traceback.format_exception(*exc_info)).rstrip()


def readable_traces() -> None:
    """Every ``taskgate`` logger's handler (the worker handler's Powertools configuration,
    copied to the library's loggers) prints tracebacks as tracebacks. The formatter object
    stays the one Powertools registered (it calls its own methods on it): only its class
    gains TraceBelow's ``format``."""
    names = [name for name in logging.root.manager.loggerDict if name.split(".")[0] == "taskgate"]
    for handler in {h for name in names for h in logging.getLogger(name).handlers}:
        formatter = handler.formatter
        if formatter is not None and not isinstance(formatter, TraceBelow):
            formatter.__class__ = type(
                f"Readable{type(formatter).__name__}", (TraceBelow, type(formatter)), {}
            )


def _load_handler(root: Path, function: str) -> ModuleType:
    path = root / "functions" / function / f"{function}_handler.py"
    spec = importlib.util.spec_from_file_location(f"taskgate_local_{function}_handler", path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class _LambdaContext:
    memory_limit_in_mb = 512
    aws_request_id = "local"
    log_stream_name = "local"

    def __init__(self, version: str = "$LATEST", name: str = WORKER_NAME) -> None:
        self.function_name = name
        self.log_group_name = f"/aws/lambda/{name}"
        self.function_version = version
        self.invoked_function_arn = f"arn:aws:lambda:{REGION}:123456789012:function:{name}:{version}"
        # Like Lambda's timeout, from the start of the invocation; tests shorten it.
        budget = float(os.environ.get("WORKER_STEP_SECONDS", "900"))
        self._deadline = time.monotonic() + budget

    def get_remaining_time_in_millis(self) -> int:
        return max(0, int((self._deadline - time.monotonic()) * 1000))


class EmbeddedAws:
    """moto with DynamoDB, Step Functions (executing) and the worker, in this process."""

    def __init__(self, root: Path | None = None) -> None:
        self.root = root or repo_root()
        self.table_name = TABLE_NAME
        self.state_machine_arn = ""
        self.pipeline_arn = ""
        self.request_state_secret_arn = ""
        self.worker_version = ""
        self._role_arn = ""
        self._machines = 0
        # Each published worker version's handler (deploy_worker publishes others).
        self.handlers: dict[str, Callable[[dict[str, Any], Any], Any]] = {}
        self.sign_in_key_secret_arn = ""
        self._mock: Any = None
        self._worker: ModuleType | None = None

    def start(self) -> EmbeddedAws:
        from moto import mock_aws

        for key, value in _LOCAL_ENV.items():
            os.environ.setdefault(key, value)
        # An endpoint override would send the app's calls past the in-process mock.
        os.environ.pop("AWS_ENDPOINT_URL", None)
        self._mock = mock_aws(
            config={"stepfunctions": {"execute_state_machine": True}, "batch": {"use_docker": False}}
        )
        self._mock.start()
        moto_fixes.apply(self._invoke_worker)
        self._create_resources()
        os.environ.update(self.environment())
        wiring.reset()
        self._worker = _load_handler(self.root, "worker")
        readable_traces()  # the handler has just configured the library's loggers
        self.handlers[self.worker_version] = self._worker.handler
        return self

    def environment(self) -> dict[str, str]:
        """The functions' settings that name these resources (the template's environment)."""
        return {
            "TASK_TABLE": self.table_name,
            "STATE_MACHINE_ARN": self.state_machine_arn,
            "RESULT_BUCKET": RESULT_BUCKET,
            "REQUEST_STATE_SECRET_ARN": self.request_state_secret_arn,
            "PIPELINE_STATE_MACHINE_ARN": self.pipeline_arn,
            "OAUTH_SIGNING_SECRET_ARN": self.sign_in_key_secret_arn,
            "TASK_EVENT_BUS": EVENT_BUS,
        }

    def stop(self) -> None:
        if self._mock is not None:
            self._mock.stop()
            self._mock = None
        wiring.reset()

    def __enter__(self) -> EmbeddedAws:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def change_stream(self, *, poll_seconds: float = 0.1) -> ChangeStream:
        """The table's change stream read as the event source mapping reads it, delivered to
        TaskEventsFunction's handler in this process (change_stream.py); not started."""
        from .change_stream import ChangeStream

        handler = _load_handler(self.root, "events").handler

        def deliver(event: dict[str, Any]) -> dict[str, Any]:
            return handler(event, _LambdaContext(name="taskgate-events"))  # type: ignore[no-any-return]

        return ChangeStream(self.table_name, deliver, REGION, poll_seconds=poll_seconds)

    def _invoke_worker(self, event: dict[str, Any]) -> dict[str, Any]:
        assert self._worker is not None
        version = moto_fixes.invoked_version()
        handler = self.handlers.get(version, self._worker.handler)
        return handler(event, _LambdaContext(version))  # type: ignore[no-any-return]

    # -- a deploy, as `sam deploy` would make it ------------------------------------------
    def deploy_worker(self, handler: Callable[[dict[str, Any], Any], Any] | None = None) -> str:
        """Publish a new worker version running ``handler`` (default: the code loaded now) and
        point the state machine at it, as a deploy does (template.yaml pins the version, not
        the alias). Running executions keep the definition, hence the version, they started
        with. Returns the new version."""
        import boto3

        lam = boto3.client("lambda", region_name=REGION)
        lam.update_function_configuration(
            FunctionName=WORKER_NAME, Description=f"deploy {len(self.handlers) + 1}"
        )
        published = lam.publish_version(FunctionName=WORKER_NAME)
        self.worker_version = str(published["Version"])
        assert self._worker is not None
        self.handlers[self.worker_version] = handler or self._worker.handler
        boto3.client("stepfunctions", region_name=REGION).update_state_machine(
            stateMachineArn=self.state_machine_arn, definition=self._definition(published["FunctionArn"])
        )
        return self.worker_version

    def replace_state_machine(self) -> str:
        """A new state machine for the stack (an upgrade that replaces it, as removing its Name
        did); the old one stays with its executions (UpdateReplacePolicy: Retain). The API and
        the sweeper are configured with the new one. Returns the old ARN."""
        import boto3

        old = self.state_machine_arn
        sfn = boto3.client("stepfunctions", region_name=REGION)
        definition = sfn.describe_state_machine(stateMachineArn=old)["definition"]
        self._machines += 1
        self.state_machine_arn = sfn.create_state_machine(
            name=f"{STATE_MACHINE_NAME}-{self._machines}",
            definition=definition,
            roleArn=self._role_arn,
            type="STANDARD",
        )["stateMachineArn"]
        os.environ["STATE_MACHINE_ARN"] = self.state_machine_arn
        wiring.reset()
        return old

    def _definition(self, worker_arn: str) -> str:
        definition = (self.root / "statemachines" / "task.asl.json").read_text()
        substitutions = {
            "WorkerFunctionArn": worker_arn,
            "TaskTableName": self.table_name,
            "Partition": "aws",
        }
        for name, value in substitutions.items():
            definition = definition.replace("${" + name + "}", value)
        return definition

    def _create_resources(self) -> None:
        import boto3

        ddb = boto3.client("dynamodb", region_name=REGION)
        ddb.create_table(TableName=self.table_name, **TABLE_DEFINITION)
        ddb.update_time_to_live(
            TableName=self.table_name,
            TimeToLiveSpecification={"Enabled": True, "AttributeName": TTL_ATTRIBUTE},
        )
        boto3.client("s3", region_name=REGION).create_bucket(Bucket=RESULT_BUCKET)
        boto3.client("events", region_name=REGION).create_event_bus(Name=EVENT_BUS)
        # Like the stack's RequestStateSecret: a random value of this runtime's own, read
        # through the same adapter as in Lambda.
        sm = boto3.client("secretsmanager", region_name=REGION)
        self.request_state_secret_arn = sm.create_secret(
            Name=REQUEST_STATE_SECRET, SecretString=secrets.token_urlsafe(48)
        )["ARN"]
        # Like the stack's SignInKeySecret: the key this stack's access tokens are signed with.
        self.sign_in_key_secret_arn = sm.create_secret(
            Name=SIGN_IN_KEY_SECRET, SecretString=secrets.token_urlsafe(48)
        )["ARN"]
        iam = boto3.client("iam", region_name=REGION)
        self._role_arn = role_arn = iam.create_role(
            RoleName="taskgate-local",
            AssumeRolePolicyDocument=json.dumps({"Version": "2012-10-17", "Statement": []}),
        )["Role"]["Arn"]
        archive = io.BytesIO()
        with zipfile.ZipFile(archive, "w") as zf:
            zf.writestr("worker_handler.py", "# runs in-process; see moto_fixes\n")
        lam = boto3.client("lambda", region_name=REGION)
        lam.create_function(
            FunctionName=WORKER_NAME,
            Runtime="python3.13",
            Role=role_arn,
            Handler="worker_handler.handler",
            Code={"ZipFile": archive.getvalue()},
        )
        # As deployed: the state machine invokes the version published with the deploy.
        published = lam.publish_version(FunctionName=WORKER_NAME)
        self.worker_version = str(published["Version"])
        definition = self._definition(published["FunctionArn"])
        self._machines = 1
        sfn = boto3.client("stepfunctions", region_name=REGION)
        self.state_machine_arn = sfn.create_state_machine(
            name=STATE_MACHINE_NAME, definition=definition, roleArn=role_arn, type="STANDARD"
        )["stateMachineArn"]
        self.pipeline_arn = sfn.create_state_machine(
            name=PIPELINE_NAME,
            definition=(self.root / "statemachines" / "pipeline.asl.json").read_text(),
            roleArn=role_arn,
            type="STANDARD",
        )["stateMachineArn"]
