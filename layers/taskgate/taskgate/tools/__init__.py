"""What a tool author sees: the ``tool``, ``resource`` and ``prompt`` decorators, the
contexts and result helpers."""

from .context import Answer, Elicit, ProtocolError, ToolContext, ToolError
from .prompts import Message, PromptContext, prompt
from .registry import Tool, ToolRegistry, registry, tool
from .resources import Contents, ResourceContext, ResourceNotFound, resource

__all__ = [
    "Answer",
    "Contents",
    "Elicit",
    "Message",
    "PromptContext",
    "ProtocolError",
    "ResourceContext",
    "ResourceNotFound",
    "Tool",
    "ToolContext",
    "ToolError",
    "ToolRegistry",
    "prompt",
    "registry",
    "resource",
    "tool",
]
