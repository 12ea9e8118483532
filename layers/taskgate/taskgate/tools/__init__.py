"""What a tool author sees: the ``tool`` decorator, the context, questions of every kind,
and errors. Resources and prompts are in ``taskgate.tools.resources`` and
``taskgate.tools.prompts``, result helpers in ``taskgate.tools.content``: the protocol
imports this package at every cold start, and a request that reads a task needs none of them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .context import Answer, CheckpointTooLarge, Elicit, ProtocolError, ToolContext, ToolError
from .input import ElicitUrl, InputRefused, ListRoots, MissingCapability, Root, Sample, Sampled
from .jobs import JobFailed, JobResult
from .needs import secret
from .registry import Tool, ToolRegistry, registry, tool

if TYPE_CHECKING:
    from .jobs import BatchJob, Callback, EcsTask, GlueJobRun, StepFunctionsExecution

# Each job class comes from its kind's module when a tool first names it (tools/jobs.py).
_JOB_CLASSES = frozenset({"BatchJob", "Callback", "EcsTask", "GlueJobRun", "StepFunctionsExecution"})


def __getattr__(name: str) -> Any:
    if name in _JOB_CLASSES:
        from . import jobs

        return getattr(jobs, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "Answer",
    "BatchJob",
    "Callback",
    "CheckpointTooLarge",
    "EcsTask",
    "Elicit",
    "ElicitUrl",
    "GlueJobRun",
    "InputRefused",
    "JobFailed",
    "JobResult",
    "ListRoots",
    "MissingCapability",
    "ProtocolError",
    "Root",
    "Sample",
    "Sampled",
    "StepFunctionsExecution",
    "Tool",
    "ToolContext",
    "ToolError",
    "ToolRegistry",
    "registry",
    "secret",
    "tool",
]
