"""What a 2025-11-25 ``tools/call`` carries: its session (capabilities and log level said
once, at initialize) and, when the client asks for one, the task it wants (``params.task``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...domain.sessions import Session
from ...tools.input import ClientCapabilities
from ...tools.peer import LOG_LEVELS
from ..wire.params import ToolCall

if TYPE_CHECKING:
    from ..calls.outcomes import Invocation


def capabilities(session: Session | None) -> ClientCapabilities:
    return ClientCapabilities(session.capabilities if session else {})


def invocation(params: ToolCall, session: Session | None) -> Invocation:
    """The call: unique within its session; its log lines at the level the session set, and
    on a task's ``tasks/result`` stream (tagged with the task) only where the session set one."""
    from ..calls.outcomes import Invocation, TaskAsk  # with the first tools/call

    level = session.log_level if session else None
    task = TaskAsk(params.task.ttl, params.progress_token(), level) if params.task is not None else None
    return Invocation(
        params.name,
        params.arguments,
        scope=session.session_id if session else "",
        task=task,
        progress_token=params.progress_token(),
        log_level=level or LOG_LEVELS[0],
    )
