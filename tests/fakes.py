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
from taskgate.domain.limits import Limits
from taskgate.domain.results import ResultStore
from taskgate.domain.service import TaskService
from taskgate.domain.sweeper import Sweeper
from taskgate.domain.worker import Worker
from taskgate.protocol.calls.slots import InlineSlots
from taskgate.protocol.server import McpServer
from taskgate.protocol.v2025.streams import ResultStreams
from taskgate.protocol.wire.request_state import RequestStates
from taskgate.root import Taskgate
from taskgate.testing.memory import FakeClock, Memory
from taskgate.tools.registry import ToolRegistry

# The tools the unit tier serves: what a deployment can load, plus the test-only tools.
TEST_TOOL_MODULES = (*EXAMPLE_TOOL_MODULES.split(","), "tests.fixture_tools")


def unit_settings(**overrides: Any) -> Settings:
    """Settings for a root on the in-memory ports: the defaults a deployment has, except a
    stream may wait 1 s (on the fake clock: it costs nothing and exercises the waiting)."""
    unknown = set(overrides) - set(Settings.variables())
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
        return self.memory.step(self.worker, task_id)

    def finish_job(
        self, task_id: str, output: Any = None, *, error: str | None = None, cause: str = ""
    ) -> None:
        """The job the task waits on ends (``error``: failed so); see ``Memory.finish_job``."""
        self.memory.finish_job(task_id, output, error=error, cause=cause)

    def job_request(self, task_id: str) -> dict[str, Any]:
        """What the state machine would start the task's job with (its jobRequest)."""
        return self.store.job_requests[task_id]

    def settle(self, max_steps: int = 100) -> None:
        """Run every queued execution until each has finished or parked."""
        self.memory.settle(self.worker, max_steps)

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
