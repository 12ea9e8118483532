"""A plain call that became a hidden task, keyed to that call.

A client may send the same call again (a retry after a dropped connection, a 504); it
must find the task the first one started, never start a second run. And a client may
cancel a call while the call is still being served, before its task exists. Both are
decided by conditional writes on one ``call#…`` item per call, never by reading first:

- the call claims the item for a task id it picked (put, if absent), then creates the
  task under that id; a retry finds the claim and carries on with the same task;
- a cancel marks the item cancelled (creating a tombstone if the call has not claimed it
  yet) and reads, in the same write, which task it names;
- after creating its task the call reads the item again: a cancel that came in between
  is seen by the call (which cancels what it just created) or by the cancel (which finds
  the task), and usually by both. A tombstone stops the call before any task exists.

A retry is the same call only if it is: the claim keeps a digest of the tool and its
arguments, and a request that finds a claim with another digest is refused ("request id
in use") instead of being handed the first call's task. A 2025 call without a session has
only its caller and its request id to go by, and two calls may share those.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from .errors import TaskAlreadyExists, TaskgateError, TaskNotFound
from .model import TaskRecord
from .ports import Clock
from .service import TaskService, new_task_id


def call_key(owner: str, session_id: str | None, request_id: Any) -> str:
    """A 2025-11-25 call: a request id is only unique within its session, and only its
    caller may refer to it."""
    raw = json.dumps([owner, session_id or "", request_id], separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(raw.encode()).hexdigest()


# A 2026-07-28 call's key names no session, so two runs of one client (each counting its
# request ids from 1) could send the same one: it is kept only as long as a retry comes.
STATELESS_RETRY_MS = 600_000


def stateless_call_key(owner: str, request_id: Any, tool: str, arguments: dict[str, Any]) -> str:
    """A 2026-07-28 call has no session: the same caller sending the same request id for
    the same tool with the same arguments (within STATELESS_RETRY_MS) is the same call."""
    raw = json.dumps(
        ["2026", owner, request_id, tool, arguments],
        separators=(",", ":"),
        ensure_ascii=False,
        sort_keys=True,
    )
    return hashlib.sha256(raw.encode()).hexdigest()


def call_digest(tool: str, arguments: dict[str, Any]) -> str:
    """What makes a call the same call again: its tool and its arguments."""
    raw = json.dumps([tool, arguments], separators=(",", ":"), ensure_ascii=False, sort_keys=True)
    return hashlib.sha256(raw.encode()).hexdigest()


class CallIdInUse(TaskgateError):
    """A request id already names another call (another tool or other arguments) of this caller."""

    def __init__(self) -> None:
        super().__init__("request id in use: it names another call of yours; send a new id")


class CallCancelled(TaskgateError):
    """The client cancelled this call before it was served."""

    def __init__(self) -> None:
        super().__init__("The request was cancelled by the client")


@dataclass(frozen=True)
class CallClaim:
    """Which hidden task a plain call's id claimed, or its tombstone."""

    # None: a tombstone (the call was cancelled before anything claimed it).
    task_id: str | None
    cancelled: bool = False
    # call_digest of the call that claimed it ("": a tombstone, or a claim from before digests)
    digest: str = ""


class CallStore(Protocol):
    def claim_call(self, key: str, task_id: str, expires_at_ms: int, digest: str = "") -> CallClaim | None:
        """Claim ``key`` for ``task_id`` (the call ``digest``) if nothing has (a conditional
        put): None when this claim won, otherwise what the item holds."""

    def cancel_call(self, key: str, expires_at_ms: int) -> CallClaim:
        """Mark the call cancelled, creating a tombstone if nothing claimed it yet, and
        return what the item now holds (one write)."""

    def find_call(self, key: str) -> CallClaim | None:
        """The item, read consistently; None when there is none (or it expired)."""


@dataclass(frozen=True)
class Started:
    """A plain call's hidden task, as its claim found or made it."""

    record: TaskRecord
    # True: a retry of a call that had already started this task.
    again: bool


class PlainCalls:
    def __init__(self, tasks: TaskService, store: CallStore, clock: Clock) -> None:
        self._tasks = tasks
        self._store = store
        self._clock = clock

    def start(
        self,
        owner: str,
        key: str,
        create: Callable[[str], TaskRecord],
        *,
        digest: str = "",
        remember_ms: int | None = None,
    ) -> Started:
        """The hidden task of the call ``key``: created by ``create(task_id)`` for a new
        call, the same one for a retry of the same call (``digest``: its tool and arguments;
        within ``remember_ms``; default: the task's TTL). Raises CallCancelled when the
        client cancelled the call first (and then nothing runs), CallIdInUse when the key
        names another call."""
        expires = self._clock() + (remember_ms or self._tasks.limits.effective_ttl(None))
        task_id = new_task_id()
        claim = self._store.claim_call(key, task_id, expires, digest)
        if claim is not None:
            if claim.task_id is None:
                raise CallCancelled()
            if claim.digest and digest and claim.digest != digest:
                raise CallIdInUse()
            return Started(self._again(owner, claim.task_id, create), again=True)
        record = create(task_id)
        after = self._store.find_call(key)
        if after is None or after.cancelled:
            self._tasks.cancel(owner, record.task_id)
            raise CallCancelled()
        return Started(record, again=False)

    def _again(self, owner: str, task_id: str, create: Callable[[str], TaskRecord]) -> TaskRecord:
        try:
            return self._tasks.get(owner, task_id)
        except TaskNotFound:
            pass
        # Claimed, but its task is not there yet: the first call is still creating it, or
        # died between the claim and the create. Create it under the claimed id; whoever
        # is second finds it taken and reads it.
        try:
            return create(task_id)
        except TaskAlreadyExists:
            return self._tasks.get(owner, task_id)

    def cancel(self, owner: str, key: str) -> str | None:
        """``notifications/cancelled`` for the call ``key``: the task it cancelled now, if any."""
        claim = self._store.cancel_call(key, self._clock() + self._tasks.limits.effective_ttl(None))
        if claim.task_id is None:
            return None  # a tombstone: the call stops before it starts anything
        try:
            cancelled = self._tasks.cancel(owner, claim.task_id).cancelled_now
        except TaskNotFound:
            return None  # not created yet: the call sees the mark once it has
        return claim.task_id if cancelled else None
