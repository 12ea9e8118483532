"""Every events/*.json through `sam local invoke`: the functions in a Lambda runtime container,
against the local AWS endpoint (`make invoke` / taskgate.local.endpoint).

Setup, idempotent and cached between runs: the stand-in for the Python 3.13 runtime image
(scripts/lambda_image.sh, as root: it installs docker.io and starts dockerd where they are
missing), `sam build` for this machine's architecture (the template's Architecture
Parameter and layers/Makefile's LAMBDA_ARCH together: no emulation), and the endpoint with
the table, bucket and state machine, whose RunTool state runs WorkerFunction with
`sam local invoke` too. Each event, its response and the rows it wrote (the invoke's own and
those of the execution it started) are printed for the CI log.
"""

from __future__ import annotations

import json
import pathlib
import subprocess
import time
from collections.abc import Callable, Iterator
from decimal import Decimal
from typing import Any

import boto3
import pytest
from boto3.dynamodb.types import TypeDeserializer

from taskgate.adapters.dynamodb_store import DynamoDBTaskStore
from taskgate.config import Settings
from taskgate.domain.model import NewTask
from taskgate.domain.results import ResultStore
from taskgate.domain.service import TaskService
from taskgate.local.endpoint import DUMMY_CREDENTIALS, running
from taskgate.local.runtime import REGION, TABLE_NAME
from taskgate.local.sam_local import PLACEHOLDER_TASK_ID, SamLocal, host_arch, with_task_id
from tests.e2e.local_server import free_port

pytestmark = pytest.mark.slow

ROOT = pathlib.Path(__file__).resolve().parents[2]
EVENTS = ROOT / "events"
OWNER = "https://cognito-idp.us-east-1.amazonaws.com/us-east-1_example#user-1234"
Say = Callable[[str], None]


@pytest.fixture(scope="module")
def local(tmp_path_factory: pytest.TempPathFactory, say: Say) -> Iterator[SamLocal]:
    started = time.monotonic()
    image = subprocess.run(
        [str(ROOT / "scripts" / "lambda_image.sh")], capture_output=True, text=True, timeout=1200
    )
    assert image.returncode == 0, image.stdout + image.stderr
    # What the image script did: each step with its time (install, dockerd, debootstrap, …) or "up to date".
    steps = [line.strip() for line in image.stderr.splitlines() if line.startswith(("==>", "    "))]
    say(f"\n[sam local] runtime image ({time.monotonic() - started:.0f} s):\n  " + "\n  ".join(steps))
    arch = host_arch()
    setup = SamLocal(
        root=ROOT,
        arch=arch,
        port=free_port(),
        build_dir=ROOT / ".aws-sam" / f"e2e-{arch}",
        env_file=tmp_path_factory.mktemp("sam") / "env.json",
    )
    started = time.monotonic()
    built = setup.build()
    assert built.returncode == 0, built.stdout[-3000:] + built.stderr[-3000:]
    say(
        f"[sam local] sam build Architecture={arch} ({time.monotonic() - started:.0f} s) -> {setup.build_dir}"
    )
    log_path = tmp_path_factory.mktemp("endpoint") / "endpoint.log"
    with log_path.open("wb") as log:
        endpoint = subprocess.Popen(
            setup.endpoint_command(),
            cwd=ROOT,
            env=setup.endpoint_environment(),
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    try:
        deadline = time.monotonic() + 60
        while not (running(setup.port) and "READY" in log_path.read_text()):
            assert endpoint.poll() is None and time.monotonic() < deadline, log_path.read_text()
            time.sleep(0.2)
        say(f"[sam local] endpoint on port {setup.port} (RunTool -> sam local invoke WorkerFunction)")
        yield setup
    finally:
        endpoint.terminate()
        endpoint.wait(timeout=30)
        steps = [line for line in log_path.read_text().splitlines() if line.startswith("RunTool")]
        say("[sam local] worker steps the state machine ran:\n  " + "\n  ".join(steps))


@pytest.fixture(scope="module")
def table(local: SamLocal) -> Any:
    return boto3.client(
        "dynamodb",
        endpoint_url=f"http://127.0.0.1:{local.port}",
        region_name=REGION,
        aws_access_key_id=DUMMY_CREDENTIALS["AWS_ACCESS_KEY_ID"],
        aws_secret_access_key=DUMMY_CREDENTIALS["AWS_SECRET_ACCESS_KEY"],
        aws_session_token=DUMMY_CREDENTIALS["AWS_SESSION_TOKEN"],
    )


def rows(table: Any) -> dict[str, dict[str, Any]]:
    def plain(value: Any) -> Any:
        found = TypeDeserializer().deserialize(value)
        return int(found) if isinstance(found, Decimal) and found == int(found) else found

    items = table.scan(TableName=TABLE_NAME, ConsistentRead=True)["Items"]
    return {item["taskId"]["S"]: {k: plain(v) for k, v in item.items()} for item in items}


def shown(row: dict[str, Any]) -> str:
    def short(value: Any) -> Any:
        text = value if isinstance(value, str) else json.dumps(value, default=str)
        return text if len(text) <= 160 else text[:157] + "..."

    return json.dumps({k: short(v) for k, v in sorted(row.items())}, default=str)


class NeverStarted:
    """A workflow whose execution never starts: the row as the API writes it before
    StartExecution (what a crash between the two leaves behind)."""

    def execution_for(self, task_id: str) -> str:
        return f"arn:aws:states:us-east-1:123456789012:execution:never:{task_id}"

    def start(self, task_id: str, input_wait_seconds: int) -> str:
        return self.execution_for(task_id)

    def resume(self, task_token: str) -> bool:
        return False

    def stop(self, task_id: str, reason: str, execution: str | None = None) -> None:
        pass

    def status(self, task_id: str, execution: str | None = None) -> str | None:
        return None


def seed_task(table: Any, tool: str, arguments: dict[str, Any], *, age_ms: int = 0) -> str:
    store = DynamoDBTaskStore(lambda: table, TABLE_NAME)
    # The limits a deployment with the defaults has.
    limits = Settings.from_env({"TASK_TABLE": TABLE_NAME}).limits.value()
    clock = lambda: time.time_ns() // 1_000_000 - age_ms  # noqa: E731
    service = TaskService(store, NeverStarted(), clock, limits, ResultStore(None, max_inline_bytes=262_144))
    return service.create(NewTask(owner=OWNER, tool=tool, arguments=arguments)).task_id


class Walk:
    """Invokes events in order, printing each with its response and the rows it wrote."""

    def __init__(self, local: SamLocal, table: Any, say: Say) -> None:
        self.local = local
        self.table = table
        self.say = say
        self.seen = rows(table)

    def invoke(
        self,
        function: str,
        name: str,
        *,
        task_id: str | None = None,
        settle: Callable[[dict[str, dict[str, Any]]], bool] | None = None,
    ) -> Any:
        event = json.loads((EVENTS / name).read_text())
        if task_id:
            event = with_task_id(event, task_id)
        started = time.monotonic()
        response, _ = self.local.invoke(function, event, timeout=600)
        took = time.monotonic() - started
        body = json.loads(response["body"]) if isinstance(response, dict) and "body" in response else None
        if settle is not None:  # the execution the invoke started writes on (the worker's steps)
            deadline = time.monotonic() + 600
            while not settle(rows(self.table)):
                assert time.monotonic() < deadline, f"{name}: the task did not settle"
                time.sleep(0.5)
        now = rows(self.table)
        written = [row for key, row in now.items() if self.seen.get(key) != row]
        self.seen = now
        sent = event.get("body", event) if isinstance(event, dict) else event
        self.say(
            f"\n[sam local invoke {function}] {name}{f' (task {task_id})' if task_id else ''}  {took:.1f} s"
        )
        self.say(f"  event:    {sent if isinstance(sent, str) else json.dumps(sent)}")
        self.say(f"  response: {json.dumps(body if body is not None else response)}")
        self.say("  rows written:" + ("".join(f"\n    {shown(r)}" for r in written) or " none"))
        return body if body is not None else response


def status_of(task_id: str, *statuses: str) -> Callable[[dict[str, dict[str, Any]]], bool]:
    return lambda now: task_id in now and now[task_id].get("status") in statuses


def any_row(status: str) -> Callable[[dict[str, dict[str, Any]]], bool]:
    # Not every item is a task's: the worker also notes each tool's duration in the table.
    return lambda now: any(row.get("status") == status for row in now.values())


def test_every_event_through_sam_local_invoke(local: SamLocal, table: Any, say: Say) -> None:
    events = {p.name for p in EVENTS.glob("*.json")} - {"env.json"}
    walk = Walk(local, table, say)
    done: set[str] = set()

    def run(function: str, name: str, **kwargs: Any) -> Any:
        done.add(name)
        return walk.invoke(function, name, **kwargs)

    # Answers that store nothing.
    body = run("ApiFunction", "api_server_discover.json")
    assert body["result"]["capabilities"]["extensions"] == {"io.modelcontextprotocol/tasks": {}}
    body = run("ApiFunction", "api_parse_error.json")
    assert body["error"]["code"] == -32700 and "Traceback" not in json.dumps(body)
    body = run("ApiFunction", "api_tasks_get.json")  # the placeholder task: nobody's
    assert body["error"]["code"] == -32602
    assert walk.seen == {}

    # A task created through ApiFunction; the state machine's RunTool runs one WorkerFunction step.
    body = run("ApiFunction", "api_tools_call_task.json", settle=any_row("completed"))
    task = body["result"]["taskId"]
    assert body["result"]["resultType"] == "task" and walk.seen[task]["ownerId"] == OWNER
    body = run("ApiFunction", "api_tasks_get.json", task_id=task)
    assert body["result"]["status"] == "completed"
    assert body["result"]["result"]["content"][0]["text"] == "from-event finished after 0.2 seconds"

    # A question: the worker raises TaskgateInputRequired, RunTool's Catch parks the execution.
    body = run("ApiFunction", "api_tools_call_question.json", settle=any_row("input_required"))
    question = body["result"]["taskId"]
    assert "taskToken" in walk.seen[question] and "confirm_delete" in walk.seen[question]["inputRequests"]
    body = run(
        "ApiFunction", "api_tasks_update.json", task_id=question, settle=status_of(question, "completed")
    )
    assert body["result"] == {"resultType": "complete"}
    assert json.loads(walk.seen[question]["result"])["content"][0]["text"] == "Deleted report.csv"

    # One WorkerFunction step invoked by hand, for a task whose execution never started.
    seeded = seed_task(table, "greet", {"name": "sam local invoke"})
    walk.seen = rows(table)
    body = run("WorkerFunction", "worker_step.json", task_id=seeded)
    assert body == {"kind": "finished", "status": "completed"}
    assert json.loads(walk.seen[seeded]["result"])["content"][0]["text"] == "Hello, sam local invoke!"

    # The sweeper fails what no execution will finish: a task quiet for 10 minutes, never started.
    stuck = seed_task(table, "slow_compute", {"seconds": 1}, age_ms=600_000)
    walk.seen = rows(table)
    body = run("SweeperFunction", "sweeper_schedule.json")
    assert (body["checked"], body["swept"], body["errors"]) == (1, 1, 0)
    assert walk.seen[stuck]["status"] == "failed"
    assert walk.seen[stuck]["statusMessage"] == "The task's execution never started."

    # What the table's change stream hands TaskEventsFunction (a task that asked, then was
    # cancelled): its wake-ups go to the bus, and no record is reported failed.
    body = run("TaskEventsFunction", "events_task_changes.json")
    assert body == {"batchItemFailures": []}

    assert done == events, f"events not invoked: {sorted(events - done)}"
    assert PLACEHOLDER_TASK_ID not in walk.seen
