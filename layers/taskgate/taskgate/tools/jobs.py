"""Jobs a tool hands off (``ctx.hand_off``): the task waits for them at no compute.

    result = ctx.hand_off("etl", StepFunctionsExecution(ETL_ARN, input={"day": args.day}))
    return f"{result.output['rows']} rows loaded"

The step ends at ``hand_off``; the state machine starts the job, waits for it natively
(``.sync``, or a callback URL), stores its outcome under the key and runs the tool again
from the top, where ``hand_off`` returns it. Keys are unique over the task's life, as a
question's are: a tool that runs again never starts the same job twice. Work before a
hand-off runs again too: keep it cheap, or ``checkpoint`` it.

A job that fails raises ``JobFailed`` (a ``ToolError``: uncaught, the tool's result is an
error that says what failed and why); ``check=False`` returns it as a ``JobResult``.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .errors import ToolError

if TYPE_CHECKING:
    from ..jobs.batch import BatchJob
    from ..jobs.callback import Callback
    from ..jobs.ecs import EcsTask
    from ..jobs.execution import StepFunctionsExecution, child_name
    from ..jobs.glue import GlueJobRun
    from ..jobs.vocabulary import Job, JobSpec

# The job classes, each from its kind's module, imported when a tool first names it (and the
# jobs' vocabulary with them): a cold start pays only for the kinds its tools hand off to.
_KIND_MODULES = {
    "Job": "vocabulary",
    "JobSpec": "vocabulary",
    "BatchJob": "batch",
    "Callback": "callback",
    "EcsTask": "ecs",
    "GlueJobRun": "glue",
    "StepFunctionsExecution": "execution",
    "child_name": "execution",
}

# What a tool author imports from here (taskgate.tools re-exports the job classes).
__all__ = [
    "BatchJob",
    "Callback",
    "EcsTask",
    "GlueJobRun",
    "Job",
    "JobFailed",
    "JobResult",
    "JobSpec",
    "StepFunctionsExecution",
    "child_name",
    "read_result",
]


@dataclass(frozen=True)
class JobResult:
    """How a handed-off job ended: ``output`` (what it produced) when ``ok``; ``error``
    and ``reason`` otherwise."""

    key: str
    ok: bool
    output: Any = None
    error: str | None = None
    reason: str | None = None


class JobFailed(ToolError):
    """A handed-off job failed (or did not finish in the task's time). Uncaught, the
    tool's result is an error saying which job failed and why."""

    def __init__(self, message: str, result: JobResult) -> None:
        super().__init__(message)
        self.result = result


def read_result(key: str, kind: str, label: str, raw: Any, *, check: bool) -> JobResult:
    from ..jobs.vocabulary import JobOutcome  # a job has been handed off, so it is loaded

    outcome = JobOutcome.read(kind, raw)
    result = JobResult(key, outcome.ok, outcome.output, outcome.error, outcome.reason)
    if check and not outcome.ok:
        raise JobFailed(outcome.failure_message(label), result)
    return result


def __getattr__(name: str) -> Any:
    module = _KIND_MODULES.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"taskgate.jobs.{module}"), name)
