"""The caller's own tasks, as resources, prompts and completers may read them."""

from __future__ import annotations

from ...domain.errors import TaskNotFound
from ...domain.model import TaskRecord
from ...domain.service import TaskService
from ...tools.catalog import TaskView
from ..wire.params import MAX_ID_LENGTH


def _view(record: TaskRecord) -> TaskView:
    return TaskView(
        task_id=record.task_id,
        tool=record.tool,
        status=record.status.value,
        created_at_ms=record.created_at_ms,
        result=record.result,
    )


class OwnerTasks:
    """``TaskReader`` bound to one owner: another owner's task is a missing one."""

    def __init__(self, tasks: TaskService, owner: str) -> None:
        self._tasks = tasks
        self._owner = owner

    def get(self, task_id: str, *, with_result: bool = False) -> TaskView | None:
        if not task_id or len(task_id) > MAX_ID_LENGTH:
            return None
        try:
            record = self._tasks.get(self._owner, task_id)
        except TaskNotFound:
            return None
        if with_result and record.status.terminal:
            record = self._tasks.with_result(record)
        return _view(record)

    def recent(self, *, tool: str | None = None, limit: int = 50) -> list[TaskView]:
        records, _ = self._tasks.list(self._owner, None, limit=limit)
        return [_view(r) for r in records if tool is None or r.tool == tool]
