"""What the eras' handlers are given: the services they drive, and who they are.

``Services`` is an interface: the composition root (``taskgate.root.Taskgate``) is one,
and builds each service the first time a handler asks for it, so a request that reads a
task never loads a tool module, a resource or a prompt.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

from ... import __version__

if TYPE_CHECKING:
    from ...domain.calls import PlainCalls
    from ...domain.durations import ToolDurations
    from ...domain.model import TaskRecord
    from ...domain.service import TaskService
    from ...tools.prompts import PromptRegistry
    from ...tools.registry import ToolRegistry
    from ...tools.resources import ResourceRegistry
    from ..wire.exchange import Call
    from ..wire.request_state import RequestStates
    from .policy import CallPolicy
    from .slots import InlineSlots
    from .waiting import RowWait

SERVER_NAME = "taskgate"

# Told of every task event a client causes: (event, fields). The Lambda handler
# turns these into audit log lines and metrics; tests can collect them.
AuditHook = Callable[[str, dict[str, Any]], None]


def server_info() -> dict[str, str]:
    return {"name": SERVER_NAME, "version": __version__}


class Services(Protocol):
    @property
    def tasks(self) -> TaskService: ...

    @property
    def tools(self) -> ToolRegistry: ...

    # What the modules in ToolModules registered beside their tools.
    @property
    def resources(self) -> ResourceRegistry: ...

    @property
    def prompts(self) -> PromptRegistry: ...

    # Seals a plain call's requestState (2026-07-28).
    @property
    def request_states(self) -> RequestStates: ...

    @property
    def inline(self) -> InlineSlots: ...

    # Who a request without an identity is (AuthMode NONE).
    @property
    def anonymous_owner(self) -> str: ...

    # The deployment's settings for plain calls (protocol/calls/policy.py).
    @property
    def policy(self) -> CallPolicy: ...

    # Plain calls' hidden tasks, keyed to their calls (domain/calls.py).
    @property
    def plain_calls(self) -> PlainCalls: ...

    # What is known of how long each tool runs (domain/durations.py).
    @property
    def durations(self) -> ToolDurations: ...

    # How a request waits on a hidden task's row (waiting.py).
    @property
    def row_wait(self) -> RowWait: ...

    def audit(self, event: str, fields: dict[str, Any]) -> None: ...


def fetched(services: Services, call: Call, record: TaskRecord) -> TaskRecord:
    """A finished task's result, read for the client (and audited as fetched)."""
    services.audit("result_fetched", {"taskId": record.task_id, "owner": call.owner})
    return services.tasks.with_result(record)
