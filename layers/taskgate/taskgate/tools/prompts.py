"""Prompts: functions that answer ``prompts/get`` with messages for the model.

    class ReviewArgs(BaseModel):
        language: Literal["python", "go"] = Field(description="Language of the code")
        code: str

    @prompt(description="Review a piece of code.")
    def code_review(args: ReviewArgs, ctx: PromptContext) -> list[Message]:
        return [Message.user(f"Review this {args.language} code:\\n{args.code}")]

Arguments arrive as strings (the protocol's only type) and are validated by the
model in lax mode, so ``year: int`` accepts ``"2025"``. A ``Literal``/``Enum`` field
completes by itself; ``complete={"arg": [...] or fn}`` adds choices for any other.
A prompt returns ``str`` (one user message), a ``Message`` or a list of them.
"""

from __future__ import annotations

import base64
import inspect
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel, ValidationError

from .awaiting import finish
from .catalog import CallerContext, Completer, split_signature
from .context import Answer, Elicit, InputNeeded

Role = Literal["user", "assistant"]


# -- content blocks (the wire shapes of ContentBlock) ------------------------------------


def text_block(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


def image_block(data: bytes | str, mime_type: str) -> dict[str, Any]:
    """``data``: raw bytes, or a string already in base64."""
    encoded = base64.b64encode(data).decode("ascii") if isinstance(data, bytes) else data
    return {"type": "image", "data": encoded, "mimeType": mime_type}


def audio_block(data: bytes | str, mime_type: str) -> dict[str, Any]:
    encoded = base64.b64encode(data).decode("ascii") if isinstance(data, bytes) else data
    return {"type": "audio", "data": encoded, "mimeType": mime_type}


def embedded_resource_block(
    uri: str, *, text: str | None = None, blob: bytes | None = None, mime_type: str | None = None
) -> dict[str, Any]:
    resource: dict[str, Any] = {"uri": uri}
    if mime_type:
        resource["mimeType"] = mime_type
    if blob is not None:
        resource["blob"] = base64.b64encode(blob).decode("ascii")
    else:
        resource["text"] = text or ""
    return {"type": "resource", "resource": resource}


def resource_link_block(
    uri: str, name: str, *, mime_type: str | None = None, description: str | None = None
) -> dict[str, Any]:
    out: dict[str, Any] = {"type": "resource_link", "uri": uri, "name": name}
    if mime_type:
        out["mimeType"] = mime_type
    if description:
        out["description"] = description
    return out


@dataclass(frozen=True)
class Message:
    """One ``PromptMessage``: a role and one content block (a ``str`` is text)."""

    role: Role
    content: str | dict[str, Any]

    @classmethod
    def user(cls, content: str | dict[str, Any]) -> Message:
        return cls("user", content)

    @classmethod
    def assistant(cls, content: str | dict[str, Any]) -> Message:
        return cls("assistant", content)

    def to_wire(self) -> dict[str, Any]:
        content = text_block(self.content) if isinstance(self.content, str) else dict(self.content)
        return {"role": self.role, "content": content}


class PromptArgumentsInvalid(Exception):
    def __init__(self, prompt: str, errors: list[dict[str, Any]]) -> None:
        super().__init__(f"Invalid arguments for prompt {prompt}")
        self.errors = errors


@dataclass(frozen=True)
class PromptContext(CallerContext):
    """What a prompt sees: the caller, their tasks, and (2026-07-28) a way to ask the
    user something before the messages exist (a multi-round-trip ``prompts/get``)."""

    answers: dict[str, Any] = field(default_factory=dict)

    def ask(self, key: str, question: Elicit) -> Answer:
        return self.ask_all({key: question})[key]

    def ask_all(self, questions: dict[str, Elicit]) -> dict[str, Answer]:
        missing = {k: q.to_request() for k, q in questions.items() if k not in self.answers}
        if missing:
            raise InputNeeded(missing)
        return {k: Answer.parse(self.answers[k]) for k in questions}


PromptFn = Callable[..., Any]


@dataclass(frozen=True)
class Prompt:
    """A prompt, as its decorator registered it."""

    name: str
    fn: PromptFn
    description: str = ""
    title: str | None = None
    arguments_model: type[BaseModel] | None = None
    complete: dict[str, Completer] = field(default_factory=dict)

    def arguments(self) -> list[dict[str, Any]]:
        if self.arguments_model is None:
            return []
        out = []
        for name, info in self.arguments_model.model_fields.items():
            wire = info.alias or name
            arg: dict[str, Any] = {"name": wire, "required": info.is_required()}
            if info.title:
                arg["title"] = info.title
            if info.description:
                arg["description"] = info.description
            out.append(arg)
        return out

    def argument_names(self) -> list[str]:
        return [a["name"] for a in self.arguments()]

    def describe(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name, "description": self.description}
        if self.title:
            out["title"] = self.title
        arguments = self.arguments()
        if arguments:
            out["arguments"] = arguments
        return out

    def get(self, arguments: dict[str, str], ctx: PromptContext) -> dict[str, Any]:
        """A ``GetPromptResult``; raises ``InputNeeded`` when it asks first."""
        args: list[Any] = []
        if self.arguments_model is not None:
            try:
                args.append(self.arguments_model.model_validate(arguments))
            except ValidationError as exc:
                errors = [{"path": list(e["loc"]), "message": e["msg"]} for e in exc.errors()]
                raise PromptArgumentsInvalid(self.name, errors) from exc
        value = finish(self.fn(*args, ctx))
        items = value if isinstance(value, list) else [value]
        messages = []
        for item in items:
            if isinstance(item, str):
                messages.append(Message.user(item).to_wire())
            elif isinstance(item, Message):
                messages.append(item.to_wire())
            elif isinstance(item, dict) and "role" in item and "content" in item:
                messages.append(dict(item))
            else:
                raise TypeError(f"prompt {self.name} returned {type(item).__name__}")
        result: dict[str, Any] = {"messages": messages}
        if self.description:
            result["description"] = self.description
        return result


class PromptRegistry:
    def __init__(self) -> None:
        self._prompts: dict[str, Prompt] = {}

    def add(self, p: Prompt) -> None:
        if p.name in self._prompts and self._prompts[p.name].fn is not p.fn:
            raise ValueError(f"prompt {p.name!r} is registered twice")
        self._prompts[p.name] = p

    def get(self, name: str) -> Prompt | None:
        return self._prompts.get(name)

    def __iter__(self) -> Iterator[Prompt]:
        return iter(list(self._prompts.values()))

    def __len__(self) -> int:
        return len(self._prompts)


registry = PromptRegistry()


def prompt(
    *,
    name: str | None = None,
    description: str | None = None,
    title: str | None = None,
    complete: dict[str, Completer] | None = None,
) -> Callable[[PromptFn], PromptFn]:
    """Register ``fn(ctx)`` or ``fn(args: Model, ctx)`` as a prompt; the model's fields
    are its arguments (their descriptions and whether they are required come from it)."""

    def decorate(fn: PromptFn) -> PromptFn:
        model = split_signature(fn, "prompt")
        p = Prompt(
            name=name or fn.__name__,
            fn=fn,
            description=description or inspect.getdoc(fn) or "",
            title=title,
            arguments_model=model,
            complete=dict(complete or {}),
        )
        unknown = set(p.complete) - set(p.argument_names())
        if unknown:
            raise TypeError(f"{fn.__name__}: completers for unknown arguments {sorted(unknown)}")
        registry.add(p)
        return fn

    return decorate
