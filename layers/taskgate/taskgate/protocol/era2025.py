"""MCP 2025-11-25 (and the 2025 versions before it): ``initialize``, sessions kept in
the store, and the experimental Tasks of that revision, including ``tasks/result``
over resumable SSE and elicitation delivered on that stream."""

from __future__ import annotations

import uuid
from typing import Any

from .. import __version__
from ..domain.errors import InvalidCursor, PayloadTooLarge, TaskNotFound, WorkflowUnavailable
from ..domain.model import TaskStatus
from ..domain.sessions import Session, SessionStore
from ..tools.context import InputNeeded, ToolContext
from ..tools.registry import Tool
from . import wire2025 as w
from .common import MAX_ID_LENGTH, CallContext, EraBase, Handler, HttpReply, task_id_param
from .jsonrpc import INVALID_PARAMS, INVALID_REQUEST, METHOD_NOT_FOUND, ClientResponse, Request, RpcError
from .result_stream import ResultStreams

SERVER_NAME = "taskgate"
SESSION_TTL_MS = 24 * 3_600_000
SSE_HEADERS = {"content-type": "text/event-stream", "cache-control": "no-cache"}


class Era2025(EraBase):
    def __init__(
        self,
        *args: Any,
        sessions: SessionStore,
        streams: ResultStreams,
        anonymous_owner: str,
        clock: Any,
        **kwargs: Any,
    ) -> None:
        super().__init__(*args, **kwargs)
        self._sessions = sessions
        self._streams = streams
        self._anonymous = anonymous_owner
        self._clock = clock

    def handlers(self) -> dict[str, Handler]:
        return {
            "initialize": self._initialize,
            "ping": lambda req, ctx: {},
            "tools/list": self._tools_list,
            "tools/call": self._tools_call,
            "tasks/get": self._tasks_get,
            "tasks/result": self._tasks_result,
            "tasks/list": self._tasks_list,
            "tasks/cancel": self._tasks_cancel,
        }

    # -- sessions -------------------------------------------------------------

    def check_session(self, ctx: CallContext) -> None:
        """A session id we never issued, that expired, or that is someone else's: 404."""
        session_id = ctx.headers.get("mcp-session-id")
        if session_id is None:
            return
        if not session_id or len(session_id) > MAX_ID_LENGTH:
            raise RpcError(INVALID_REQUEST, "Session not found", http_status=404)
        session = self._sessions.get_session(session_id)
        if session is None or session.owner != ctx.owner:
            raise RpcError(INVALID_REQUEST, "Session not found", http_status=404)

    def terminate(self, ctx: CallContext) -> HttpReply:
        session_id = ctx.headers.get("mcp-session-id")
        if not session_id:
            return HttpReply(
                400,
                {"jsonrpc": "2.0", "error": {"code": INVALID_REQUEST, "message": "Mcp-Session-Id required"}},
            )
        self.check_session(ctx)
        self._sessions.delete_session(session_id)
        return HttpReply(200)

    def dispatch(self, request: Request, ctx: CallContext) -> Any:
        if request.method != "initialize":
            self.check_session(ctx)
        handler = self.handlers().get(request.method)
        if handler is None:
            raise RpcError(METHOD_NOT_FOUND, f"Method not found: {request.method}")
        return handler(request, ctx)

    def client_response(self, message: ClientResponse, ctx: CallContext) -> None:
        """An answer to an ``elicitation/create`` we sent on a tasks/result stream."""
        target = w.parse_elicitation_id(message.id)
        if target is None:
            return
        task_id, key = target
        answer = message.result if isinstance(message.result, dict) else {"action": "cancel"}
        try:
            self._tasks.submit_input(ctx.owner, task_id, {key: answer})
        except (TaskNotFound, PayloadTooLarge, WorkflowUnavailable):
            # A response has no reply channel; the task's own status tells the client.
            return
        self._audit("input_submitted", {"taskId": task_id, "owner": ctx.owner, "keys": [key]})

    def resume(self, ctx: CallContext) -> HttpReply:
        last_event_id = ctx.headers.get("last-event-id")
        if last_event_id and len(last_event_id) > MAX_ID_LENGTH:
            return HttpReply(
                404, {"jsonrpc": "2.0", "error": {"code": INVALID_REQUEST, "message": "Unknown stream"}}
            )
        if not last_event_id:
            # No standalone server-to-client stream: nothing is pushed outside a request.
            return HttpReply(405, headers={"allow": "POST, DELETE"})
        self.check_session(ctx)
        stream = self._streams.resume(ctx.owner, last_event_id)
        if stream is None:
            return HttpReply(
                404, {"jsonrpc": "2.0", "error": {"code": INVALID_REQUEST, "message": "Unknown stream"}}
            )
        return HttpReply(200, headers=dict(SSE_HEADERS), stream=stream)

    # -- methods -------------------------------------------------------------

    def _initialize(self, request: Request, ctx: CallContext) -> HttpReply:
        requested = request.params.get("protocolVersion")
        version = requested if requested in w.SUPPORTED_VERSIONS else w.PROTOCOL_VERSION
        session_id = uuid.uuid4().hex
        self._sessions.create_session(Session(session_id, ctx.owner, version, self._clock() + SESSION_TTL_MS))
        tasks: dict[str, Any] = {"cancel": {}, "requests": {"tools": {"call": {}}}}
        if ctx.owner != self._anonymous:
            # Listing is only safe when "whose tasks" has an answer.
            tasks["list"] = {}
        result = {
            "protocolVersion": version,
            "capabilities": {"tools": {}, "tasks": tasks},
            "serverInfo": {"name": SERVER_NAME, "version": __version__},
        }
        body = {"jsonrpc": "2.0", "id": request.id, "result": result}
        return HttpReply(200, body, headers={"mcp-session-id": session_id})

    def _tools_list(self, request: Request, ctx: CallContext) -> dict[str, Any]:
        return {"tools": [t.describe(with_task_support=True) for t in self._tools]}

    def _tools_call(self, request: Request, ctx: CallContext) -> dict[str, Any] | HttpReply:
        params = request.params
        found, arguments = self._tool(params)
        task = params.get("task")
        if task is not None:
            if found.task_support == "forbidden":
                raise RpcError(METHOD_NOT_FOUND, f"Tool {found.name} cannot be called as a task")
            ttl = task.get("ttl") if isinstance(task, dict) else None
            if ttl is not None and (isinstance(ttl, bool) or not isinstance(ttl, int) or ttl <= 0):
                raise RpcError(INVALID_PARAMS, "Invalid params: task.ttl must be a positive integer (ms)")
            if found.prepare is not None:
                answers: dict[str, Any] = {}
                result = self._run_prepare(found, arguments, answers)
                if result is not None:
                    raise RpcError(
                        INVALID_PARAMS, f"Tool {found.name} asks before it starts; call it in 2026-07-28"
                    )
            record = self._create_task(
                ctx, found, arguments, ttl_ms=ttl, progress_token=_progress_token(params)
            )
            return w.create_task_result(record)
        if found.task_support == "required":
            raise RpcError(METHOD_NOT_FOUND, f"Tool {found.name} must be called as a task (params.task)")
        tool_ctx = ToolContext()
        result = self._run_inline(found, arguments, {}, tool_ctx)
        if result.get("resultType") == "input_required":
            return self._ask_on_the_call_stream(request, ctx, found, arguments)
        if tool_ctx.stream_closed and "text/event-stream" in ctx.headers.get("accept", ""):
            message = {"jsonrpc": "2.0", "id": request.id, "result": result}
            stream = self._streams.finished_call(ctx.owner, request.id, message, deliver=False)
            return HttpReply(200, headers=dict(SSE_HEADERS), stream=stream)
        return result

    def _ask_on_the_call_stream(
        self, request: Request, ctx: CallContext, found: Tool, arguments: dict[str, Any]
    ) -> HttpReply:
        """A plain call to a tool that asks. This era has no inline form of a question,
        so the call becomes a task and its own response stream does what tasks/result
        would: ``elicitation/create`` (the answer is POSTed back and resumes the task),
        then, on the resumed stream, the response to this call. Nothing on that stream
        names the task (no related-task ``_meta``, no task status notifications): the
        client asked for a plain call, and clients that track tasks would try to match
        a task they never created. The tool runs again from the top in the task (asks
        replay)."""
        if found.task_support == "forbidden" or "text/event-stream" not in ctx.headers.get("accept", ""):
            raise RpcError(INVALID_PARAMS, f"Tool {found.name} needs input; call it as a task")
        record = self._create_task(ctx, found, arguments, progress_token=_progress_token(request.params))
        stream = self._streams.open(ctx.owner, record, request.id, hide_task=True)
        return HttpReply(200, headers=dict(SSE_HEADERS), stream=stream)

    def _run_prepare(self, found: Tool, arguments: dict[str, Any], answers: dict[str, Any]) -> Any:
        assert found.prepare is not None
        try:
            found.prepare(found.parse(arguments), ToolContext(answers=answers))
        except InputNeeded as need:
            return need.requests
        return None

    def _tasks_get(self, request: Request, ctx: CallContext) -> dict[str, Any]:
        return w.task_fields(self._get(ctx, "tasks/get", task_id_param(request.params)))

    def _tasks_result(self, request: Request, ctx: CallContext) -> HttpReply:
        record = self._get(ctx, "tasks/result", task_id_param(request.params))
        if record.status.terminal:
            self._audit("result_fetched", {"taskId": record.task_id, "owner": ctx.owner})
            return HttpReply(200, w.payload_message(record, request.id))
        # Not done: block by streaming, in pieces short enough for API Gateway.
        stream = self._streams.open(ctx.owner, record, request.id)
        return HttpReply(200, headers=dict(SSE_HEADERS), stream=stream)

    def _tasks_list(self, request: Request, ctx: CallContext) -> dict[str, Any]:
        if ctx.owner == self._anonymous:
            raise RpcError(METHOD_NOT_FOUND, "tasks/list needs an authenticated caller")
        cursor = request.params.get("cursor")
        if cursor is not None and not isinstance(cursor, str):
            raise RpcError(INVALID_PARAMS, "Invalid params: cursor must be a string")
        try:
            records, next_cursor = self._tasks.list(ctx.owner, cursor)
        except InvalidCursor as exc:
            raise RpcError(INVALID_PARAMS, f"Invalid cursor: {exc}") from exc
        result: dict[str, Any] = {"tasks": [w.task_fields(r) for r in records]}
        if next_cursor:
            result["nextCursor"] = next_cursor
        return result

    def _tasks_cancel(self, request: Request, ctx: CallContext) -> dict[str, Any]:
        task_id = task_id_param(request.params)
        record = self._get(ctx, "tasks/cancel", task_id)
        if record.status.terminal:
            raise RpcError(INVALID_PARAMS, f"Cannot cancel task: already {w.status_of(record)}")
        try:
            record = self._tasks.cancel(ctx.owner, task_id)
        except TaskNotFound as exc:
            raise self._not_found("tasks/cancel", ctx, exc, "Failed to cancel task") from exc
        if record.status is not TaskStatus.CANCELLED:
            raise RpcError(INVALID_PARAMS, f"Cannot cancel task: already {w.status_of(record)}")
        self._audit(
            "cancel_requested", {"taskId": task_id, "owner": ctx.owner, "status": record.status.value}
        )
        return w.task_fields(record)


def _progress_token(params: dict[str, Any]) -> str | int | None:
    meta = params.get("_meta")
    token = meta.get("progressToken") if isinstance(meta, dict) else None
    return token if isinstance(token, (str, int)) and not isinstance(token, bool) else None
