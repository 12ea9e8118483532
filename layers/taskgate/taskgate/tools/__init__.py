"""What a tool author sees: the ``tool``, ``resource`` and ``prompt`` decorators, the
contexts, questions of every kind, and result helpers.

The resource and prompt halves (and ``content``) load on first access: the protocol
code imports ``taskgate.tools.context`` through this package at every cold start, and
a request that reads a task never needs them. ``from taskgate.tools import prompt``
works as before.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from .context import Answer, CheckpointTooLarge, Elicit, ProtocolError, ToolContext, ToolError
from .input import ElicitUrl, InputRefused, ListRoots, MissingCapability, Root, Sample, Sampled
from .needs import secret
from .registry import Tool, ToolRegistry, registry, tool

if TYPE_CHECKING:
    from . import content
    from .prompts import Message, PromptContext, prompt
    from .resources import Contents, ResourceContext, ResourceNotFound, resource

_LATER = {
    "content": ("content", None),
    "Message": ("prompts", "Message"),
    "PromptContext": ("prompts", "PromptContext"),
    "prompt": ("prompts", "prompt"),
    "Contents": ("resources", "Contents"),
    "ResourceContext": ("resources", "ResourceContext"),
    "ResourceNotFound": ("resources", "ResourceNotFound"),
    "resource": ("resources", "resource"),
}


def __getattr__(name: str) -> Any:
    if name not in _LATER:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    module_name, attr = _LATER[name]
    module = importlib.import_module(f".{module_name}", __name__)
    return module if attr is None else getattr(module, attr)


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
    "secret",
    "tool",
]
