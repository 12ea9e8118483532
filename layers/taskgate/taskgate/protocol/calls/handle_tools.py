"""Tasks as tools: a long plain call handed to the model as a task handle, and the tools
that drive the task.

When a host calls a long tool plainly and cannot wait for it (its own request timeout:
60 s in the TypeScript SDK, 5 s in OpenAI Agents), the call is answered with an ordinary
CallToolResult naming a task handle, and three more tools let the model ask how the task
is doing, fetch its result and cancel it. Nothing here is a task result, so it is legal in
every protocol era and needs nothing of the client. A handle is the hidden task's id
(unguessable) and is read under the caller's identity: another caller's handle is
indistinguishable from one that never existed, as with ``tasks/get``.

Each turn of the model costs, so ``taskgate_task_result`` waits for the task (as long as
its caller waits, within the front's cut: ``Caller.budget_seconds``) before it answers that
the task is still running, and says when to ask again. The tools are listed whenever
handles may be given (``CallHandles``), so ``tools/list`` never changes as taskgate learns
how long tools run. A task waiting for an answer says what it asks, for the model to tell
its user: the model is given no way to answer it.
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

from pydantic import BaseModel, Field, ValidationError

from ...codes import INVALID_PARAMS
from ...domain.errors import TaskNotFound
from ...domain.model import Outcome, TaskRecord, TaskStatus
from ...domain.service import TaskService
from ...text import cut
from ...tools.input import required_capability
from ..wire.errors import RpcError
from ..wire.exchange import validation_data
from .caller import Caller
from .services import Services
from .waiting import RowWait

STATUS = "taskgate_task_status"
RESULT = "taskgate_task_result"
CANCEL = "taskgate_task_cancel"
NAMES = (STATUS, RESULT, CANCEL)


class HandleRef(BaseModel):
    handle: str = Field(min_length=1, max_length=80, description="The task handle a long tool call returned")


_DESCRIPTIONS = {
    STATUS: "How a background task started by a long tool call is doing: its status and latest progress.",
    RESULT: (
        "The result of a background task started by a long tool call: waits for it to finish "
        "(as long as this call can wait) and says when to ask again if it has not."
    ),
    CANCEL: "Stop a background task started by a long tool call.",
}
# What the status of a task waiting for an answer shows of each question, at most.
QUESTION_BYTES = 500


def _text(text: str, *, error: bool = False, data: dict[str, Any] | None = None) -> dict[str, Any]:
    result: dict[str, Any] = {"content": [{"type": "text", "text": text}], "isError": error}
    if data is not None:
        result["structuredContent"] = data
    return result


def _about(seconds: float) -> str:
    if seconds < 90:
        return f"{seconds:.0f} seconds"
    if seconds < 5400:
        return f"{seconds / 60:.0f} minutes"
    return f"{seconds / 3600:.1f} hours"


def _status(record: TaskRecord) -> str:
    if record.status is TaskStatus.COMPLETED and record.outcome is Outcome.TOOL_ERROR:
        return "failed"
    return record.status.value


def _state(record: TaskRecord) -> dict[str, Any]:
    state: dict[str, Any] = {"handle": record.task_id, "tool": record.tool, "status": _status(record)}
    if record.status_message:
        state["message"] = record.status_message
    if record.progress is not None:
        state["progress"] = record.progress.progress
        if record.progress.total is not None:
            state["total"] = record.progress.total
    return state


def _asks(record: TaskRecord) -> list[str]:
    """What a task waiting for answers asks, in words for the model to pass on."""
    asks = []
    for request in record.input_requests.values():
        method = request.get("method") if isinstance(request, dict) else None
        params = request.get("params") if isinstance(request, dict) else None
        message = params.get("message") if isinstance(params, dict) else None
        if method == "elicitation/create":
            asks.append(cut(str(message or "a question"), QUESTION_BYTES))
        elif method == "sampling/createMessage":
            asks.append("a reply from the client's own model")
        elif method == "roots/list":
            asks.append("the client's roots (the folders it may work in)")
        else:
            asks.append(f"an answer to a {method or 'request'}")
    return asks


def _not_asked(record: TaskRecord, caller: Caller | None) -> str:
    """Why a caller that answers in rounds (2026-07-28) was not asked the task's questions
    through ``taskgate_task_result`` itself; empty for any other caller."""
    if caller is None or not caller.answers_inline:
        return ""
    lacking = sorted(
        {
            required_capability(request)[1]
            for request in record.input_requests.values()
            if not caller.capabilities.allows(request)
        }
    )
    if lacking:
        return (
            f"This client cannot ask its user: it did not declare {', '.join(lacking)}. A client that "
            f"declares it gets the question from {RESULT} and asks its user itself."
        )
    return f"This call of {RESULT} has had as many rounds as clients take: call it again to be asked."


def handed(
    record: TaskRecord, expected_seconds: float | None, claim_within_seconds: float | None = None
) -> dict[str, Any]:
    """The answer of a plain call handed to the model as a task handle (``claim_within_seconds``:
    it must be asked after within this long, or the task is taken as abandoned)."""
    about = f" (it takes about {_about(expected_seconds)})" if expected_seconds else ""
    ref = json.dumps({"handle": record.task_id})
    text = (
        f"{record.tool} is running as background task {record.task_id}{about}; it keeps running "
        f"on the server. Get its result with {RESULT} (it waits for the task), check on it with "
        f"{STATUS}, or stop it with {CANCEL}; each takes {ref}."
    )
    data: dict[str, Any] = {**_state(record), "expectedSeconds": expected_seconds}
    if claim_within_seconds is not None:
        text += (
            f" Ask for it within {claim_within_seconds:.0f} seconds: a task nobody asks after by then is"
            " taken as abandoned and stopped."
        )
        data["claimWithinSeconds"] = claim_within_seconds
    return _text(text, data=data)


class HandleTools:
    def __init__(self, tasks: TaskService, waiter: RowWait | None = None) -> None:
        self._tasks = tasks
        self._waiter = waiter

    @staticmethod
    def owns(name: str) -> bool:
        return name in NAMES

    @staticmethod
    def definitions(*, with_task_support: bool) -> list[dict[str, Any]]:
        schema = HandleRef.model_json_schema()
        schema.pop("title", None)
        tools = []
        for name in NAMES:
            tool: dict[str, Any] = {"name": name, "description": _DESCRIPTIONS[name], "inputSchema": schema}
            if with_task_support:
                tool["execution"] = {"taskSupport": "forbidden"}
            tools.append(tool)
        return tools

    @staticmethod
    def handle(name: str, arguments: dict[str, Any] | None) -> str:
        """The handle a call of tool ``name`` names, or -32602."""
        try:
            return HandleRef.model_validate(arguments or {}).handle
        except ValidationError as exc:
            raise RpcError(
                INVALID_PARAMS, f"Invalid arguments for tool {name}", {"errors": validation_data(exc)}
            ) from exc

    @staticmethod
    def missing(handle: str) -> dict[str, Any]:
        return _text(f"There is no task {handle} (or it has expired).", error=True)

    def call(
        self, owner: str, name: str, arguments: dict[str, Any] | None, *, wait_seconds: float = 0.0
    ) -> dict[str, Any]:
        """``wait_seconds``: how long ``taskgate_task_result`` may wait for the task."""
        handle = self.handle(name, arguments)
        try:
            record = self._tasks.get(owner, handle)
        except TaskNotFound:
            return self.missing(handle)
        if name != CANCEL:
            record = self.claimed(record)
        if name == STATUS:
            return self._status(record)
        if name == RESULT:
            return self.result(owner, *self.wait(owner, record, wait_seconds))
        return self._cancel(owner, record)

    def claimed(self, record: TaskRecord) -> TaskRecord:
        """``record`` once its handle was asked after: the model holds the handle, so its
        caller did not go away (the watch a hand-over set ends)."""
        if record.watched_until_ms is None or record.status.terminal:
            return record
        self._tasks.watch(record.task_id, None)
        return replace(record, watched_until_ms=None)

    def wait(self, owner: str, record: TaskRecord, wait_seconds: float) -> tuple[TaskRecord, float]:
        """The task as ``taskgate_task_result`` answers it: waited on while it works, for at
        most ``wait_seconds``; and how long that took."""
        if self._waiter is not None and record.status is TaskStatus.WORKING:
            return self._waiter.wait_for(owner, record, wait_seconds)
        return record, 0.0

    def result(
        self, owner: str, record: TaskRecord, waited: float, *, caller: Caller | None = None
    ) -> dict[str, Any]:
        """What ``taskgate_task_result`` answers of ``record`` once it has waited ``waited``
        (``caller``: one that answers in rounds but could not be asked the task's questions)."""
        if not record.status.terminal:
            return self._not_yet(record, waited, caller)
        if record.status is TaskStatus.CANCELLED:
            return _text(f"Task {record.task_id} was cancelled.", error=True, data=_state(record))
        if record.status is TaskStatus.COMPLETED:
            result = self._tasks.with_result(record).result
            if result is not None:
                return result  # the tool's own CallToolResult
        error = record.error or {}
        return _text(f"Task {record.task_id} failed: {error.get('message', 'no reason given')}", error=True)

    @staticmethod
    def _status(record: TaskRecord) -> dict[str, Any]:
        state = _state(record)
        progress = ""
        if "progress" in state:
            progress = f" Progress: {state['progress']:g}" + (
                f" of {state['total']:g}" if "total" in state else ""
            )
        message = f" ({record.status_message})" if record.status_message else ""
        if record.status is TaskStatus.INPUT_REQUIRED:
            asks = _asks(record)
            state["asks"] = asks
            message += (
                " It is waiting for an answer to: "
                + "; ".join(f'"{ask}"' for ask in asks)
                + ". Tell your user what it asks: only they can answer it, in a client that speaks MCP"
                " tasks. Do not answer it for them."
            )
        return _text(
            f"Task {record.task_id} ({record.tool}) is {state['status']}.{progress}{message}", data=state
        )

    def _not_yet(self, record: TaskRecord, waited: float, caller: Caller | None = None) -> dict[str, Any]:
        """A task still running (or asking) after this call's wait, and when to ask again."""
        if record.status is TaskStatus.INPUT_REQUIRED:
            status = self._status(record)
            why = _not_asked(record, caller)
            if why:
                status["content"][0]["text"] += f" {why}"
            return status
        state = {**_state(record), "waitedSeconds": round(waited, 1)}
        if waited:
            # Asking again at once costs nothing while the task runs: the next call waits too.
            state["askAgainInSeconds"] = 0
            again = f"Call {RESULT} again now: it waits for the task (this call waited {waited:.0f} s)."
        else:
            state["askAgainInSeconds"] = max(1, round(record.poll_interval_ms / 1000))
            again = f"Ask again in about {state['askAgainInSeconds']} s."
        progress = ""
        if "progress" in state:
            progress = (
                f" (progress {state['progress']:g}"
                + (f" of {state['total']:g}" if "total" in state else "")
                + ")"
            )
        return _text(
            f"Task {record.task_id} ({record.tool}) is still {_status(record)}{progress}. {again}", data=state
        )

    def _cancel(self, owner: str, record: TaskRecord) -> dict[str, Any]:
        outcome = self._tasks.cancel(owner, record.task_id)
        if outcome.cancelled_now:
            return _text(f"Task {record.task_id} is cancelled; its work stops.", data=_state(outcome.record))
        return _text(
            f"Task {record.task_id} had already ended ({_status(outcome.record)}).",
            data=_state(outcome.record),
        )


def handles_listed(services: Services) -> bool:
    """Whether the handle tools are offered: whenever a long plain call may be handed to the
    model as a task handle. Any tool may turn out to run long (nothing need be declared), and
    a list that changed as durations were learned would leave hosts with a stale one."""
    return services.policy.handles


def listed_tools(services: Services, *, with_task_support: bool) -> list[dict[str, Any]]:
    """``tools/list``: the tools, and the handle tools when they are offered."""
    tools = [t.describe(with_task_support=with_task_support) for t in services.tools]
    if handles_listed(services):
        tools += HandleTools.definitions(with_task_support=with_task_support)
    return tools
