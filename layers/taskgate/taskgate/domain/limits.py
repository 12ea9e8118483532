"""The bounds the task lifecycle enforces. Built from ``Settings`` (the one place
the defaults live) by the composition root."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from .errors import PayloadTooLarge


def json_size(value: Any) -> int:
    """Bytes of ``value`` as it is stored: compact JSON, UTF-8, no ASCII escaping."""
    return len(json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode())


@dataclass(frozen=True)
class Limits:
    default_ttl_ms: int
    max_ttl_ms: int
    poll_interval_ms: int
    # 0: no limit.
    max_active_per_owner: int
    max_argument_bytes: int
    max_input_response_bytes: int

    def effective_ttl(self, requested_ms: int | None) -> int:
        if requested_ms is None or requested_ms <= 0:
            return min(self.default_ttl_ms, self.max_ttl_ms)
        return min(requested_ms, self.max_ttl_ms)

    def check_arguments(self, arguments: dict[str, Any]) -> None:
        size = json_size(arguments)
        if size > self.max_argument_bytes:
            raise PayloadTooLarge("arguments", size, self.max_argument_bytes)

    def check_answers(self, answers: dict[str, Any]) -> None:
        size = json_size(answers)
        if size > self.max_input_response_bytes:
            raise PayloadTooLarge("inputResponses", size, self.max_input_response_bytes)
