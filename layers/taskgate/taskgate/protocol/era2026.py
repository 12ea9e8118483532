"""MCP 2026-07-28, stateless, with the ``io.modelcontextprotocol/tasks`` extension (SEP-2663)."""

from __future__ import annotations

from typing import Any

from .. import __version__
from ..domain.errors import PayloadTooLarge, TaskNotFound, WorkflowUnavailable
from ..tools.context import InputNeeded, ToolContext
from . import wire2026 as w
from .common import CallContext, EraBase, Handler, answers_param, task_id_param
from .headers import check_param_headers, check_routing_headers
from .jsonrpc import (
    HEADER_MISMATCH,
    INTERNAL_ERROR,
    INVALID_PARAMS,
    METHOD_NOT_FOUND,
    MISSING_REQUIRED_CLIENT_CAPABILITY,
    Request,
    RpcError,
)

UNSUPPORTED_PROTOCOL_VERSION = -32022
SERVER_NAME = "taskgate"


def speaks_2026(headers: Any, meta: dict[str, Any]) -> bool:
    return headers.get("mcp-protocol-version") == w.PROTOCOL_VERSION or w.META_PROTOCOL_VERSION in meta


class Era2026(EraBase):
    def handlers(self) -> dict[str, Handler]:
        return {
            "server/discover": self._discover,
            "ping": lambda req, ctx: {"resultType": "complete"},
            "tools/list": self._tools_list,
            "tools/call": self._tools_call,
            "tasks/get": self._tasks_get,
            "tasks/update": self._tasks_update,
            "tasks/cancel": self._tasks_cancel,
        }

    def dispatch(self, request: Request, meta: dict[str, Any], ctx: CallContext) -> Any:
        self._check_envelope(request, meta, ctx)
        handler = self.handlers().get(request.method)
        if handler is None:
            raise RpcError(METHOD_NOT_FOUND, f"Method not found: {request.method}", http_status=404)
        return handler(request, ctx)

    def _check_envelope(self, request: Request, meta: dict[str, Any], ctx: CallContext) -> None:
        header_version = ctx.headers.get("mcp-protocol-version")
        if header_version is None:
            raise RpcError(
                HEADER_MISMATCH,
                "Header mismatch: the MCP-Protocol-Version header is required",
                http_status=400,
            )
        if w.META_PROTOCOL_VERSION not in meta or w.META_CLIENT_CAPABILITIES not in meta:
            raise RpcError(
                INVALID_PARAMS,
                f"Invalid params: _meta must carry {w.META_PROTOCOL_VERSION} and {w.META_CLIENT_CAPABILITIES}",
                http_status=400,
            )
        if meta[w.META_PROTOCOL_VERSION] != header_version:
            raise RpcError(
                HEADER_MISMATCH, "Header mismatch: MCP-Protocol-Version does not match _meta", http_status=400
            )
        if header_version != w.PROTOCOL_VERSION:
            raise RpcError(
                UNSUPPORTED_PROTOCOL_VERSION,
                "Unsupported protocol version",
                {"supported": [w.PROTOCOL_VERSION], "requested": header_version},
                http_status=400,
            )
        check_routing_headers(ctx.headers, request)

    def _discover(self, request: Request, ctx: CallContext) -> dict[str, Any]:
        return {
            "resultType": "complete",
            "supportedVersions": [w.PROTOCOL_VERSION],
            "capabilities": {"tools": {}, "extensions": {w.EXTENSION: {}}},
            "ttlMs": 0,
            "cacheScope": "private",
            "_meta": {w.META_SERVER_INFO: {"name": SERVER_NAME, "version": __version__}},
        }

    def _tools_list(self, request: Request, ctx: CallContext) -> dict[str, Any]:
        return {
            "resultType": "complete",
            "tools": [t.describe(with_task_support=True) for t in self._tools],
            "ttlMs": 0,
            "cacheScope": "private",
        }

    def _tools_call(self, request: Request, ctx: CallContext) -> dict[str, Any]:
        params = request.params
        found, arguments = self._tool(params)
        check_param_headers(ctx.headers, found.input_schema(), arguments)
        declares = w.declares_tasks(params.get("_meta") or {})
        if found.task_support == "required" and not declares:
            raise RpcError(
                MISSING_REQUIRED_CLIENT_CAPABILITY,
                f"Missing required client capability: tool {found.name} runs only as a task",
                w.missing_capability_data(),
                http_status=400,
            )
        answers = answers_param(params)
        if declares and found.task_support != "forbidden":
            carried: dict[str, Any] = {}
            if found.prepare is not None:
                # Questions asked before the task exists are a plain input round (MRTR).
                prepared = ToolContext(answers=answers)
                try:
                    found.prepare(found.parse(arguments), prepared)
                except InputNeeded as need:
                    return {"resultType": "input_required", "inputRequests": need.requests}
                # The task inherits the answers to the questions it was asked, nothing else.
                carried = {k: answers[k] for k in prepared.asked if k in answers}
            record = self._create_task(ctx, found, arguments, answers=carried)
            return w.create_task_result(record)
        return {"resultType": "complete", **self._run_inline(found, arguments, answers)}

    def _require_tasks(self, request: Request) -> None:
        if not w.declares_tasks(request.params.get("_meta") or {}):
            raise RpcError(
                MISSING_REQUIRED_CLIENT_CAPABILITY,
                "Missing required client capability",
                w.missing_capability_data(),
                http_status=400,
            )

    def _tasks_get(self, request: Request, ctx: CallContext) -> dict[str, Any]:
        self._require_tasks(request)
        record = self._get(ctx, "tasks/get", task_id_param(request.params))
        if record.status.terminal:
            # In this era the result travels inline: this read is the fetch.
            self._audit("result_fetched", {"taskId": record.task_id, "owner": ctx.owner})
        return w.detailed_task(record)

    def _tasks_update(self, request: Request, ctx: CallContext) -> dict[str, Any]:
        self._require_tasks(request)
        task_id = task_id_param(request.params)
        if not isinstance(request.params.get("inputResponses"), dict):
            raise RpcError(INVALID_PARAMS, "Invalid params: inputResponses must be an object")
        responses = answers_param(request.params)
        try:
            self._tasks.submit_input(ctx.owner, task_id, responses)
        except TaskNotFound as exc:
            raise self._not_found("tasks/update", ctx, exc, "Failed to update task") from exc
        except PayloadTooLarge as exc:
            raise RpcError(INVALID_PARAMS, f"Invalid params: {exc}", {"limit": exc.limit}) from exc
        except WorkflowUnavailable as exc:
            raise RpcError(INTERNAL_ERROR, "The task could not be resumed; it has been failed") from exc
        self._audit("input_submitted", {"taskId": task_id, "owner": ctx.owner, "keys": sorted(responses)})
        return {"resultType": "complete"}

    def _tasks_cancel(self, request: Request, ctx: CallContext) -> dict[str, Any]:
        self._require_tasks(request)
        task_id = task_id_param(request.params)
        try:
            record = self._tasks.cancel(ctx.owner, task_id)
        except TaskNotFound as exc:
            raise self._not_found("tasks/cancel", ctx, exc, "Failed to cancel task") from exc
        self._audit(
            "cancel_requested", {"taskId": task_id, "owner": ctx.owner, "status": record.status.value}
        )
        # Acknowledged either way: in this era a cancel of a finished task is not an error.
        return {"resultType": "complete"}
