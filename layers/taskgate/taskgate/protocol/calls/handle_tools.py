"""Tasks as tools: a long plain call handed to the model as a task handle, and the tools
that drive the task.

When a host calls a long tool plainly and cannot wait for it (its own request timeout:
60 s in the TypeScript SDK, 5 s in OpenAI Agents), the call is answered at once with an
ordinary CallToolResult naming a task handle, and three more tools let the model ask how
the task is doing, fetch its result and cancel it. Nothing here is a task result, so it
is legal in every protocol era and needs nothing of the client. A handle is the hidden
task's id (unguessable) and is read under the caller's identity: another caller's
handle is indistinguishable from one that never existed, as with ``tasks/get``.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel, Field, ValidationError

from ...codes import INVALID_PARAMS
from ...domain.errors import TaskNotFound
from ...domain.model import Outcome, TaskRecord, TaskStatus
from ...domain.service import TaskService
from ...tools.input import required_capability
from ..wire.errors import RpcError
from ..wire.exchange import validation_data
from .caller import Caller
from .services import Services

STATUS = "taskgate_task_status"
RESULT = "taskgate_task_result"
CANCEL = "taskgate_task_cancel"
NAMES = (STATUS, RESULT, CANCEL)


class HandleRef(BaseModel):
    handle: str = Field(min_length=1, max_length=80, description="The task handle a long tool call returned")


_DESCRIPTIONS = {
    STATUS: "How a background task started by a long tool call is doing: its status and latest progress.",
    RESULT: "The result of a background task started by a long tool call, once it has finished.",
    CANCEL: "Stop a background task started by a long tool call.",
}


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


def _waiting(record: TaskRecord, caller: Caller | None) -> str:
    """What ``taskgate_task_result`` says of a task that waits on its user's answer, to a
    caller that cannot be asked it here."""
    messages = [
        str(params.get("message"))
        for request in record.input_requests.values()
        if isinstance(params := request.get("params"), dict) and params.get("message")
    ]
    about = f" to: {'; '.join(messages)}" if messages else ""
    text = f"Task {record.task_id} ({record.tool}) is waiting for its user's answer{about}."
    if caller is None or not caller.answers_inline:
        return f"{text} Only a client that speaks MCP tasks can ask its user (tasks/result)."
    lacking = sorted(
        {
            required_capability(request)[1]
            for request in record.input_requests.values()
            if not caller.capabilities.allows(request)
        }
    )
    if lacking:
        return (
            f"{text} This client cannot ask its user: it did not declare {', '.join(lacking)}; "
            f"a client that declares it is asked by {RESULT}."
        )
    return f"{text} This call has had as many rounds as clients take; call {RESULT} again to be asked."


def handed(record: TaskRecord, expected_seconds: float | None) -> dict[str, Any]:
    """The answer of a plain call handed to the model as a task handle."""
    about = f" (it takes about {_about(expected_seconds)})" if expected_seconds else ""
    ref = json.dumps({"handle": record.task_id})
    text = (
        f"{record.tool} is running as background task {record.task_id}{about}; it keeps running "
        f"on the server. Check on it with {STATUS}, get its result with {RESULT} once it has "
        f"finished, or stop it with {CANCEL}; each takes {ref}."
    )
    return _text(text, data={**_state(record), "expectedSeconds": expected_seconds})


class HandleTools:
    def __init__(self, tasks: TaskService) -> None:
        self._tasks = tasks

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

    def call(self, owner: str, name: str, arguments: dict[str, Any] | None) -> dict[str, Any]:
        handle = self.handle(name, arguments)
        try:
            record = self._tasks.get(owner, handle)
        except TaskNotFound:
            return self.missing(handle)
        return self.answer(owner, name, record)

    def answer(
        self, owner: str, name: str, record: TaskRecord, *, caller: Caller | None = None
    ) -> dict[str, Any]:
        """What tool ``name`` answers about ``record``, the owner's task (``caller``: who asks,
        when a task that waits on its user's answer could be asked of it)."""
        if name == STATUS:
            return self._status(record)
        if name == RESULT:
            if record.status is TaskStatus.INPUT_REQUIRED:
                return _text(_waiting(record, caller), data=_state(record))
            return self._result(record)
        return self._cancel(owner, record)

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
            message += " It is waiting for answers only a client that speaks MCP tasks can give."
        return _text(
            f"Task {record.task_id} ({record.tool}) is {state['status']}.{progress}{message}", data=state
        )

    def _result(self, record: TaskRecord) -> dict[str, Any]:
        if not record.status.terminal:
            return _text(
                f"Task {record.task_id} ({record.tool}) is still {_status(record)}; ask again later.",
                data=_state(record),
            )
        if record.status is TaskStatus.CANCELLED:
            return _text(f"Task {record.task_id} was cancelled.", error=True, data=_state(record))
        if record.status is TaskStatus.COMPLETED:
            result = self._tasks.with_result(record).result
            if result is not None:
                return result  # the tool's own CallToolResult
        error = record.error or {}
        return _text(f"Task {record.task_id} failed: {error.get('message', 'no reason given')}", error=True)

    def _cancel(self, owner: str, record: TaskRecord) -> dict[str, Any]:
        outcome = self._tasks.cancel(owner, record.task_id)
        if outcome.cancelled_now:
            return _text(f"Task {record.task_id} is cancelled; its work stops.", data=_state(outcome.record))
        return _text(
            f"Task {record.task_id} had already ended ({_status(outcome.record)}).",
            data=_state(outcome.record),
        )


def handles_listed(services: Services) -> bool:
    """Whether the handle tools are offered: a long plain call may be handed to the model as
    a task handle, and some tool runs long."""
    return services.policy.handles and any(t.expected_seconds is not None for t in services.tools)


def listed_tools(services: Services, *, with_task_support: bool) -> list[dict[str, Any]]:
    """``tools/list``: the tools, and the handle tools when they are offered."""
    tools = [t.describe(with_task_support=with_task_support) for t in services.tools]
    if handles_listed(services):
        tools += HandleTools.definitions(with_task_support=with_task_support)
    return tools
