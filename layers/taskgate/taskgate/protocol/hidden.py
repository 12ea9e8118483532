"""A plain call's hidden task, started once per call (domain/calls.py) whatever the era."""

from __future__ import annotations

from typing import Any

from ..domain.calls import Started
from ..domain.model import TaskRecord
from .era import Call
from .services import Services
from .tool_calls import ToolRequest, create_task


def start_hidden(
    services: Services,
    call: Call,
    request: ToolRequest,
    key: str,
    *,
    remember_ms: int | None = None,
    **create: Any,
) -> Started:
    """The task of the plain call ``key`` (``create``: create_task's options), created the
    first time and found again by a retry of the same call (within ``remember_ms``)."""

    def new(task_id: str) -> TaskRecord:
        return create_task(services, call, request, task_id=task_id, **create)

    return services.plain_calls.start(call.owner, key, new, remember_ms=remember_ms)
