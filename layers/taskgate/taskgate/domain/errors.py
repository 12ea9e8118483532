"""Domain failures. The protocol layer maps each to a JSON-RPC error."""


class TaskError(Exception):
    """Base for failures a client can be told about."""


class TaskNotFound(TaskError):
    """Missing, expired, or owned by someone else: the three look the same on purpose."""

    def __init__(self, task_id: str, reason: str = "Task not found") -> None:
        super().__init__(reason)
        self.task_id = task_id
        self.reason = reason


class TaskAlreadyExists(TaskError):
    pass


class TransitionRejected(TaskError):
    """A conditional write found the task in a status that forbids the change."""


class TaskTerminal(TaskError):
    """The operation needs an active task and this one has ended."""


class WorkflowUnavailable(TaskError):
    """The execution engine refused or failed to start/resume the work."""


class InvalidCursor(TaskError):
    """A tasks/list cursor this server did not issue (or one that was tampered with)."""


class TooManyActiveTasks(TaskError):
    def __init__(self, limit: int) -> None:
        super().__init__(
            f"Too many active tasks: at most {limit} may be working or waiting for input at once"
        )
        self.limit = limit


class PayloadTooLarge(TaskError):
    def __init__(self, what: str, size: int, limit: int) -> None:
        super().__init__(f"{what} is {size} bytes; the limit is {limit}")
        self.what = what
        self.size = size
        self.limit = limit
