"""JSON-RPC over HTTP for /mcp: picks the protocol era per request and never raises.

Every failure becomes a JSON-RPC error a client can act on; nothing below this
module decides HTTP status codes except through ``RpcError.http_status``.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from botocore.exceptions import BotoCoreError, ClientError

from ..clock import now_ms
from ..domain.service import TaskService
from ..domain.sessions import SessionStore
from ..tools.registry import ToolRegistry
from .common import AuditHook, CallContext, HttpReply
from .era2025 import Era2025
from .era2026 import Era2026, speaks_2026
from .jsonrpc import INTERNAL_ERROR, ClientResponse, RpcError, failure, parse_message, success
from .result_stream import ResultStreams

logger = logging.getLogger(__name__)


class McpServer:
    def __init__(
        self,
        tasks: TaskService,
        tools: ToolRegistry,
        *,
        sessions: SessionStore,
        anonymous_owner: str,
        stream_budget_seconds: float = 20.0,
        audit: AuditHook | None = None,
    ) -> None:
        hook: AuditHook = audit or (lambda event, fields: None)
        self.streams = ResultStreams(tasks, sessions, budget_seconds=stream_budget_seconds)
        self._v2026 = Era2026(tasks, tools, hook)
        self._v2025 = Era2025(
            tasks,
            tools,
            hook,
            sessions=sessions,
            streams=self.streams,
            anonymous_owner=anonymous_owner,
            clock=now_ms,
        )

    def handle(self, body: Any, headers: Mapping[str, str], owner: str) -> HttpReply:
        """One POSTed JSON-RPC message."""
        msg_id: Any = body.get("id") if isinstance(body, dict) else None
        if isinstance(msg_id, bool) or not isinstance(msg_id, (str, int)):
            msg_id = None
        ctx = CallContext(owner, headers)
        try:
            message = parse_message(body)
            if isinstance(message, ClientResponse):
                self._v2025.client_response(message, ctx)
                return HttpReply(202)
            if message.is_notification:
                return HttpReply(202)
            meta = message.params.get("_meta")
            meta = meta if isinstance(meta, dict) else {}
            if speaks_2026(headers, meta):
                result = self._v2026.dispatch(message, meta, ctx)
            else:
                result = self._v2025.dispatch(message, ctx)
            if isinstance(result, HttpReply):
                return result
            return HttpReply(200, success(message.id, result))
        except RpcError as exc:
            return HttpReply(exc.http_status, failure(msg_id, exc))
        except (ClientError, BotoCoreError):
            # AWS refused or failed (throttling, an outage): nothing half-done was
            # acknowledged, so the client may retry the same request.
            logger.exception("AWS call failed in %s", body.get("method") if isinstance(body, dict) else "?")
            error = RpcError(INTERNAL_ERROR, "Service temporarily unavailable; please retry")
            return HttpReply(503, failure(msg_id, error), headers={"retry-after": "1"})
        except Exception:
            logger.exception("unhandled error in %s", body.get("method") if isinstance(body, dict) else "?")
            return HttpReply(500, failure(msg_id, RpcError(INTERNAL_ERROR, "Internal error")))

    def handle_get(self, headers: Mapping[str, str], owner: str) -> HttpReply:
        """GET /mcp: resume a stream after ``Last-Event-ID``."""
        return self._guard(lambda: self._v2025.resume(CallContext(owner, headers)))

    def handle_delete(self, headers: Mapping[str, str], owner: str) -> HttpReply:
        """DELETE /mcp: end a 2025 session."""
        return self._guard(lambda: self._v2025.terminate(CallContext(owner, headers)))

    def _guard(self, action: Any) -> HttpReply:
        try:
            reply: HttpReply = action()
            return reply
        except RpcError as exc:
            return HttpReply(exc.http_status, failure(None, exc))
        except Exception:
            logger.exception("unhandled error in GET/DELETE")
            return HttpReply(500, failure(None, RpcError(INTERNAL_ERROR, "Internal error")))
