"""One step of a task's work, as the state machine's RunTool state asks for it.

The step reads the task row, runs the tool with a context bound to that row,
and either records the terminal outcome (a conditional write, so cancelled
stays cancelled) or tells the state machine to park for input or to run the
next step, or to start a job the tool handed off (jobs/vocabulary.py) and wait for it.
Parking, continuing and handing off reach the state machine as the signal exceptions
below, whose names its Catch rules match (statemachines/task.asl.json).
"""

from __future__ import annotations

import contextlib
import dataclasses
import enum
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from ..codes import INTERNAL_ERROR, INVALID_PARAMS
from ..jobs.kinds import KINDS
from ..jobs.vocabulary import CallbackSlot, JobRequest, JobSpec
from ..text import cut
from ..tools.context import (
    CheckpointTooLarge,
    HandedOff,
    InputNeeded,
    ProtocolError,
    TaskCancelled,
    TaskYield,
    ToolContext,
    ToolError,
)
from ..tools.input import ClientCapabilities
from ..tools.peer import Peer, at_least
from ..tools.registry import Tool, ToolRegistry
from . import callbacks, history
from .durations import ToolDurations
from .ending import HUNG_UP, TaskEnder
from .errors import PayloadTooLarge, ServiceUnavailable, TransitionRejected
from .limits import MAX_ROW_BYTES, MAX_STATUS_MESSAGE_BYTES, Limits, json_size, map_size, row_size
from .model import Outcome, TaskRecord, TaskStatus
from .ports import Clock, TaskStore
from .progress import ProgressReport, bounded_line, bounded_progress, rises, with_line, with_report
from .results import ResultStore

logger = logging.getLogger(__name__)


class TaskgateInputRequired(Exception):
    """The step ended with questions stored: the state machine parks (its Catch)."""


class TaskgateContinue(Exception):
    """The step ended at a checkpoint: the state machine runs the next one (its Catch)."""


class TaskgateHandOff(Exception):
    """The step ended with a job stored: the state machine starts it and waits (its Catch)."""


# The errors a step raises on purpose; the state machine catches them by these names.
SIGNALS: tuple[type[Exception], ...] = (TaskgateInputRequired, TaskgateContinue, TaskgateHandOff)

# A job's wait (the state's TimeoutSeconds) lasts this much past the task's deadline: the
# sweeper, which also stops the job, fails the task first; the timeout is the backstop.
JOB_TIMEOUT_GRACE_SECONDS = 900
# A callback's wait lasts this much past its URL's expiry: a delivery that races the
# deadline is told plainly that the URL expired, and the wait then times out.
CALLBACK_GRACE_SECONDS = 5


class StepKind(enum.StrEnum):
    FINISHED = "finished"  # nothing more for this execution to do
    INPUT_REQUIRED = "input_required"  # questions stored: park
    CONTINUE = "continue"  # checkpointed, out of time: run the next step
    HAND_OFF = "hand_off"  # a job stored: start it and wait for it


@dataclass(frozen=True)
class StepOutcome:
    """What one worker step did."""

    kind: StepKind
    # The terminal status this step wrote; None when it wrote none (the task had
    # already ended elsewhere, e.g. cancelled, or the step parks or continues).
    status: TaskStatus | None = None
    owner: str | None = None
    # Creation to the end this step wrote, for the time-to-terminal metric.
    age_ms: int | None = None
    # Why the task failed (its statusMessage), when this step failed it.
    reason: str | None = None

    @property
    def reported_status(self) -> str | None:
        """What the step's audit line and metric call it: the status it wrote, or how it left."""
        if self.kind is StepKind.FINISHED:
            return self.status.value if self.status else None
        return self.kind.value

    def raise_signal(self) -> None:
        """Leave RunTool through its Catch rules when the execution must park or loop."""
        if self.kind is StepKind.INPUT_REQUIRED:
            raise TaskgateInputRequired()
        if self.kind is StepKind.CONTINUE:
            raise TaskgateContinue()
        if self.kind is StepKind.HAND_OFF:
            raise TaskgateHandOff()

    def payload(self) -> dict[str, Any]:
        """What the worker Lambda returns for a finished step (RunTool discards it)."""
        return {"kind": self.kind.value, "status": self.status.value if self.status else None}


_NOTHING = StepOutcome(StepKind.FINISHED)


class _StoreControl:
    """The tool's context, bound to its row. ``row`` is the row as this step has
    written it: nothing else writes a working task's fields while its step runs, so
    the step can bound every write against the 400 KB item before sending it.

    Progress and log lines are written at most once per ``pollInterval`` (clients poll
    no faster, so a write made more often is never seen and only costs a write); what
    a skipped write held is written by the next one, or by ``flush`` when the step
    ends: the last update is never dropped."""

    def __init__(
        self,
        store: TaskStore,
        record: TaskRecord,
        clock: Clock,
        remaining_ms: Callable[[], int] | None,
        yield_margin_ms: int,
        retries: int,
        limits: Limits,
        max_runtime_ms: int = 0,
        callback_base_url: str = "",
    ) -> None:
        self._store = store
        self._max_runtime_ms = max_runtime_ms
        self._callback_base_url = callback_base_url
        self._record = record
        self.row = record
        self._limits = limits
        self._clock = clock
        self._remaining_ms = remaining_ms
        self._yield_margin_ms = yield_margin_ms
        self._retries = retries
        self._min_interval = record.poll_interval_ms / 1000
        self._last_write = float("-inf")
        self._last_check = float("-inf")
        self._cancelled = False
        self._pending: ProgressReport | None = None

    def _next(self) -> ProgressReport:
        row = self.row
        return self._pending or ProgressReport(
            row.status_message or "", row.progress, row.progress_count, row.log_lines, row.log_count
        )

    def progress(self, status: str, value: float, total: float | None, message: str | None) -> None:
        last = self._next()
        # A progress report never fails a task: an overlong message is cut.
        report = dataclasses.replace(last, message=cut(status, MAX_STATUS_MESSAGE_BYTES))
        if rises(last.progress, value):
            # Numbers that do not rise (a tool run again from the top after a question, or
            # resumed from a checkpoint) are not stored: no stream could send them.
            report = dataclasses.replace(
                report,
                progress=bounded_progress(value, total, message),
                progress_count=last.progress_count + 1,
            )
        self._pending = report
        self._write_if_due()

    def log(self, level: str, data: Any) -> None:
        threshold = self._record.log_level
        if threshold is None or not at_least(level, threshold):
            return  # nobody asked for lines this low (or for lines at all)
        last = self._next()
        self._pending = dataclasses.replace(
            last, log_lines=with_line(last.log_lines, bounded_line(level, data)), log_count=last.log_count + 1
        )
        self._write_if_due()

    def _write_if_due(self) -> None:
        now = time.monotonic()
        if now - self._last_write < self._min_interval:
            return
        self._last_write = now
        self._write(check_caller=True)

    def flush(self) -> bool:
        """Write what is pending, at the end of the step; False when the task ended under it."""
        if self._pending is None:
            return True
        try:
            self._write(check_caller=False)
        except TaskCancelled:
            return False
        return True

    def _write(self, *, check_caller: bool) -> None:
        report = self._fitted(self._next())
        at = self._clock()
        try:
            self._store.report_progress(
                self._record.task_id, report, at, self._record.kept_alive(at), check_caller=check_caller
            )
        except TransitionRejected as exc:
            current = self._store.get(self._record.task_id)
            if current is not None and not current.status.terminal and current.caller_gone(at):
                self._hang_up(at)
            raise TaskCancelled(self._record.task_id) from exc
        self._pending = None
        self.row = with_report(self.row, report)

    def _fitted(self, report: ProgressReport) -> ProgressReport:
        """``report`` with its oldest log lines dropped while the row would not fit."""
        while report.log_lines and row_size(with_report(self.row, report)) > MAX_ROW_BYTES:
            report = dataclasses.replace(report, log_lines=report.log_lines[1:])
        return report

    def _hang_up(self, at: int) -> None:
        """The cooperative end of a watched task whose caller went away for good."""
        with contextlib.suppress(TransitionRejected):  # it ended some other way meanwhile
            self._store.cancel(self._record.task_id, HUNG_UP, at, self._record.kept_alive(at))

    def is_cancelled(self) -> bool:
        # A strongly consistent read, at most once a pollInterval: a tool may check every
        # few milliseconds, and a cancel is seen within a second all the same.
        now = time.monotonic()
        if self._cancelled or now - self._last_check < self._min_interval:
            return self._cancelled
        self._last_check = now
        record = self._store.get(self._record.task_id)
        at = self._clock()
        if record is not None and not record.status.terminal and record.caller_gone(at):
            self._hang_up(at)
            record = None
        self._cancelled = record is None or record.status.terminal
        return self._cancelled

    def checkpoint(self, state: Any) -> None:
        size, room = json_size(state), self._limits.checkpoint_room(self.row)
        if size > room:
            raise CheckpointTooLarge(size, room)
        at = self._clock()
        # Decided before the write, so that the write which sends the execution round
        # again also counts what that round adds to its history.
        yielding = self._remaining_ms is not None and self._remaining_ms() < self._yield_margin_ms
        events = history.events_for_continue(self._retries) if yielding else 0
        try:
            self._store.save_checkpoint(
                self._record.task_id, state, at, self._record.kept_alive(at), history_events=events
            )
        except TransitionRejected as exc:
            raise TaskCancelled(self._record.task_id) from exc
        self.row = dataclasses.replace(self.row, checkpoint=state)
        if yielding:
            raise TaskYield(self._record.task_id)

    def hand_off(self, key: str, spec: JobSpec) -> None:
        record = self._record
        now = self._clock()
        # A job may wait as long as the task may live: one TTL from now (as a question
        # may), and never past MaxTaskRuntimeSeconds.
        deadline = now + record.retention_ms
        if self._max_runtime_ms:
            deadline = min(deadline, record.created_at_ms + self._max_runtime_ms)
        if spec.timeout_seconds:
            deadline = min(deadline, now + spec.timeout_seconds * 1000)
        if deadline <= now:
            raise ToolError(
                f"No time is left to wait for a job: the task's deadline has passed ({spec.label(key)})."
            )
        job = spec.pending(key, now, deadline)
        seconds = -(-(deadline - now) // 1000)
        slot: CallbackSlot | None = None
        url = ""
        if KINDS[spec.kind].callback:
            if spec.send is None:
                raise ToolError(
                    "A Callback needs send(url): the URL is shown once, to the system that calls it."
                )
            if not self._callback_base_url:
                raise ToolError(
                    "No callback URL can be made: this deployment's public URL is not set "
                    "(PUBLIC_URL; the template sets it)."
                )
            secret = callbacks.new_secret()
            slot = CallbackSlot(callbacks.hash_secret(secret), deadline, key)
            url = callbacks.callback_url(self._callback_base_url, record.task_id, secret)
            timeout = seconds + CALLBACK_GRACE_SECONDS
            wanted = spec.heartbeat_seconds or 0
            request = JobRequest(job, spec.params, timeout, wanted if 0 < wanted < timeout else 0)
        else:
            request = JobRequest(job, spec.params, seconds + JOB_TIMEOUT_GRACE_SECONDS)
        payload = request.to_json()
        size, room = json_size(payload), self._limits.job_request_room(self.row)
        if size > room:
            raise ToolError(f"The request for {spec.label(key)} is {size} bytes; the limit is {room}.")
        events = history.events_for_hand_off(self._retries)
        try:
            self._store.hand_off(
                record.task_id,
                job,
                payload,
                now,
                record.kept_alive(now),
                callback=slot,
                history_events=events,
            )
        except TransitionRejected as exc:
            raise TaskCancelled(record.task_id) from exc
        self.row = dataclasses.replace(self.row, job=job, callback=slot)
        if spec.send is not None and url:
            # Stored first: a system that answers at once finds the callback waiting.
            spec.send(url)


class Worker:
    def __init__(
        self,
        store: TaskStore,
        tools: ToolRegistry,
        clock: Clock,
        results: ResultStore,
        *,
        limits: Limits,
        max_runtime_ms: int,
        yield_margin_ms: int,
        history_budget: int = history.HISTORY_BUDGET,
        callback_base_url: str = "",
        durations: ToolDurations | None = None,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self._callback_base_url = callback_base_url
        self._durations = durations
        self._monotonic = monotonic
        self._store = store
        self._limits = limits
        self._tools = tools
        self._clock = clock
        self._results = results
        self._ender = TaskEnder(store, None, clock)
        self._max_runtime_ms = max_runtime_ms
        self._yield_margin_ms = yield_margin_ms
        self._history_budget = history_budget

    def run_step(
        self, task_id: str, remaining_ms: Callable[[], int] | None = None, *, retries: int = 0
    ) -> StepOutcome:
        """``retries``: how many attempts of this step Step Functions already retried
        (``$$.State.RetryCount``); they count against the execution's history.

        AWS trouble (``ServiceUnavailable``: throttling, a 5xx, no connection) is raised,
        not recorded: the state machine retries the step with backoff and jitter, and
        fails the task only when that runs out."""
        contexts: list[ToolContext] = []
        try:
            return self._run_step(task_id, remaining_ms, retries, contexts)
        finally:
            for ctx in contexts:
                ctx.close()  # the step's scratch directory goes with it, however it ended

    def _run_step(
        self,
        task_id: str,
        remaining_ms: Callable[[], int] | None,
        retries: int,
        contexts: list[ToolContext],
    ) -> StepOutcome:
        record = self._store.get(task_id)
        if record is None or record.status is not TaskStatus.WORKING:
            return _NOTHING
        if self._max_runtime_ms and self._clock() - record.created_at_ms > self._max_runtime_ms:
            return self._fail(record, INTERNAL_ERROR, "The task exceeded its maximum run time.")
        if record.history_events >= self._history_budget:
            message = history.exhausted_message(record.history_events, self._history_budget)
            return self._fail(record, INTERNAL_ERROR, message)
        tool = self._tools.get(record.tool)
        if tool is None:
            return self._fail(record, INVALID_PARAMS, f"Unknown tool: {record.tool}")
        control = _StoreControl(
            self._store,
            record,
            self._clock,
            remaining_ms,
            self._yield_margin_ms,
            retries,
            self._limits,
            max_runtime_ms=self._max_runtime_ms,
            callback_base_url=self._callback_base_url,
        )
        ctx = ToolContext(
            task_id=task_id,
            answers=record.input_responses,
            state=record.checkpoint,
            control=control,
            # A task has no response stream: progress is its statusMessage, logs go to our log.
            peer=Peer(capabilities=ClientCapabilities(record.client_capabilities)),
            owner=record.owner,
            job_outcomes=record.job_outcomes,
        )
        contexts.append(ctx)
        result, raised = self._run_body(tool, record, ctx)
        try:
            if raised is not None:
                raise raised
        except InputNeeded as need:
            if not control.flush():
                return _NOTHING  # cancelled while the tool ran: never park
            size, room = map_size(need.requests), self._limits.questions_room(control.row)
            if size > room:
                return self._fail(
                    record, INTERNAL_ERROR, f"The tool's questions are {size} bytes; the limit is {room}."
                )
            at = self._clock()
            events = history.events_for_question_round(retries)
            try:
                self._store.ask(task_id, need.requests, at, record.kept_alive(at), history_events=events)
            except TransitionRejected:
                return _NOTHING  # cancelled while the tool ran: never park
            return StepOutcome(StepKind.INPUT_REQUIRED)
        except TaskYield:
            control.flush()  # the next step reads what this one reported last
            return StepOutcome(StepKind.CONTINUE)
        except HandedOff:
            return StepOutcome(StepKind.HAND_OFF)
        except TaskCancelled:
            return _NOTHING
        except ServiceUnavailable:
            # From the tool's context (a throttled progress or checkpoint write) or from
            # an adapter the tool uses: the step is retried, the task is not failed.
            raise
        except ProtocolError as exc:
            return self._fail(record, exc.code, f"Tool execution failed: {exc.message}", exc.to_error())
        except ValidationError as exc:
            return self._fail(
                record, INVALID_PARAMS, f"Invalid arguments for {record.tool}: {exc.error_count()} error(s)"
            )
        except Exception:
            # The client gets a reason and the key to search the log by, never the trace;
            # the trace goes to our logs, under the task's id.
            logger.exception("tool %s raised", record.tool, extra={"taskId": task_id})
            message = f"Internal error while running the tool (the worker's log has the trace under taskId {task_id})"
            error = {"code": INTERNAL_ERROR, "message": message, "data": {"taskId": task_id}}
            return self._fail(
                record, INTERNAL_ERROR, message, error, reason="Internal error while running the tool"
            )
        if not control.flush():
            return _NOTHING  # cancelled while the tool ran: cancelled stays cancelled
        return self._complete(record, result, control.row)

    def _run_body(self, tool: Tool, record: TaskRecord, ctx: ToolContext) -> tuple[Any, Exception | None]:
        """The tool's body: its result, or what it raised (for the step to read). How long it
        ran is learned before any outcome is written (domain/durations.py), so a caller that
        sees the task end finds the tool's time known; a body cut short by a cancel, or by
        AWS trouble the step is retried for, says nothing of how long the tool runs."""
        started = self._monotonic()
        outcome: tuple[Any, Exception | None]
        try:
            outcome = tool.run(record.arguments, ctx), None
        except Exception as exc:  # the step reads each kind
            outcome = None, exc
        finally:
            # Before the outcome is written: a client that sees the task end (or park)
            # finds nothing of this step left on the machine.
            ctx.close()
        if not isinstance(outcome[1], (TaskCancelled, ServiceUnavailable)):
            self._learn(tool, self._monotonic() - started)
        return outcome

    def _learn(self, tool: Tool, seconds: float) -> None:
        if self._durations is not None:
            self._durations.note(tool, seconds)

    def _complete(self, record: TaskRecord, result: dict[str, Any], row: TaskRecord) -> StepOutcome:
        is_error = bool(result.get("isError"))
        try:
            # Beside the result, the row keeps what it holds now (arguments, answers,
            # checkpoint, status message): it goes to the bucket unless all fit.
            placed = self._results.place(record.task_id, result, row_size(row), keep_ms=record.retention_ms)
        except PayloadTooLarge as exc:
            return self._fail(record, INTERNAL_ERROR, f"{exc} and no result bucket is configured")
        now = self._clock()
        wrote = self._store.finish(
            record.task_id,
            status=TaskStatus.COMPLETED,
            outcome=Outcome.TOOL_ERROR if is_error else Outcome.SUCCESS,
            result=placed.inline,
            error=None,
            message="The tool reported an error." if is_error else "The operation completed.",
            now_ms=now,
            alive=record.kept_alive(now),
            result_ref=placed.ref,
        )
        if not wrote:
            self._results.discard(placed)
            return _NOTHING
        return self._ended(record, TaskStatus.COMPLETED, now)

    def _fail(
        self,
        record: TaskRecord,
        code: int,
        message: str,
        error: dict[str, Any] | None = None,
        *,
        reason: str | None = None,
    ) -> StepOutcome:
        """``reason``: what the step's audit line says (the dashboard groups failures by it),
        when the client's ``message`` names this task."""
        if not self._ender.fail(record, message, code=code, error=error):
            return _NOTHING
        return self._ended(record, TaskStatus.FAILED, self._clock(), reason or message)

    @staticmethod
    def _ended(record: TaskRecord, status: TaskStatus, now_ms: int, reason: str | None = None) -> StepOutcome:
        return StepOutcome(StepKind.FINISHED, status, record.owner, now_ms - record.created_at_ms, reason)
