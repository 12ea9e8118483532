"""Domain failures. The protocol maps each to a JSON-RPC error in one table
(``protocol/wire/errors.py``); adapters translate AWS errors into the last two."""

from __future__ import annotations

from typing import Any


class TaskgateError(Exception):
    """Base for every failure the domain names. ``data`` goes to the client as the
    JSON-RPC error's ``data`` when the error is one a client can act on."""

    data: Any = None


class TaskNotFound(TaskgateError):
    """Missing, expired, or owned by someone else: the three look the same on purpose."""

    def __init__(self, task_id: str, reason: str = "Task not found") -> None:
        super().__init__(reason)
        self.task_id = task_id
        self.reason = reason


class TaskAlreadyExists(TaskgateError):
    """A create found the id taken (ids are random: this is a bug, never a client error)."""


class TransitionRejected(TaskgateError):
    """A conditional write found the task in a status that forbids the change."""


class InvalidCursor(TaskgateError):
    """A tasks/list cursor this server did not issue (or one that was tampered with)."""


class TooManyActiveTasks(TaskgateError):
    def __init__(self, limit: int) -> None:
        super().__init__(
            f"Too many active tasks: at most {limit} may be working or waiting for input at once"
        )
        self.limit = limit
        self.data = {"limit": limit}


class PayloadTooLarge(TaskgateError):
    def __init__(self, what: str, size: int, limit: int) -> None:
        super().__init__(f"{what} is {size} bytes; the limit is {limit}")
        self.what = what
        self.size = size
        self.limit = limit
        self.data = {"limit": limit}


class ServiceUnavailable(TaskgateError):
    """A dependency is throttling, failing with a 5xx, or unreachable: nothing was
    acknowledged, and the same request may succeed if retried."""


class ServerBusy(ServiceUnavailable):
    """This process already runs as much inline work as it may: retry shortly (its
    message says what to do instead)."""


class DependencyFailure(TaskgateError):
    """A dependency refused for good (access denied, validation, a missing object):
    retrying the same request cannot help."""


class ResultUnavailable(DependencyFailure):
    """A finished task's result is no longer where it was stored (the object expired or
    was deleted): the client is told so, once, rather than to retry."""

    def __init__(self, task_id: str) -> None:
        super().__init__("The task's result is no longer stored; it cannot be returned")
        self.task_id = task_id
