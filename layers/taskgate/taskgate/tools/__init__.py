"""What a tool author sees: the ``tool`` decorator, ``ToolContext`` and result helpers."""

from .context import Answer, CheckpointTooLarge, Elicit, ProtocolError, ToolContext, ToolError
from .registry import Tool, ToolRegistry, registry, tool

__all__ = [
    "Answer",
    "CheckpointTooLarge",
    "Elicit",
    "ProtocolError",
    "Tool",
    "ToolContext",
    "ToolError",
    "ToolRegistry",
    "registry",
    "tool",
]
