"""What a tool author sees: the ``tool``, ``resource`` and ``prompt`` decorators, the
contexts, questions of every kind, and result helpers."""

from . import content
from .context import Answer, CheckpointTooLarge, Elicit, ProtocolError, ToolContext, ToolError
from .input import ElicitUrl, InputRefused, ListRoots, MissingCapability, Root, Sample, Sampled
from .prompts import Message, PromptContext, prompt
from .registry import Tool, ToolRegistry, registry, tool
from .resources import Contents, ResourceContext, ResourceNotFound, resource

__all__ = [
    "Answer",
    "CheckpointTooLarge",
    "Contents",
    "Elicit",
    "ElicitUrl",
    "InputRefused",
    "ListRoots",
    "Message",
    "MissingCapability",
    "PromptContext",
    "ProtocolError",
    "ResourceContext",
    "ResourceNotFound",
    "Root",
    "Sample",
    "Sampled",
    "Tool",
    "ToolContext",
    "ToolError",
    "ToolRegistry",
    "content",
    "prompt",
    "registry",
    "resource",
    "tool",
]
