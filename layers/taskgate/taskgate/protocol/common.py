"""What both protocol eras share: the call context, the reply type, and tool plumbing."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError

from ..domain.errors import PayloadTooLarge, TaskNotFound, TooManyActiveTasks, WorkflowUnavailable
from ..domain.model import TaskRecord
from ..domain.service import TaskService
from ..tools.context import InputNeeded, ProtocolError, ToolContext
from ..tools.registry import Tool, ToolRegistry
from .jsonrpc import INTERNAL_ERROR, INVALID_PARAMS, Request, RpcError

# Told of every task event a client causes: (event, fields). The Lambda handler
# turns these into audit log lines and metrics; tests can collect them.
AuditHook = Callable[[str, dict[str, Any]], None]


@dataclass
class HttpReply:
    status: int
    body: dict[str, Any] | None = None
    headers: dict[str, str] = field(default_factory=dict)
    # Server-sent events, for a response that is a stream.
    stream: Iterator[str] | None = None


class CallContext:
    """Who is calling and with what headers; one per HTTP request."""

    def __init__(self, owner: str, headers: Mapping[str, str]) -> None:
        self.owner = owner
        self.headers = headers


# JSON-RPC leaves -32000..-32099 to implementations; MCP has not claimed this one.
TASK_LIMIT_REACHED = -32000

Handler = Callable[[Request, CallContext], "dict[str, Any] | HttpReply"]


def validation_data(exc: ValidationError) -> list[dict[str, Any]]:
    # Locations and messages only: echoing input values back could leak secrets into logs.
    return [{"path": list(e["loc"]), "message": e["msg"]} for e in exc.errors()]


# Far above any id we issue (36 characters), far below DynamoDB's 2 KB key limit.
MAX_ID_LENGTH = 256


def task_id_param(params: dict[str, Any]) -> str:
    task_id = params.get("taskId")
    if not isinstance(task_id, str) or not task_id or len(task_id) > MAX_ID_LENGTH:
        raise RpcError(INVALID_PARAMS, "Invalid params: taskId must be a task id string")
    return task_id


def answers_param(params: dict[str, Any], field: str = "inputResponses") -> dict[str, Any]:
    """Answers keyed by the question keys the server issued: non-empty, bounded strings."""
    answers = params.get(field)
    if answers is None:
        return {}
    if not isinstance(answers, dict):
        raise RpcError(INVALID_PARAMS, f"Invalid params: {field} must be an object")
    for key in answers:
        if not key or len(key) > MAX_ID_LENGTH:
            raise RpcError(
                INVALID_PARAMS, f"Invalid params: {field} keys must be 1 to {MAX_ID_LENGTH} characters"
            )
    return answers


class EraBase:
    def __init__(self, tasks: TaskService, tools: ToolRegistry, audit: AuditHook) -> None:
        self._tasks = tasks
        self._tools = tools
        self._audit = audit

    def _tool(self, params: dict[str, Any]) -> tuple[Tool, dict[str, Any]]:
        name = params.get("name")
        if not isinstance(name, str):
            raise RpcError(INVALID_PARAMS, "Invalid params: name must be a string")
        found = self._tools.get(name)
        if found is None:
            raise RpcError(INVALID_PARAMS, f"Unknown tool: {name}")
        arguments = params.get("arguments")
        if arguments is None:
            arguments = {}
        if not isinstance(arguments, dict):
            raise RpcError(INVALID_PARAMS, "Invalid params: arguments must be an object")
        try:
            self._tasks.check_arguments(arguments)
        except PayloadTooLarge as exc:
            raise RpcError(INVALID_PARAMS, f"Invalid params: {exc}", {"limit": exc.limit}) from exc
        try:
            found.parse(arguments)
        except ValidationError as exc:
            raise RpcError(
                INVALID_PARAMS, f"Invalid arguments for tool {name}", {"errors": validation_data(exc)}
            ) from exc
        return found, arguments

    def _run_inline(
        self, found: Tool, arguments: dict[str, Any], answers: dict[str, Any], ctx: ToolContext | None = None
    ) -> dict[str, Any]:
        """Run a tool inside this request: a CallToolResult, or the questions it asked."""
        try:
            return found.run(arguments, ctx or ToolContext(answers=answers))
        except InputNeeded as need:
            return {"resultType": "input_required", "inputRequests": need.requests}
        except ProtocolError as exc:
            raise RpcError(exc.code, exc.message, exc.data) from exc

    def _create_task(
        self,
        ctx: CallContext,
        found: Tool,
        arguments: dict[str, Any],
        *,
        ttl_ms: int | None = None,
        answers: dict[str, Any] | None = None,
        progress_token: str | int | None = None,
    ) -> TaskRecord:
        try:
            record = self._tasks.create(
                owner=ctx.owner,
                tool=found.name,
                arguments=arguments,
                requested_ttl_ms=ttl_ms,
                input_responses=answers,
                progress_token=progress_token,
            )
        except WorkflowUnavailable as exc:
            raise RpcError(INTERNAL_ERROR, "The task could not be started; please retry") from exc
        except TooManyActiveTasks as exc:
            self._audit("denied", {"owner": ctx.owner, "method": "tools/call", "reason": "task limit"})
            raise RpcError(TASK_LIMIT_REACHED, str(exc), {"limit": exc.limit}) from exc
        self._audit("task_created", {"taskId": record.task_id, "owner": ctx.owner, "tool": found.name})
        return record

    def _get(self, ctx: CallContext, method: str, task_id: str) -> TaskRecord:
        try:
            return self._tasks.get(ctx.owner, task_id)
        except TaskNotFound as exc:
            raise self._not_found(method, ctx, exc, "Failed to retrieve task") from exc

    def _not_found(self, method: str, ctx: CallContext, exc: TaskNotFound, what: str) -> RpcError:
        self._audit(
            "denied", {"taskId": exc.task_id, "owner": ctx.owner, "method": method, "reason": exc.reason}
        )
        return RpcError(INVALID_PARAMS, f"{what}: {exc.reason}")
