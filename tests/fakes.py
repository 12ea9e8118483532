"""The unit tier's world, and the bench's canned AWS.

``World`` is the composition root on the in-memory ports (``taskgate.testing.memory``)
with the test-only tools, and plays the state machine. ``CannedAws`` is the bench's
"real adapters" option: the real boto3 clients and adapters run
(parameter validation, serialization, SigV4 signing, response parsing) and a
``before-send`` hook answers each request from a tiny in-memory table instead of
the network.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from taskgate.config import EXAMPLE_TOOL_MODULES, Settings
from taskgate.domain.errors import TransitionRejected
from taskgate.domain.jobs import JobKind
from taskgate.domain.limits import Limits
from taskgate.domain.model import TaskStatus
from taskgate.domain.results import ResultStore
from taskgate.domain.service import TaskService
from taskgate.domain.sweeper import Sweeper
from taskgate.domain.worker import StepKind, Worker
from taskgate.protocol.request_state import RequestStates
from taskgate.protocol.server import McpServer
from taskgate.protocol.services import InlineSlots
from taskgate.protocol.v2025.streams import ResultStreams
from taskgate.root import Taskgate
from taskgate.testing.memory import FakeClock, Memory
from taskgate.tools.registry import ToolRegistry

# The tools the unit tier serves: what a deployment can load, plus the test-only tools.
TEST_TOOL_MODULES = (*EXAMPLE_TOOL_MODULES.split(","), "tests.fixture_tools")


def unit_settings(**overrides: Any) -> Settings:
    """Settings for a root on the in-memory ports: the defaults a deployment has, except a
    stream may wait 1 s (on the fake clock: it costs nothing and exercises the waiting)."""
    unknown = set(overrides) - set(Settings.model_fields)
    if unknown:
        raise TypeError(f"not a Settings field: {', '.join(sorted(unknown))}")
    values: dict[str, Any] = {
        "task_table": "memory",
        "tool_modules": TEST_TOOL_MODULES,
        "stream_max_seconds": 1.0,
        **overrides,
    }
    return Settings(**values)


class World:
    """The composition root (``taskgate.root.Taskgate``) on the in-memory ports, as
    production builds it on AWS; ``settle`` plays the state machine.

    ``settings``: any ``Settings`` field to change (``max_argument_bytes=50``);
    ``with_bucket=False``: a deployment without a result bucket."""

    def __init__(
        self, tools: ToolRegistry | None = None, *, with_bucket: bool = True, **settings: Any
    ) -> None:
        self.clock = FakeClock()
        # A stream's wait runs the queued executions and moves a fake clock instead.
        self.memory = Memory(clock=self.clock, on_wait=self.settle)
        self.store = self.memory.store
        self.workflow = self.memory.workflow
        self.blobs = self.memory.blobs
        self.sessions = self.memory.sessions
        self.root = Taskgate(
            unit_settings(**settings), self.memory.ports(with_bucket=with_bucket), tools=tools
        )
        # A test may run the steps with a worker of its own (another history budget).
        self.worker: Worker = self.root.worker
        self.events: list[tuple[str, dict[str, Any]]] = []
        self.root.on_audit(lambda event, fields: self.events.append((event, fields)))
        self._tokens = 0

    @property
    def settings(self) -> Settings:
        return self.root.settings

    @property
    def tools(self) -> ToolRegistry:
        return self.root.tools

    @property
    def tasks(self) -> TaskService:
        return self.root.tasks

    @property
    def limits(self) -> Limits:
        return self.root.limits

    @property
    def results(self) -> ResultStore:
        return self.root.results

    @property
    def sweeper(self) -> Sweeper:
        return self.root.sweeper

    @property
    def server(self) -> McpServer:
        return self.root.server

    @property
    def request_states(self) -> RequestStates:
        return self.root.request_states

    @property
    def slots(self) -> InlineSlots:
        """The inline slots plain calls and waiting streams hold."""
        return self.root.inline

    @property
    def streams(self) -> ResultStreams:
        """The 2025-11-25 era's result streams."""
        return self.root.era2025._streams  # type: ignore[attr-defined,no-any-return]

    def step(self, task_id: str) -> Any:
        """One RunTool step, then what the state machine does with its outcome."""
        outcome = self.worker.run_step(task_id)
        if outcome.kind is StepKind.INPUT_REQUIRED:
            self._tokens += 1
            token = f"token-{self._tokens}"
            try:
                self.store.park(task_id, token, self.clock())
            except TransitionRejected:
                self.workflow.executions[task_id] = "SUCCEEDED"  # AwaitInput's Catch: Done
            else:
                self.workflow.waiting[token] = task_id
        elif outcome.kind is StepKind.CONTINUE:
            self.workflow.runnable.append(task_id)
        elif outcome.kind is StepKind.HAND_OFF:
            self._start_job(task_id)
        elif self.workflow.executions.get(task_id) == "RUNNING":
            self.workflow.executions[task_id] = "SUCCEEDED"
        return outcome

    def _start_job(self, task_id: str) -> None:
        """LoadJob, StartJob and the wait: a callback parks on a token (unless its outcome
        came first: then RunTool); any other job starts and runs until ``finish_job``."""
        record = self.store.get(task_id)
        request = self.store.job_requests.get(task_id)
        if record is None or record.status is not TaskStatus.WORKING or request is None:
            self.workflow.executions[task_id] = "SUCCEEDED"  # StartJob's Choice: Done
            return
        if request["kind"] == JobKind.CALLBACK:
            self._tokens += 1
            token = f"callback-token-{self._tokens}"
            try:
                self.store.park_callback(task_id, request["key"], token, self.clock())
            except TransitionRejected:
                self.workflow.runnable.append(task_id)  # AwaitCallback's Catch: RunTool decides
            else:
                self.workflow.waiting[token] = task_id
            return
        assert record.job is not None
        self.memory.jobs.start(task_id, record.job)

    def finish_job(
        self, task_id: str, output: Any = None, *, error: str | None = None, cause: str = ""
    ) -> None:
        """The job the task waits on ends (``error``: failed so): the wait state's result
        (or its Catch), then RecordJobOutcome, then RunTool."""
        job = self.memory.jobs.running.pop(task_id)
        raw: dict[str, Any] = {"Error": error, "Cause": cause} if error else {"ok": True, "output": output}
        record = self.store.records[task_id]
        try:
            self.store.record_job_outcome(
                task_id, job.key, raw, self.clock(), record.kept_alive(self.clock())
            )
        except TransitionRejected:
            self.workflow.executions[task_id] = "SUCCEEDED"  # RecordJobOutcome's Catch: Done
            return
        self.workflow.runnable.append(task_id)

    def job_request(self, task_id: str) -> dict[str, Any]:
        """What the state machine would start the task's job with (its jobRequest)."""
        return self.store.job_requests[task_id]

    def settle(self, max_steps: int = 100) -> None:
        """Run every queued execution until each has finished or parked."""
        for _ in range(max_steps):
            if not self.workflow.runnable:
                return
            self.step(self.workflow.runnable.pop(0))
        raise AssertionError("executions did not settle")

    def handle(self, body: Any, headers: dict[str, str] | None = None, owner: str = "anonymous") -> Any:
        return self.server.handle(body, headers or {}, owner)

    def mcp(self, owner: str = "anonymous") -> Any:
        """A raw 2026-07-28 client whose requests go straight into the server as ``owner``."""
        from tests.mcp_client import Mcp

        def post(body: Any, headers: dict[str, str]) -> tuple[int, Any]:
            # Executions run between requests, as the state machine runs beside the API.
            self.settle()
            reply = self.server.handle(body, headers, owner)
            if reply.stream is not None:
                return reply.status, "".join(reply.stream)
            return reply.status, reply.body

        return Mcp(post)


# ---------------------------------------------------------------------------------
# Real boto3 clients, network replaced by a before-send hook.


class _Body:
    def __init__(self, data: bytes) -> None:
        self._data = data

    def stream(self, **kwargs: Any) -> Iterator[bytes]:
        yield self._data


class CannedAws:
    """Answers DynamoDB PutItem/GetItem/Query(COUNT) and Step Functions
    StartExecution/SendTaskSuccess/StopExecution from memory, after botocore has
    validated, serialized and signed the request. Enough for tools/call and tasks/get."""

    def __init__(self) -> None:
        self.items: dict[str, dict[str, Any]] = {}
        self.calls = 0

    def finish_all(self) -> None:
        """Take every item off the active index (bench setup between batches)."""
        for item in self.items.values():
            item.pop("activeOwner", None)

    def attach(self, client: Any) -> None:
        client.meta.events.register("before-send", self._send)

    def _send(self, request: Any, **kwargs: Any) -> Any:
        from botocore.awsrequest import AWSResponse
        from botocore.compat import HTTPHeaders

        self.calls += 1
        target = request.headers.get("X-Amz-Target", b"")
        operation = (target.decode() if isinstance(target, bytes) else str(target)).rpartition(".")[2]
        body = json.loads(request.body or b"{}")
        out: dict[str, Any] = {}
        if operation == "PutItem":
            item = body["Item"]
            self.items[item["taskId"]["S"]] = item
        elif operation == "GetItem":
            found = self.items.get(body["Key"]["taskId"]["S"])
            if found is not None:
                out = {"Item": found}
        elif operation == "Query":
            owner = body["ExpressionAttributeValues"][":owner"]["S"]
            count = sum(1 for i in self.items.values() if i.get("activeOwner", {}).get("S") == owner)
            out = {"Count": count, "ScannedCount": count}
        elif operation == "StartExecution":
            out = {
                "executionArn": f"arn:aws:states:us-east-1:123456789012:execution:bench:{body['name']}",
                "startDate": 1_800_000_000.0,
            }
        elif operation in ("SendTaskSuccess", "StopExecution"):
            out = {"stopDate": 1_800_000_000.0} if operation == "StopExecution" else {}
        else:
            raise NotImplementedError(f"CannedAws does not answer {operation}")
        data = json.dumps(out).encode()
        headers = HTTPHeaders()
        headers["content-type"] = "application/x-amz-json-1.0"
        headers["content-length"] = str(len(data))
        return AWSResponse(request.url, 200, headers, _Body(data))
