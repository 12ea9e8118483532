"""JSON-RPC over HTTP for /mcp: picks the protocol era per request and never raises.

Every failure becomes a JSON-RPC error a client can act on. The HTTP status
comes from the era's table for the error's code, except for the three cases
``errors.py`` names (a transport rejection, a retryable dependency, a crash).
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ..codes import INTERNAL_ERROR
from ..domain.errors import TaskgateError, TaskNotFound, TooManyActiveTasks
from .calls.services import AuditHook
from .era import Era
from .wire import sse
from .wire.errors import Retryable, RpcError, TransportRejection, from_domain
from .wire.exchange import Call, HttpReply
from .wire.jsonrpc import ClientResponse, failure, parse_message, request_id, success

logger = logging.getLogger(__name__)


class McpServer:
    def __init__(self, eras: Sequence[Callable[[], Era]], *, audit: AuditHook | None = None) -> None:
        """``eras``: each era's factory, asked in order; the last one serves whatever no era
        claims, so it is built by the first request that reaches it (the 2025-11-25 era,
        which a 2026-07-28 client never does)."""
        if not eras:
            raise ValueError("an MCP server needs at least one era")
        self._eras = list(eras)
        self._audit: AuditHook = audit or (lambda event, fields: None)

    @property
    def eras(self) -> list[Era]:
        """Every era, built (tests and scripts look inside)."""
        return [era() for era in self._eras]

    def era_for(self, headers: Mapping[str, str], meta: Mapping[str, Any]) -> Era:
        *first, last = self._eras
        for factory in first:
            era = factory()
            if era.claims(headers, meta):
                return era
        return last()

    def handle(
        self, body: Any, headers: Mapping[str, str], owner: str, gone: Callable[[], bool] | None = None
    ) -> HttpReply:
        """One POSTed JSON-RPC message; ``gone`` tells whether its client has gone away."""
        msg_id = request_id(body)
        era = self.era_for(headers, _meta_of(body))
        call = Call(owner, headers)
        try:
            message = parse_message(body)
            if isinstance(message, ClientResponse):
                era.client_response(message, call)
                return HttpReply(202)
            call = Call(owner, headers, message, gone=gone or _never)
            if message.is_notification:
                era.notify(call)
                return HttpReply(202)
            result = era.dispatch(call)
            if isinstance(result, HttpReply):
                return result
            if call.emitted and sse.accepts(headers):
                return sse.reply([*call.emitted, success(message.id, result)])
            return HttpReply(200, success(message.id, result))
        except Exception as exc:
            return self._error(exc, era, call, msg_id)

    def handle_get(self, headers: Mapping[str, str], owner: str) -> HttpReply:
        """GET /mcp (2025: resume a stream after ``Last-Event-ID``)."""
        era = self.era_for(headers, {})
        call = Call(owner, headers)
        try:
            return era.handle_get(call)
        except Exception as exc:
            return self._error(exc, era, call, None)

    def handle_delete(self, headers: Mapping[str, str], owner: str) -> HttpReply:
        """DELETE /mcp (2025: end a session)."""
        era = self.era_for(headers, {})
        call = Call(owner, headers)
        try:
            return era.handle_delete(call)
        except Exception as exc:
            return self._error(exc, era, call, None)

    def _error(self, exc: Exception, era: Era, call: Call, msg_id: Any) -> HttpReply:
        if isinstance(exc, TaskgateError):
            self._audit_denial(exc, call)
            error = from_domain(exc)
            if isinstance(error, Retryable) or error.code == INTERNAL_ERROR:
                logger.warning("%s failed: %s", call.method or "request", exc, exc_info=exc)
        elif isinstance(exc, RpcError):
            error = exc
        else:
            # A tool that raised in a plain call, or a bug: the caller gets an id to search the
            # log by (its line carries it as errorId), never the trace.
            error_id = uuid.uuid4().hex[:12]
            logger.exception(
                "unhandled error in %s (errorId %s)",
                call.method or "request",
                error_id,
                exc_info=exc,
                extra={"errorId": error_id},
            )
            message = f"Internal error (the function's log has the trace under errorId {error_id})"
            return HttpReply(500, failure(msg_id, RpcError(INTERNAL_ERROR, message, {"errorId": error_id})))
        body = failure(msg_id, error)
        if isinstance(error, TransportRejection):
            return HttpReply(error.http_status, body, headers=dict(error.headers))
        if isinstance(error, Retryable):
            return HttpReply(503, body, headers={"retry-after": str(error.retry_after)})
        return HttpReply(era.status_for(error.code), body)

    def _audit_denial(self, exc: TaskgateError, call: Call) -> None:
        if isinstance(exc, TaskNotFound):
            self._audit(
                "denied",
                {"taskId": exc.task_id, "owner": call.owner, "method": call.method, "reason": exc.reason},
            )
        elif isinstance(exc, TooManyActiveTasks):
            self._audit("denied", {"owner": call.owner, "method": call.method, "reason": "task limit"})


def _never() -> bool:
    return False


def _meta_of(body: Any) -> dict[str, Any]:
    # Read before the message is validated: an invalid message still has an era.
    params = body.get("params") if isinstance(body, dict) else None
    meta = params.get("_meta") if isinstance(params, dict) else None
    return meta if isinstance(meta, dict) else {}
