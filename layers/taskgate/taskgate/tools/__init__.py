"""What a tool author sees: the ``tool`` decorator, ``ToolContext``, questions of every
kind, and result helpers."""

from . import content
from .context import Answer, Elicit, ProtocolError, ToolContext, ToolError
from .input import ElicitUrl, InputRefused, ListRoots, MissingCapability, Root, Sample, Sampled
from .registry import Tool, ToolRegistry, registry, tool

__all__ = [
    "Answer",
    "Elicit",
    "ElicitUrl",
    "InputRefused",
    "ListRoots",
    "MissingCapability",
    "ProtocolError",
    "Root",
    "Sample",
    "Sampled",
    "Tool",
    "ToolContext",
    "ToolError",
    "ToolRegistry",
    "content",
    "registry",
    "tool",
]
