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
# How many input_required results a client takes in one call before it gives up: the SDKs'
# shared default (mcp's DEFAULT_INPUT_REQUIRED_MAX_ROUNDS, the TypeScript, C# and Go SDKs,
# Strands' own loop). A call carried on in rounds lasts at most this many rounds plus its first.
CLIENT_MAX_ROUNDS = 10


@dataclass(frozen=True)
class Front:
    streams: bool = False
    cut_seconds: float = 29.0
    # The longest one response of a call served in pieces runs behind a front that buffers
    # (CALL_PIECE_SECONDS: well inside its cut).
    piece_seconds: float = 20.0

    @property
    def hold_seconds(self) -> float:
        """How long a call can be held open behind it: 0 behind a front that buffers."""
        return max(0.0, self.cut_seconds - HOLD_MARGIN_SECONDS) if self.streams else 0.0

    @property
    def round_seconds(self) -> float:
        """How long one round of a call carried on in rounds (protocol/calls/rounds.py) is
        held: as long as it can be behind a front that streams, a piece behind one that
        buffers (the front passes the round's whole response on when it ends)."""
        return self.hold_seconds if self.streams else self.piece_seconds


@dataclass(frozen=True)
class CallPolicy:
    """The deployment's settings for plain calls (config.Settings)."""

    inline_max_seconds: float = 10.0
    wait_seconds: float = 50.0
    handles: bool = True
    piece_seconds: float = 20.0
    hang_up_seconds: float = 90.0
    front_streaming: bool = False
    front_timeout_seconds: float = 29.0
    # The deployment's streaming endpoint (StreamingApi), when it has one: its /mcp.
    streaming_url: str = ""

    @property
    def hang_up_ms(self) -> int:
        return math.ceil(self.hang_up_seconds * 1000)

    @property
    def front(self) -> Front:
        return Front(self.front_streaming, self.front_timeout_seconds, self.piece_seconds)

    @property
    def hold_seconds(self) -> float:
        """How long a call can be held open here: 0 behind a front that buffers."""
        return self.front.hold_seconds

    def client_wait(self, raw: str | None) -> float:
        """How long a caller waits for a plain call: its ``Taskgate-Wait-Seconds`` (``raw``),
        within a day, or ``wait_seconds`` when it sent none (or nonsense)."""
        if raw is None:
            return self.wait_seconds
        try:
            wait = float(raw)
        except ValueError:
            return self.wait_seconds
        return min(max(wait, 0.0), 86_400.0) if math.isfinite(wait) else self.wait_seconds
