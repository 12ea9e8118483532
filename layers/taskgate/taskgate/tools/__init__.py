"""What a tool author sees: the ``tool`` decorator, the context, questions of every kind,
and errors. Resources and prompts are in ``taskgate.tools.resources`` and
``taskgate.tools.prompts``, result helpers in ``taskgate.tools.content``: the protocol
imports this package at every cold start, and a request that reads a task needs none of them.
"""

from __future__ import annotations

from .context import Answer, CheckpointTooLarge, Elicit, ProtocolError, ToolContext, ToolError
from .input import ElicitUrl, InputRefused, ListRoots, MissingCapability, Root, Sample, Sampled
from .jobs import BatchJob, Callback, EcsTask, GlueJobRun, JobFailed, JobResult, StepFunctionsExecution
from .needs import secret
from .registry import Tool, ToolRegistry, registry, tool

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
