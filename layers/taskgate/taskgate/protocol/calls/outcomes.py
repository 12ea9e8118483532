"""What a ``tools/call`` becomes, as values: the call as its era read it (``Invocation``,
``TaskAsk``) and the flow's one outcome (flow.py says what each means). Apart from the flow
itself, so that the eras can name them without the flow's plan, rounds and runs; the eras
import them with the first ``tools/call``, so the cold start of any other request pays for
none of it."""

from __future__ import annotations

import enum
from collections.abc import Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, NamedTuple

from ...domain.model import TaskRecord

if TYPE_CHECKING:
    from .rounds import Rounds


class TaskAsk(NamedTuple):
    """A call that asked to run as a task (2025-11-25 ``params.task``), and what its task
    keeps for it. A caller that declared tasks without asking gets ``TaskAsk()``."""

    ttl_ms: int | None = None
    progress_token: str | int | None = None
    log_level: str | None = None


# The values here are named tuples, not dataclasses: a first tools/call's cold start makes
# them, and a frozen dataclass costs about 0.4 ms to make there (its methods compiled from
# source), a named tuple a sixth of that. They are values the eras and the flow only read.


class Invocation(NamedTuple):
    """One ``tools/call`` as its era read it from the envelope."""

    name: str
    arguments: dict[str, Any] | None = None
    # What the call's request id is unique within, for its hidden task (domain/calls.py):
    # its session ("" without one), or None: nothing, and a stateless call is the same call
    # when its id, tool and arguments are (for STATELESS_RETRY_MS).
    scope: str | None = None
    task: TaskAsk | None = None
    # This round's answers (None: sent, but not an object of answers), and the sealed state
    # the round before handed out.
    answers: Mapping[str, Any] | None = MappingProxyType({})
    request_state: str | None = None
    progress_token: str | int | None = None
    # The least severe log line the call's own stream carries (None: none).
    log_level: str | None = None
    # Its era mirrors arguments in headers (SEP-2243 ``Mcp-Param-*``): they must agree.
    param_headers: bool = False


class Created(NamedTuple):
    """A task the caller drives."""

    record: TaskRecord


class Answered(NamedTuple):
    """The call's result, now."""

    result: dict[str, Any]
    # The tool closed its stream early (SEP-1699): the result is for a resumed stream.
    stream_closed: bool = False


class Asks(NamedTuple):
    """Questions for a caller that answers them in a round of its own call."""

    requests: dict[str, Any]
    # What the next round echoes (answers given so far, the tool's saved state); None: nothing.
    request_state: str | None = None


class Held(NamedTuple):
    """A hidden task whose progress and result stream on a response the front holds."""

    record: TaskRecord
    hand_over_at_ms: int | None
    expected_seconds: float | None
    # For a caller that answers in rounds: its call's rounds, and how long this round is
    # held before it ends with a round that asks nothing (None: until something else ends it).
    rounds: Rounds | None = None
    round_after_ms: int | None = None


class Streamed(NamedTuple):
    """A hidden task answered on the call's own resumable stream, in pieces."""

    record: TaskRecord
    # A retry of a call whose hidden task had already started.
    again: bool
    hand_over_at_ms: int | None


class HandedOver(NamedTuple):
    """A hidden task handed to the model as a task handle."""

    record: TaskRecord
    expected_seconds: float | None
    # The handle must be asked after within this long, or its task is taken as abandoned
    # (a caller that may have gone while the request waited); None: it is the model's.
    claim_within_seconds: float | None = None

    @property
    def result(self) -> dict[str, Any]:
        from .handle_tools import handed  # the flow has it loaded by then

        return handed(self.record, self.expected_seconds, self.claim_within_seconds)


class Refusal(enum.StrEnum):
    TASK_REQUIRED = "task_required"  # the tool runs only as a task, and none was asked for
    NOT_A_TASK = "not_a_task"  # a task was asked for, and the tool cannot run as one
    NEEDS_INPUT = "needs_input"  # the tool asks, and this caller has nowhere to answer
    CANNOT_WAIT = "cannot_wait"  # nothing can hold the call as long as it runs (Plan.REFUSE)


class Refused(NamedTuple):
    """Why this caller cannot be served so, for its era to word."""

    why: Refusal
    tool: str
    # What can be done instead, in words any era can send (its era may word it its own way).
    message: str


Outcome = Created | Answered | Asks | Held | Streamed | HandedOver | Refused
