"""JSON-RPC dispatch for /mcp: picks the era, checks headers and _meta, routes methods.

The HTTP layer hands in one parsed JSON value and the request headers; this
module returns an HTTP status and an optional JSON body. It never raises: every
failure becomes a JSON-RPC error with a message a client can act on.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import Any

from pydantic import ValidationError

from .. import __version__
from ..domain.errors import TaskNotFound, WorkflowUnavailable
from ..domain.model import TaskRecord
from ..domain.service import TaskService
from ..tools.context import InputNeeded, ProtocolError, ToolContext
from ..tools.registry import Tool, ToolRegistry
from . import wire2026 as w
from .headers import check_param_headers, check_routing_headers
from .jsonrpc import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    METHOD_NOT_FOUND,
    MISSING_REQUIRED_CLIENT_CAPABILITY,
    ClientResponse,
    Request,
    RpcError,
    failure,
    parse_message,
    success,
)

logger = logging.getLogger(__name__)

UNSUPPORTED_PROTOCOL_VERSION = -32022
LEGACY_VERSIONS = ("2025-11-25", "2025-06-18", "2025-03-26")
SERVER_NAME = "taskgate"

Reply = tuple[int, dict[str, Any] | None]
# Told of every task event a client causes: (event, fields). The Lambda handler
# turns these into audit log lines and metrics; tests can collect them.
AuditHook = Callable[[str, dict[str, Any]], None]
Handler = Callable[[Request, "CallContext"], dict[str, Any]]


class CallContext:
    """Who is calling and with what headers; one per HTTP request."""

    def __init__(self, owner: str, headers: Mapping[str, str]) -> None:
        self.owner = owner
        self.headers = headers


def _validation_data(exc: ValidationError) -> list[dict[str, Any]]:
    # Locations and messages only: echoing input values back could leak secrets into logs.
    return [{"path": list(e["loc"]), "message": e["msg"]} for e in exc.errors()]


def _task_id(params: dict[str, Any]) -> str:
    task_id = params.get("taskId")
    if not isinstance(task_id, str) or not task_id:
        raise RpcError(INVALID_PARAMS, "Invalid params: taskId must be a non-empty string")
    return task_id


class McpServer:
    def __init__(self, tasks: TaskService, tools: ToolRegistry, audit: AuditHook | None = None) -> None:
        self._tasks = tasks
        self._tools = tools
        self._audit: AuditHook = audit or (lambda event, fields: None)
        self._v2026: dict[str, Handler] = {
            "server/discover": self._discover,
            "ping": lambda req, ctx: {"resultType": "complete"},
            "tools/list": self._tools_list_2026,
            "tools/call": self._tools_call_2026,
            "tasks/get": self._tasks_get_2026,
            "tasks/update": self._tasks_update_2026,
            "tasks/cancel": self._tasks_cancel_2026,
        }
        self._legacy: dict[str, Handler] = {
            "initialize": self._initialize,
            "ping": lambda req, ctx: {},
            "tools/list": self._tools_list_legacy,
            "tools/call": self._tools_call_legacy,
        }

    # -- entry -------------------------------------------------------------

    def handle(self, body: Any, headers: Mapping[str, str], owner: str) -> Reply:
        msg_id: Any = body.get("id") if isinstance(body, dict) else None
        if isinstance(msg_id, bool) or not isinstance(msg_id, (str, int)):
            msg_id = None
        try:
            message = parse_message(body)
            if isinstance(message, ClientResponse) or message.is_notification:
                return 202, None
            result = self._dispatch(message, CallContext(owner, headers))
            return 200, success(message.id, result)
        except RpcError as exc:
            return exc.http_status, failure(msg_id, exc)
        except Exception:
            logger.exception("unhandled error in %s", body.get("method") if isinstance(body, dict) else "?")
            return 500, failure(msg_id, RpcError(INTERNAL_ERROR, "Internal error"))

    def _dispatch(self, request: Request, ctx: CallContext) -> dict[str, Any]:
        meta = request.params.get("_meta")
        meta = meta if isinstance(meta, dict) else {}
        header_version = ctx.headers.get("mcp-protocol-version")
        if header_version == w.PROTOCOL_VERSION or w.META_PROTOCOL_VERSION in meta:
            self._check_2026_envelope(request, meta, header_version, ctx)
            handler = self._v2026.get(request.method)
            if handler is None:
                raise RpcError(METHOD_NOT_FOUND, f"Method not found: {request.method}", http_status=404)
            return handler(request, ctx)
        handler = self._legacy.get(request.method)
        if handler is None:
            raise RpcError(METHOD_NOT_FOUND, f"Method not found: {request.method}")
        return handler(request, ctx)

    def _check_2026_envelope(
        self, request: Request, meta: dict[str, Any], header_version: str | None, ctx: CallContext
    ) -> None:
        if header_version is None:
            raise RpcError(
                -32020, "Header mismatch: the MCP-Protocol-Version header is required", http_status=400
            )
        if w.META_PROTOCOL_VERSION not in meta or w.META_CLIENT_CAPABILITIES not in meta:
            raise RpcError(
                INVALID_PARAMS,
                f"Invalid params: _meta must carry {w.META_PROTOCOL_VERSION} and {w.META_CLIENT_CAPABILITIES}",
                http_status=400,
            )
        if meta[w.META_PROTOCOL_VERSION] != header_version:
            raise RpcError(
                -32020, "Header mismatch: MCP-Protocol-Version does not match _meta", http_status=400
            )
        if header_version != w.PROTOCOL_VERSION:
            raise RpcError(
                UNSUPPORTED_PROTOCOL_VERSION,
                "Unsupported protocol version",
                {"supported": [w.PROTOCOL_VERSION], "requested": header_version},
                http_status=400,
            )
        check_routing_headers(ctx.headers, request)

    # -- shared --------------------------------------------------------------

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
            found.parse(arguments)
        except ValidationError as exc:
            raise RpcError(
                INVALID_PARAMS, f"Invalid arguments for tool {name}", {"errors": _validation_data(exc)}
            ) from exc
        return found, arguments

    def _run_inline(self, found: Tool, arguments: dict[str, Any], answers: dict[str, Any]) -> dict[str, Any]:
        """Run a tool inside this request. Returns a CallToolResult or an input round."""
        try:
            return found.run(arguments, ToolContext(answers=answers))
        except InputNeeded as need:
            return {"resultType": "input_required", "inputRequests": need.requests}
        except ProtocolError as exc:
            raise RpcError(exc.code, exc.message, exc.data) from exc

    # -- 2026-07-28 ----------------------------------------------------------

    def _discover(self, request: Request, ctx: CallContext) -> dict[str, Any]:
        return {
            "resultType": "complete",
            "supportedVersions": [w.PROTOCOL_VERSION],
            "capabilities": {"tools": {}, "extensions": {w.EXTENSION: {}}},
            "ttlMs": 0,
            "cacheScope": "private",
            "_meta": {w.META_SERVER_INFO: {"name": SERVER_NAME, "version": __version__}},
        }

    def _tools_list_2026(self, request: Request, ctx: CallContext) -> dict[str, Any]:
        return {
            "resultType": "complete",
            "tools": [t.describe(with_task_support=True) for t in self._tools],
            "ttlMs": 0,
            "cacheScope": "private",
        }

    def _tools_call_2026(self, request: Request, ctx: CallContext) -> dict[str, Any]:
        params = request.params
        found, arguments = self._tool(params)
        check_param_headers(ctx.headers, found.input_schema(), arguments)
        meta = params.get("_meta") or {}
        declares = w.declares_tasks(meta)
        if found.task_support == "required" and not declares:
            raise RpcError(
                MISSING_REQUIRED_CLIENT_CAPABILITY,
                f"Missing required client capability: tool {found.name} runs only as a task",
                w.missing_capability_data(),
                http_status=400,
            )
        answers = params.get("inputResponses")
        answers = answers if isinstance(answers, dict) else {}
        if declares and found.task_support != "forbidden":
            if found.prepare is not None:
                # Questions asked before the task exists are a plain input round.
                try:
                    found.prepare(found.parse(arguments), ToolContext(answers=answers))
                except InputNeeded as need:
                    return {"resultType": "input_required", "inputRequests": need.requests}
            record = self._create_task(ctx.owner, found, arguments, None, answers)
            self._audit("task_created", {"taskId": record.task_id, "owner": ctx.owner, "tool": found.name})
            return w.create_task_result(record)
        return {"resultType": "complete", **self._run_inline(found, arguments, answers)}

    def _create_task(
        self,
        owner: str,
        found: Tool,
        arguments: dict[str, Any],
        ttl_ms: int | None,
        answers: dict[str, Any],
    ) -> TaskRecord:
        try:
            return self._tasks.create(
                owner=owner,
                tool=found.name,
                arguments=arguments,
                requested_ttl_ms=ttl_ms,
                input_responses=answers,
            )
        except WorkflowUnavailable as exc:
            raise RpcError(INTERNAL_ERROR, "The task could not be started; please retry") from exc

    def _require_tasks(self, request: Request) -> None:
        if not w.declares_tasks(request.params.get("_meta") or {}):
            raise RpcError(
                MISSING_REQUIRED_CLIENT_CAPABILITY,
                "Missing required client capability",
                w.missing_capability_data(),
                http_status=400,
            )

    def _tasks_get_2026(self, request: Request, ctx: CallContext) -> dict[str, Any]:
        self._require_tasks(request)
        task_id = _task_id(request.params)
        try:
            return w.detailed_task(self._tasks.get(ctx.owner, task_id))
        except TaskNotFound as exc:
            raise self._not_found("tasks/get", ctx, exc, "Failed to retrieve task") from exc

    def _tasks_update_2026(self, request: Request, ctx: CallContext) -> dict[str, Any]:
        self._require_tasks(request)
        task_id = _task_id(request.params)
        responses = request.params.get("inputResponses")
        if not isinstance(responses, dict):
            raise RpcError(INVALID_PARAMS, "Invalid params: inputResponses must be an object")
        try:
            self._tasks.submit_input(ctx.owner, task_id, responses)
        except TaskNotFound as exc:
            raise self._not_found("tasks/update", ctx, exc, "Failed to update task") from exc
        self._audit("input_submitted", {"taskId": task_id, "owner": ctx.owner, "keys": sorted(responses)})
        return {"resultType": "complete"}

    def _tasks_cancel_2026(self, request: Request, ctx: CallContext) -> dict[str, Any]:
        self._require_tasks(request)
        task_id = _task_id(request.params)
        try:
            record = self._tasks.cancel(ctx.owner, task_id)
        except TaskNotFound as exc:
            raise self._not_found("tasks/cancel", ctx, exc, "Failed to cancel task") from exc
        self._audit(
            "cancel_requested", {"taskId": task_id, "owner": ctx.owner, "status": record.status.value}
        )
        return {"resultType": "complete"}

    def _not_found(self, method: str, ctx: CallContext, exc: TaskNotFound, what: str) -> RpcError:
        self._audit(
            "denied", {"taskId": exc.task_id, "owner": ctx.owner, "method": method, "reason": exc.reason}
        )
        return RpcError(INVALID_PARAMS, f"{what}: {exc.reason}")

    # -- before 2026-07-28 (sessionless subset; the Tasks surface of 2025-11-25 is separate) --

    def _initialize(self, request: Request, ctx: CallContext) -> dict[str, Any]:
        requested = request.params.get("protocolVersion")
        version = requested if requested in LEGACY_VERSIONS else LEGACY_VERSIONS[0]
        return {
            "protocolVersion": version,
            "capabilities": {"tools": {}},
            "serverInfo": {"name": SERVER_NAME, "version": __version__},
        }

    def _tools_list_legacy(self, request: Request, ctx: CallContext) -> dict[str, Any]:
        return {"tools": [t.describe(with_task_support=False) for t in self._tools]}

    def _tools_call_legacy(self, request: Request, ctx: CallContext) -> dict[str, Any]:
        found, arguments = self._tool(request.params)
        if found.task_support == "required":
            raise RpcError(METHOD_NOT_FOUND, f"Tool {found.name} can only be called as a task")
        result = self._run_inline(found, arguments, {})
        if result.get("resultType") == "input_required":
            raise RpcError(INVALID_PARAMS, f"Tool {found.name} needs input; call it with the tasks extension")
        return result
