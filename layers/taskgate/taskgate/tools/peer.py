"""The client behind one run of a tool: what it declared, and where notifications to it go.

A plain call has a response stream (2025-11-25: the POST's SSE stream; 2026-07-28: an SSE
response) that can carry ``notifications/progress`` and ``notifications/message`` before
the result. A task outlives its request, so a task's run has no stream: its progress is
the task's ``statusMessage`` and its log messages go to the function's log.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .input import UNKNOWN, ClientCapabilities

# RFC 5424 severities, least severe first (MCP's LoggingLevel).
LOG_LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")
_PYTHON_LEVEL = {
    "debug": logging.DEBUG,
    "info": logging.INFO,
    "notice": logging.INFO,
    "warning": logging.WARNING,
    "error": logging.ERROR,
    "critical": logging.CRITICAL,
    "alert": logging.CRITICAL,
    "emergency": logging.CRITICAL,
}

Notify = Callable[[dict[str, Any]], None]

tool_logger = logging.getLogger("taskgate.tools")


def at_least(level: str, threshold: str) -> bool:
    return LOG_LEVELS.index(level) >= LOG_LEVELS.index(threshold)


def python_level(level: str) -> int:
    return _PYTHON_LEVEL[level]


@dataclass(frozen=True)
class Peer:
    """The client, as a tool sees it while it runs."""

    capabilities: ClientCapabilities = UNKNOWN
    # Sends one notification on this request's response stream; None: there is none.
    notify: Notify | None = None
    # The least severe log level the client asked for; None: no notifications/message.
    log_level: str | None = None
    # The request's ``_meta.progressToken``; None: no notifications/progress.
    progress_token: str | int | None = None


NO_PEER = Peer()
