"""Amazon ECS, for the tasks tools hand off (ECS tasks, not taskgate's): status and stop."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from botocore.exceptions import ClientError

from ..jobs.vocabulary import JobProgress
from .aws_errors import error_code, translating


class EcsTasks:
    def __init__(self, client: Callable[[], Any]) -> None:
        self._client = client

    @translating
    def describe(self, cluster: str, task_arn: str) -> JobProgress | None:
        tasks = self._client().describe_tasks(cluster=cluster, tasks=[task_arn]).get("tasks", [])
        if not tasks:
            return None
        task = tasks[0]
        message = str(task.get("lastStatus", "UNKNOWN"))
        if task.get("stoppedReason"):
            message += f" ({task['stoppedReason']})"
        return JobProgress(message)

    @translating
    def stop(self, cluster: str, task_arn: str, reason: str) -> None:
        try:
            self._client().stop_task(cluster=cluster, task=task_arn, reason=reason[:255])
        except ClientError as exc:
            # A task ECS no longer knows has stopped already.
            if error_code(exc) not in ("InvalidParameterException", "ClusterNotFoundException"):
                raise
