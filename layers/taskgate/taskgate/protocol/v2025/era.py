"""The 2025-11-25 era: sessions, its registry of methods and their handlers."""

from __future__ import annotations

import dataclasses
import json
import logging
import uuid
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, ClassVar

from ...codes import INVALID_PARAMS, INVALID_REQUEST, METHOD_NOT_FOUND, PARSE_ERROR, RESOURCE_NOT_FOUND
from ...domain.calls import call_key
from ...domain.errors import DependencyFailure, PayloadTooLarge, TaskgateError, TaskNotFound
from ...domain.model import TaskRecord
from ...domain.ports import Clock
from ...domain.sessions import RECENT_TASKS, Session, SessionStore
from ...tools.input import declared_view
from ...tools.peer import LOG_LEVELS
from ..calls.services import Services, fetched, server_info
from ..catalog.completion import CompletionMethods
from ..catalog.prompts import PromptMethods
from ..catalog.resources import ResourceMethods
from ..catalog.subscriptions import Subscriptions
from ..era import Era, Method, MethodRegistry
from ..wire import sse
from ..wire.cursors import Cursors
from ..wire.errors import RpcError, TransportRejection
from ..wire.exchange import Call, HttpReply
from ..wire.jsonrpc import ClientResponse
from ..wire.params import MAX_ID_LENGTH, Initialize, NoParams, Page, SetLevel, TaskRef, ToolCall
from ..wire.versions import is_stateless
from . import envelope
from . import wire as w
from .streams import SSE_HEADERS, ResultStreams

if TYPE_CHECKING:
    from ..calls.flow import ToolCallFlow
    from ..calls.outcomes import Outcome, Streamed

logger = logging.getLogger(__name__)

# What a refused tools/call says in this era: its code, and its words (the flow's otherwise).
# Keyed by calls/outcomes.py's Refusal values (a StrEnum), loaded with the first tools/call.
_REFUSALS = {
    "not_a_task": (METHOD_NOT_FOUND, "{message}"),
    "task_required": (METHOD_NOT_FOUND, "Tool {tool} must be called as a task (params.task)"),
    "needs_input": (INVALID_PARAMS, "{message}"),
    "cannot_wait": (INVALID_PARAMS, "{message}"),
}


def claims(headers: Mapping[str, str], meta: Mapping[str, Any]) -> bool:
    """Everything without a later revision's marks: the ``initialize`` handshake era."""
    return not is_stateless(headers, meta)


class Era2025(Era):
    version = w.PROTOCOL_VERSION
    # Only malformed messages change the HTTP status; method errors travel with 200.
    http_status: ClassVar[Mapping[int, int]] = {PARSE_ERROR: 400, INVALID_REQUEST: 400}

    def __init__(
        self,
        services: Services,
        *,
        sessions: SessionStore,
        streams: ResultStreams,
        clock: Clock,
        session_ttl_ms: int,
        flow: Callable[[], ToolCallFlow],
    ) -> None:
        """``flow`` gives what decides what a tools/call becomes (both eras share it, built
        by the first tools/call)."""
        self._s = services
        self._flow = flow
        self._sessions = sessions
        self._streams = streams
        self._clock = clock
        self._session_ttl_ms = session_ttl_ms
        resources = ResourceMethods(services, not_found_code=RESOURCE_NOT_FOUND, hints=False)
        self._subscriptions = Subscriptions(resources, sessions)
        self._cursors = Cursors(services.request_states)
        super().__init__(
            MethodRegistry(
                [
                    Method("initialize", self._initialize, Initialize),
                    Method("ping", lambda call, params: {}, NoParams),
                    Method("logging/setLevel", self._set_level, SetLevel),
                    Method("tools/list", self._tools_list, Page),
                    Method("tools/call", self._tools_call, ToolCall),
                    Method("tasks/get", self._tasks_get, TaskRef),
                    Method("tasks/result", self._tasks_result, TaskRef),
                    Method("tasks/list", self._tasks_list, Page),
                    Method("tasks/cancel", self._tasks_cancel, TaskRef),
                    *resources.methods(),
                    *self._subscriptions.methods(),
                    *PromptMethods(services, hints=False, can_ask=False).methods(),
                    *CompletionMethods(services, resources).methods(),
                ]
            )
        )

    def claims(self, headers: Mapping[str, str], meta: Mapping[str, Any]) -> bool:
        return claims(headers, meta)

    # -- sessions -------------------------------------------------------------

    def before(self, call: Call, method: Method | None) -> Call:
        if call.method == "initialize":
            return call
        return dataclasses.replace(call, session=self._check_session(call))

    def _check_session(self, call: Call, *, consistent: bool = True) -> Session | None:
        """A session id we never issued, that expired, or that is someone else's: 404.
        ``consistent=False`` (a stream's reconnect, this era's polling: half the price)
        reads again consistently before it refuses anything."""
        session_id = call.headers.get("mcp-session-id")
        if session_id is None:
            return None
        session = None
        if session_id and len(session_id) <= MAX_ID_LENGTH:
            session = self._sessions.get_session(session_id, consistent=consistent)
            if session is None and not consistent:
                session = self._sessions.get_session(session_id)
        if session is None or session.owner != call.owner:
            raise TransportRejection(404, INVALID_REQUEST, "Session not found")
        return session

    def handle_delete(self, call: Call) -> HttpReply:
        session_id = call.headers.get("mcp-session-id")
        if not session_id:
            raise TransportRejection(400, INVALID_REQUEST, "Mcp-Session-Id required")
        session = self._check_session(call)
        self._sessions.delete_session(session_id)
        if session is not None:
            self._end_hidden_tasks(call, session)
        return HttpReply(200)

    def _end_hidden_tasks(self, call: Call, session: Session) -> None:
        """The client ended its session: the streams of its plain calls can never be
        resumed, so their hidden tasks end with it (those handed to the model as handles are
        the model's, and go on)."""
        for task_id in session.hidden_tasks:
            try:
                record = self._s.tasks.get(call.owner, task_id)
                if record.status.terminal or record.watched_until_ms is None:
                    continue
                if self._s.tasks.cancel(call.owner, task_id).cancelled_now:
                    self._s.audit(
                        "cancel_requested", {"taskId": task_id, "owner": call.owner, "status": "cancelled"}
                    )
            except TaskgateError:
                continue  # gone, or ended meanwhile

    def handle_get(self, call: Call) -> HttpReply:
        """GET /mcp: resume a stream after ``Last-Event-ID``."""
        last_event_id = call.headers.get("last-event-id")
        if last_event_id and len(last_event_id) > MAX_ID_LENGTH:
            raise TransportRejection(404, INVALID_REQUEST, "Unknown stream")
        if not last_event_id:
            # No standalone server-to-client stream: nothing is pushed outside a request.
            return HttpReply(405, headers={"allow": "POST, DELETE"})
        session = self._check_session(call, consistent=False)
        log_level = (session.log_level if session else None) or LOG_LEVELS[0]
        stream = self._streams.resume(
            call.owner, last_event_id, self._subscriptions.notices(call), log_level=log_level
        )
        if stream is None:
            raise TransportRejection(404, INVALID_REQUEST, "Unknown stream")
        return HttpReply(200, headers=dict(SSE_HEADERS), stream=stream)

    def notify(self, call: Call) -> None:
        """``notifications/cancelled`` for a plain ``tools/call`` that became a hidden
        task (a long tool, or one that asked a question) cancels that task, even when the
        call is still being served and its task does not exist yet (domain/calls.py);
        anything else is ignored, as the specification allows for requests that cannot
        be cancelled."""
        if call.method != "notifications/cancelled" or call.request is None:
            return
        request_id = call.request.params.get("requestId")
        if isinstance(request_id, bool) or not isinstance(request_id, (str, int)):
            return
        if len(json.dumps(request_id)) > MAX_ID_LENGTH:
            return  # no call with such an id was ever kept
        key = call_key(call.owner, call.headers.get("mcp-session-id"), request_id)
        try:
            task_id = self._s.plain_calls.cancel(call.owner, key)
        except TaskgateError:
            return  # a notification has no reply; the task's own status tells the rest
        if task_id is not None:
            self._s.audit("cancel_requested", {"taskId": task_id, "owner": call.owner, "status": "cancelled"})

    def client_response(self, message: ClientResponse, call: Call) -> None:
        """An answer to an ``elicitation/create`` we sent on a tasks/result stream."""
        target = w.parse_elicitation_id(message.id)
        if target is None:
            return
        task_id, key = target
        # An error response is kept as such: the tool reads it as a cancelled elicitation or
        # a refused sampling / roots request.
        error = message.error if isinstance(message.error, dict) else {"message": "no result"}
        answer = message.result if isinstance(message.result, dict) else {"error": error}
        try:
            self._s.tasks.submit_input(call.owner, task_id, {key: answer})
        except (TaskNotFound, PayloadTooLarge, DependencyFailure):
            # A response has no reply channel; the task's own status tells the client.
            return
        self._s.audit("input_submitted", {"taskId": task_id, "owner": call.owner, "keys": [key]})

    # -- methods -------------------------------------------------------------

    def _initialize(self, call: Call, params: Initialize) -> HttpReply:
        requested = params.protocolVersion
        version = requested if requested in w.SUPPORTED_VERSIONS else w.PROTOCOL_VERSION
        session_id = uuid.uuid4().hex
        self._sessions.create_session(
            Session(
                session_id,
                call.owner,
                version,
                self._clock() + self._session_ttl_ms,
                capabilities=declared_view(params.capabilities),
            )
        )
        tasks: dict[str, Any] = {"cancel": {}, "requests": {"tools": {"call": {}}}}
        if call.owner != self._s.anonymous_owner:
            # Listing is only safe when "whose tasks" has an answer.
            tasks["list"] = {}
        result = {
            "protocolVersion": version,
            "capabilities": {
                "tools": {},
                "logging": {},
                "resources": {"subscribe": True},
                "prompts": {},
                "completions": {},
                "tasks": tasks,
            },
            "serverInfo": server_info(),
        }
        assert call.request is not None
        body = {"jsonrpc": "2.0", "id": call.request.id, "result": result}
        return HttpReply(200, body, headers={"mcp-session-id": session_id})

    def _set_level(self, call: Call, params: SetLevel) -> dict[str, Any]:
        """The session's log level: notifications/message below it are not sent."""
        session = call.session
        if session is None:
            raise RpcError(INVALID_REQUEST, "logging/setLevel needs a session (Mcp-Session-Id)")
        self._sessions.set_log_level(session.session_id, params.level)
        return {}

    def _tools_list(self, call: Call, params: Page) -> dict[str, Any]:
        from ..calls import handle_tools  # with the first tools/list: a task's reads need none

        return {"tools": handle_tools.listed_tools(self._s, with_task_support=True)}

    def _tools_call(self, call: Call, params: ToolCall) -> dict[str, Any] | HttpReply:
        from ..calls.caller import caller_of  # with the first tools/call, as the flow is

        caller = caller_of(
            call,
            self._s.policy,
            resumable=True,  # event ids and GET with Last-Event-ID
            answers_inline=False,  # no round before a task exists: questions ride the call's stream
            capabilities=envelope.capabilities(call.session),
            tasks=False,  # a task only where the call asks for one (params.task)
        )
        return self._answer(call, self._flow().call(call, envelope.invocation(params, call.session), caller))

    def _answer(self, call: Call, outcome: Outcome) -> dict[str, Any] | HttpReply:
        """The flow's outcome as this era answers it."""
        from ..calls.outcomes import Answered, Asks, Created, HandedOver, Held, Refused, Streamed

        assert call.request is not None
        match outcome:
            case Created(record):
                self._remember_task(call, record)
                return w.create_task_result(record)
            case Answered(result, stream_closed) if stream_closed and sse.accepts(call.headers):
                # The tool closed its stream (SEP-1699): the client gets the result on resume.
                message = {"jsonrpc": "2.0", "id": call.request.id, "result": result}
                stream = self._streams.finished_call(call.owner, call.request.id, message, deliver=False)
                return HttpReply(200, headers=dict(SSE_HEADERS), stream=stream)
            case Answered(result) | HandedOver(result=result):
                return result
            case Streamed():
                return self._stream(call, outcome)
            case Refused(why, tool, message):
                code, text = _REFUSALS[why]
                raise RpcError(code, text.format(tool=tool, message=message))
            case Asks() | Held():
                raise AssertionError(
                    "a caller that answers on its resumable stream is neither asked nor held"
                )

    def _stream(self, call: Call, streamed: Streamed) -> HttpReply:
        """A plain call's hidden task, answered on the call's own resumable stream: progress and
        log lines as they come, questions, then the result (protocol/v2025/streams.py). Nothing
        on it names the task (no related-task ``_meta``, no task status notifications): the
        client asked for a plain call, and clients that track tasks would try to match a task
        they never created."""
        assert call.request is not None
        record, session = streamed.record, call.session
        if session is not None and not streamed.again:
            self._sessions.add_hidden_task(session.session_id, record.task_id)
        try:
            stream = self._streams.open(
                call.owner,
                record,
                call.request.id,
                hide_task=True,
                notices=self._subscriptions.notices(call),
                log_level=(session.log_level if session else None) or LOG_LEVELS[0],
                watch_ms=self._s.policy.hang_up_ms,
                hand_over_at_ms=streamed.hand_over_at_ms,
            )
        except Exception:
            if not streamed.again:
                # The client gets an error and nothing to follow: the task must not live on.
                self._s.tasks.cancel(call.owner, record.task_id)
            raise
        return HttpReply(200, headers=dict(SSE_HEADERS), stream=stream)

    def _tasks_get(self, call: Call, params: TaskRef) -> dict[str, Any]:
        return w.task_fields(self._s.tasks.get(call.owner, params.taskId))

    def _tasks_result(self, call: Call, params: TaskRef) -> HttpReply:
        record = self._s.tasks.get(call.owner, params.taskId)
        assert call.request is not None
        if record.status.terminal:
            return HttpReply(200, w.payload_message(fetched(self._s, call, record), call.request.id))
        # Not done: block by streaming, in pieces short enough for API Gateway.
        session = call.session
        stream = self._streams.open(
            call.owner,
            record,
            call.request.id,
            notices=self._subscriptions.notices(call),
            log_level=(session.log_level if session else None) or record.log_level,
        )
        return HttpReply(200, headers=dict(SSE_HEADERS), stream=stream)

    def _remember_task(self, call: Call, record: TaskRecord) -> None:
        """The session remembers the task it created, so that its tasks/list shows it at
        once (the owner index behind the list may lag a create by a moment)."""
        session = call.session
        if session is None:
            return
        kept = sorted(session.recent_tasks, key=session.recent_tasks.__getitem__, reverse=True)
        try:
            self._sessions.remember_task(
                session.session_id, record.task_id, record.created_at_ms, forget=kept[RECENT_TASKS - 1 :]
            )
        except TaskgateError:
            # The task exists and the client has its id; only an instant listing is lost.
            logger.warning("could not note task %s in its session", record.task_id, exc_info=True)

    def _tasks_list(self, call: Call, params: Page) -> dict[str, Any]:
        if call.owner == self._s.anonymous_owner:
            raise RpcError(METHOD_NOT_FOUND, "tasks/list needs an authenticated caller")
        position = self._cursors.open(params.cursor, call.owner) if params.cursor is not None else None
        session = call.session
        # The newest tasks are the first page's: later pages come from the index alone.
        recent = session.recent_tasks if session is not None and position is None else None
        records, next_position = self._s.tasks.list(call.owner, position, recent=recent)
        result: dict[str, Any] = {"tasks": [w.task_fields(r) for r in records]}
        if next_position:
            result["nextCursor"] = self._cursors.seal(next_position, call.owner)
        return result

    def _tasks_cancel(self, call: Call, params: TaskRef) -> dict[str, Any]:
        outcome = self._s.tasks.cancel(call.owner, params.taskId)
        record = outcome.record
        if not outcome.cancelled_now:
            raise RpcError(INVALID_PARAMS, f"Cannot cancel task: already {w.status_of(record)}")
        self._s.audit(
            "cancel_requested", {"taskId": params.taskId, "owner": call.owner, "status": record.status.value}
        )
        return w.task_fields(record)
