"""What the caller of one ``tools/call`` can do: one frozen value its era reads from the
envelope (headers, ``_meta``, the session), so the flow (``flow.py``) decides from what a
caller can do, never from which era it speaks.

- ``wait_seconds``: how long it waits for a plain call (its ``Taskgate-Wait-Seconds``, or the
  deployment's default for a caller like it, policy.py), and ``answer_wait_seconds``: for one
  response that does not move meanwhile; ``budget_seconds``: how long one request of it may
  wait for such a response (that, within the front's cut);
- ``front``: what stands between it and this server (streams or buffers, and its cut);
- ``accepts_sse``: it takes an SSE response to this request;
- ``resumable``: its streams can be resumed (event ids, GET with ``Last-Event-ID``), so a
  call can be answered in pieces and a question can ride the call's own stream;
- ``answers_inline``: it answers questions in a round of its own call (an
  ``input_required`` result, then the same call with ``inputResponses``);
- ``capabilities``: which questions it declared it can answer (elicitation, sampling, roots);
  one that answers inline and declared any of them takes rounds (``takes_rounds``);
- ``tasks``: it declared tasks, so a call may be answered with a task it drives.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from ...tools.input import ClientCapabilities, declared_view
from ..wire import sse
from ..wire.exchange import Call
from .policy import WAIT_HEADER, CallPolicy, Front


# A named tuple, not a frozen dataclass: a first tools/call's cold start makes the class, and
# a dataclass's methods are compiled from source there (about 0.4 ms; a named tuple, a sixth).
class Caller(NamedTuple):
    """What the caller of a tools/call can do, and how long it waits."""

    wait_seconds: float
    front: Front = Front()
    accepts_sse: bool = False
    resumable: bool = False
    answers_inline: bool = False
    # Nothing declared (it is only read).
    capabilities: ClientCapabilities = ClientCapabilities({})
    tasks: bool = False
    # None: as ``wait_seconds``.
    answer_wait_seconds: float | None = None

    @property
    def budget_seconds(self) -> float:
        """How long one request of this caller may wait (on a hidden task's row, a handle's
        task): what the caller waits, and never past the front's cut."""
        wait = self.wait_seconds if self.answer_wait_seconds is None else self.answer_wait_seconds
        return min(wait, self.front.answer_seconds)

    @property
    def takes_rounds(self) -> bool:
        """It comes back for a round that asks it nothing (an ``input_required`` result with
        only a ``requestState``), so a call can be carried on round by round. Nothing in the
        protocol says so: a 2026-07-28 client can only ever be asked for elicitation, sampling
        or roots through such rounds, so one that declared any drives them (mcp's ``Client``,
        Strands, PydanticAI); one that declared none may not (OpenAI Agents raises on any
        ``input_required`` result), and is never sent one."""
        declared = self.capabilities.declared or {}
        return self.answers_inline and any(
            isinstance(declared.get(kind), dict) for kind in ("elicitation", "sampling", "roots")
        )

    @property
    def kept_capabilities(self) -> dict[str, Any] | None:
        """What a task created for this caller keeps of its capabilities (None: not known,
        as for a session older than them)."""
        declared = self.capabilities.declared
        return declared_view(declared) if declared is not None else None


def caller_of(
    call: Call,
    policy: CallPolicy,
    *,
    resumable: bool,
    answers_inline: bool,
    capabilities: ClientCapabilities,
    tasks: bool,
) -> Caller:
    """The caller of ``call``: how long it waits and whether it takes SSE, read from its
    headers; the front, from the deployment's settings; the rest, as its era read them."""
    accepts_sse = sse.accepts(call.headers)
    said = call.headers.get(WAIT_HEADER)
    # A caller that said nothing: a 2025-11-25 host (resumable), or one whose answer streams
    # while it waits, is taken to wait as such hosts do; any other, for one response within
    # the shortest request timeout among hosts (policy.py).
    streamed = accepts_sse and (resumable or policy.front.streams)
    unsaid = policy.wait_seconds if resumable else policy.answer_wait_seconds
    return Caller(
        wait_seconds=policy.client_wait(said, unsaid=policy.wait_seconds if streamed else unsaid),
        answer_wait_seconds=policy.client_wait(said, unsaid=unsaid),
        front=policy.front,
        accepts_sse=accepts_sse,
        resumable=resumable,
        answers_inline=answers_inline,
        capabilities=capabilities,
        tasks=tasks,
    )
