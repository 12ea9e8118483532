"""Any outside system, through a callback URL (``.waitForTaskToken``): nothing runs in AWS;
the task waits for the URL's delivery (domain/callbacks.py), with or without heartbeats."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .kinds import KINDS, JobKind, Kind

if TYPE_CHECKING:
    from .vocabulary import JobSpec


@dataclass(frozen=True)
class Callback:
    """Any outside system, through a callback URL: single-use, unguessable, expiring with
    the wait. ``send(url)`` hands it to the system (it runs once the URL is stored, before
    the step ends); the system POSTs JSON to it, needing no AWS credentials:

        {"status": "succeeded", "output": …}
        {"status": "failed", "error": "…", "message": "…"}
        {"status": "heartbeat", "message": "…", "progress": 3, "total": 10}

    A heartbeat shows its message as the task's statusMessage. With ``heartbeat_seconds``
    the wait fails when none arrives for that long."""

    send: Callable[[str], None] | None = None
    timeout_seconds: int | None = None
    heartbeat_seconds: int | None = None

    def spec(self, task_id: str, key: str) -> JobSpec:
        from .vocabulary import JobSpec  # with the first job of any kind

        return JobSpec(
            JobKind.CALLBACK,
            "",
            {},
            timeout_seconds=self.timeout_seconds,
            heartbeat_seconds=self.heartbeat_seconds,
            send=self.send,
        )


KIND = KINDS.add(
    Kind(
        JobKind.CALLBACK,
        "callback",
        named_by="key",
        callback=True,
        states=("AwaitCallbackWithHeartbeat", "AwaitCallback"),
        integration="aws-sdk:dynamodb:updateItem.waitForTaskToken",
    )
)
