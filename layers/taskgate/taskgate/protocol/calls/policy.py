"""The deployment's settings for plain calls, and the front the callers come through.

``CallPolicy`` is what the deployer set (config.Settings): how long a tool may run inside a
request, how long a caller waits by default, whether a long call may be handed to the model
as a task handle. ``Front`` is what stands between the caller and this server: whether it
passes a response on as it is written (a REST API with response streaming) or buffers it
whole (the HTTP API), and when it cuts a response.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

# The header a client (or its user, in the host's server configuration) sets to say how
# long it waits for a plain call; 0 means "hand me a task handle at once".
WAIT_HEADER = "taskgate-wait-seconds"
# A held call ends this long before a streaming front would cut it.
HOLD_MARGIN_SECONDS = 30.0
# A request that waits (on a hidden task's row, or on a tool run inline) answers this long
# before its front cuts it: room for what came before the wait and for the answer itself.
ANSWER_MARGIN_SECONDS = 4.0
# How many input_required results a client takes in one call before it gives up: the SDKs'
# shared default (mcp's DEFAULT_INPUT_REQUIRED_MAX_ROUNDS, the TypeScript, C# and Go SDKs,
# Strands' own loop). A call carried on in rounds lasts at most this many rounds plus its first.
CLIENT_MAX_ROUNDS = 10


@dataclass(frozen=True)
class Front:
    """What stands before the function: a front that streams or buffers, and its cut."""

    streams: bool = False
    cut_seconds: float = 29.0

    @property
    def hold_seconds(self) -> float:
        """How long a call can be held open behind it: 0 behind a front that buffers."""
        return max(0.0, self.cut_seconds - HOLD_MARGIN_SECONDS) if self.streams else 0.0

    @property
    def answer_seconds(self) -> float:
        """How long a request may take before it must answer, to answer before the cut."""
        return max(0.0, self.cut_seconds - ANSWER_MARGIN_SECONDS)

    @property
    def round_seconds(self) -> float:
        """How long one round of a call carried on in rounds (protocol/calls/rounds.py) lasts:
        as long as a call can be held behind a front that streams; as long as a request may
        wait on the task's row before it answers behind one that buffers."""
        return self.hold_seconds if self.streams else self.answer_seconds


@dataclass(frozen=True)
class CallPolicy:
    """The deployment's settings for plain calls (config.Settings)."""

    inline_max_seconds: float = 10.0
    # How long a caller that did not say (Taskgate-Wait-Seconds) is taken to wait: one of the
    # 2025-11-25 hosts (their SDKs give up at 30 s or later), or one whose answer streams
    # while the tool runs; and any other, waiting for one response within its own request
    # timeout (2026-07-28 hosts: OpenAI Agents gives up at 5 s, and nothing on the wire
    # tells it from a host that waits longer).
    wait_seconds: float = 50.0
    answer_wait_seconds: float = 3.5
    handles: bool = True
    piece_seconds: float = 20.0
    hang_up_seconds: float = 90.0
    front_streaming: bool = False
    front_timeout_seconds: float = 29.0
    # The deployment's streaming endpoint (StreamingApi), when it has one: its /mcp.
    streaming_url: str = ""
    # Tool calls (and streams holding on) one process runs inside requests at once, and one
    # owner's share of them (InlineSlots).
    max_inline_calls: int = 16
    max_inline_calls_per_owner: int = 4
    max_held_calls_per_owner: int = 4

    @property
    def hang_up_ms(self) -> int:
        return math.ceil(self.hang_up_seconds * 1000)

    @property
    def front(self) -> Front:
        return Front(self.front_streaming, self.front_timeout_seconds)

    @property
    def hold_seconds(self) -> float:
        """How long a call can be held open here: 0 behind a front that buffers."""
        return self.front.hold_seconds

    def client_wait(self, raw: str | None, *, unsaid: float | None = None) -> float:
        """How long a caller waits for a plain call: its ``Taskgate-Wait-Seconds`` (``raw``),
        within a day, or, when it sent none (or nonsense), ``unsaid`` (default: ``wait_seconds``)."""
        unsaid = self.wait_seconds if unsaid is None else unsaid
        if raw is None:
            return unsaid
        try:
            wait = float(raw)
        except ValueError:
            return unsaid
        return min(max(wait, 0.0), 86_400.0) if math.isfinite(wait) else unsaid


@dataclass(frozen=True)
class ListenPolicy:
    """The deployment's settings for subscriptions/listen streams (config.ListenSettings), held
    behind the same front as calls: a stream lasts ``seconds`` (no longer than the front holds a
    response) and reads what it watches every ``interval_seconds``."""

    seconds: float = 840.0
    interval_seconds: float = 1.0
