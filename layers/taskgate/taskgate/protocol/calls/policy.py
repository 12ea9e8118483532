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


@dataclass(frozen=True)
class Front:
    streams: bool = False
    cut_seconds: float = 29.0

    @property
    def hold_seconds(self) -> float:
        """How long a call can be held open behind it: 0 behind a front that buffers."""
        return max(0.0, self.cut_seconds - HOLD_MARGIN_SECONDS) if self.streams else 0.0


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


@dataclass(frozen=True)
class ListenPolicy:
    """The deployment's settings for subscriptions/listen streams (config.ListenSettings), held
    behind the same front as calls: a stream lasts ``seconds`` (no longer than the front holds a
    response) and reads what it watches every ``interval_seconds``."""

    seconds: float = 840.0
    interval_seconds: float = 1.0
