"""``Memory``: one set of in-memory ports for the composition root, and the state machine
played over them (``step``, ``settle``, the jobs it starts and ends)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ...domain.errors import TransitionRejected
from ...domain.model import TaskStatus
from ...domain.ports import Clock
from ...jobs.kinds import KINDS
from ...protocol.wire.request_state import ephemeral_keys
from ...root import Ports
from .blobs import MemoryBlobs
from .clock import FakeClock
from .jobs import MemoryJobs
from .sessions import MemorySessionStore
from .sign_in import MemorySignInStore
from .store import MemoryTaskStore
from .workflow import MemoryWorkflow

if TYPE_CHECKING:
    from ...auth.build import SignInPorts
    from ...domain.worker import StepOutcome, Worker


@dataclass
class Memory:
    """One set of in-memory ports, kept so a test can look inside them and move the clock.

    ``ports()`` hands them to ``Taskgate``; ``blobs=False`` is a deployment without a
    result bucket. A stream's wait neither sleeps nor reads the real clock: it calls
    ``on_wait`` (a test runs the queued executions there) and moves ``stream_time``."""

    # A FakeClock (moved by the test) or the real one (``taskgate.clock.now_ms``: the bench).
    clock: Clock = field(default_factory=FakeClock)
    store: MemoryTaskStore = field(default_factory=MemoryTaskStore)
    workflow: MemoryWorkflow = field(default_factory=MemoryWorkflow)
    sessions: MemorySessionStore = field(default_factory=MemorySessionStore)
    blobs: MemoryBlobs = field(default_factory=MemoryBlobs)
    jobs: MemoryJobs = field(default_factory=MemoryJobs)
    sign_in: MemorySignInStore = field(default_factory=MemorySignInStore)
    # The secrets a tool reads with ``taskgate.tools.secret`` (ARN -> value): Secrets Manager's part.
    secrets: dict[str, str] = field(default_factory=dict)
    stream_time: float = 0.0
    on_wait: Callable[[], None] = lambda: None
    tokens: int = 0

    def step(self, worker: Worker, task_id: str) -> StepOutcome:
        """One RunTool step, then what the state machine does with its outcome: park on a
        new token (AwaitInput), run again (TaskgateContinue) or end the execution."""
        from ...domain.worker import StepKind

        outcome = worker.run_step(task_id)
        executions = self.workflow.executions
        if outcome.kind is StepKind.INPUT_REQUIRED:
            self.tokens += 1
            token = f"token-{self.tokens}"
            try:
                self.store.park(task_id, token, self.clock())
            except TransitionRejected:
                executions[task_id] = "SUCCEEDED"  # AwaitInput's Catch: Done
            else:
                self.workflow.waiting[token] = task_id
        elif outcome.kind is StepKind.CONTINUE:
            self.workflow.runnable.append(task_id)
        elif outcome.kind is StepKind.HAND_OFF:
            self.start_job(task_id)
        elif executions.get(task_id) == "RUNNING":
            executions[task_id] = "SUCCEEDED"
        return outcome

    def start_job(self, task_id: str) -> None:
        """What the state machine does with a job a step handed off (LoadJob, StartJob and
        the wait): a callback parks on a token (unless its outcome came first: then RunTool
        runs); any other job starts in ``jobs`` and runs until ``finish_job``."""
        record = self.store.get(task_id)
        request = self.store.job_requests.get(task_id)
        if record is None or record.status is not TaskStatus.WORKING or request is None:
            self.workflow.executions[task_id] = "SUCCEEDED"  # StartJob's Choice: Done
            return
        if KINDS[request["kind"]].callback:
            self.tokens += 1
            token = f"callback-token-{self.tokens}"
            try:
                self.store.park_callback(task_id, request["key"], token, self.clock())
            except TransitionRejected:
                self.workflow.runnable.append(task_id)  # AwaitCallback's Catch: RunTool decides
            else:
                self.workflow.waiting[token] = task_id
            return
        assert record.job is not None
        self.jobs.start(task_id, record.job)

    def finish_job(
        self, task_id: str, output: Any = None, *, error: str | None = None, cause: str = ""
    ) -> None:
        """The job the task waits on ends, with ``output`` (or failed, with ``error`` and
        ``cause``): the wait state's result or its Catch, then RecordJobOutcome (a cancel
        that came first wins), then RunTool."""
        job = self.jobs.running.pop(task_id)
        raw: dict[str, Any] = {"Error": error, "Cause": cause} if error else {"ok": True, "output": output}
        record = self.store.records[task_id]
        now = self.clock()
        try:
            self.store.record_job_outcome(task_id, job.key, raw, now, record.kept_alive(now))
        except TransitionRejected:
            self.workflow.executions[task_id] = "SUCCEEDED"  # RecordJobOutcome's Catch: Done
            return
        self.workflow.runnable.append(task_id)

    def settle(self, worker: Worker, max_steps: int = 100) -> None:
        """Run every queued execution until each has finished or parked, as the state
        machine would beside the API."""
        for _ in range(max_steps):
            if not self.workflow.runnable:
                return
            self.step(worker, self.workflow.runnable.pop(0))
        raise AssertionError(f"executions did not settle in {max_steps} steps")

    def _wait(self, seconds: float) -> None:
        self.stream_time += seconds
        self.on_wait()

    def ports(
        self, *, with_bucket: bool = True, keys: Callable[[], Sequence[bytes]] = ephemeral_keys
    ) -> Ports:
        return Ports(
            store=lambda: self.store,
            workflow=lambda: self.workflow,
            sessions=lambda: self.sessions,
            blobs=(lambda: self.blobs) if with_bucket else (lambda: None),
            request_state_keys=keys,
            clock=self.clock,
            sleep=self._wait,
            monotonic=lambda: self.stream_time,
            jobs=lambda: self.jobs,
            sign_in=self._sign_in_ports,
            tool_secrets=self._secret,
        )

    def _secret(self, arn: str) -> bytes:
        # A secret not set here is one the tool may not read (not in ToolSecretArns).
        return self.secrets[arn].encode()

    def _sign_in_ports(self) -> SignInPorts:
        from ...auth.build import SignInPorts
        from ...auth.signing import ephemeral_source

        return SignInPorts(store=lambda: self.sign_in, signing_keys=ephemeral_source())
