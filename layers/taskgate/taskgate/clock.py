"""Time as the task model keeps it: epoch milliseconds, shown as ISO 8601."""

import time
from datetime import UTC, datetime


def now_ms() -> int:
    return time.time_ns() // 1_000_000


def iso_from_ms(ms: int) -> str:
    """The timestamp format Step Functions' ``$$.State.EnteredTime`` uses, so rows
    written by the state machine and by Python read the same."""
    dt = datetime.fromtimestamp(ms / 1000, tz=UTC)
    return dt.strftime("%Y-%m-%dT%H:%M:%S.") + f"{ms % 1000:03d}Z"


def ms_from_iso(value: str) -> int:
    return int(datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp() * 1000)
