"""Every kind of input a tool can ask the client for, and what the client declared it can give.

A question is one of: form elicitation (``Elicit``, in ``context.py``), URL elicitation
(``ElicitUrl``), sampling (``Sample``) or roots (``ListRoots``). Each knows its wire
request, the client capability it needs, and how to read the client's answer; an answer
that does not have the right shape is the client's protocol error (-32602), never a crash
of the tool.

The client's capabilities come from where its era puts them (2026-07-28: the request's
``_meta``; 2025-11-25: the ``initialize`` of its session) and travel with a task, so a
tool never sends what the client did not declare: asking for it raises
``MissingCapability`` (-32021 with ``data.requiredCapabilities``).
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import Any

from ..codes import INVALID_PARAMS, MISSING_REQUIRED_CLIENT_CAPABILITY
from .errors import ProtocolError, ToolError

ELICIT = "elicitation/create"
SAMPLE = "sampling/createMessage"
ROOTS = "roots/list"

ELICIT_ACTIONS = frozenset({"accept", "decline", "cancel"})


class MissingCapability(ProtocolError):
    """The tool needs something the client did not declare: -32021, and nothing is sent."""

    def __init__(self, required: dict[str, Any], what: str) -> None:
        # What works instead is a client that declares it: nothing else can answer the question.
        super().__init__(
            MISSING_REQUIRED_CLIENT_CAPABILITY,
            f"Missing required client capability: {what}. The tool asks its user this way, and this "
            f"client did not declare it can answer ({what}); a client that declares it can call the tool.",
            {"requiredCapabilities": required},
        )
        self.required = required


class InputRefused(ToolError):
    """The client answered a sampling or roots request with an error (its user said no)."""


def invalid_answer(key: str, expected: str) -> ProtocolError:
    return ProtocolError(INVALID_PARAMS, f"Invalid params: inputResponses.{key}: expected {expected}")


@dataclass(frozen=True)
class ClientCapabilities:
    """What the client declared. ``declared=None``: nothing is known (a task stored before
    capabilities were recorded), and every kind is allowed, as before."""

    declared: dict[str, Any] | None

    def _section(self, name: str) -> dict[str, Any] | None:
        assert self.declared is not None
        value = self.declared.get(name)
        return value if isinstance(value, dict) else None

    def elicitation(self, mode: str) -> bool:
        if self.declared is None:
            return True
        section = self._section("elicitation")
        if section is None:
            return False
        if mode == "form":
            # An empty elicitation object means form mode (the 2025-06-18 shape).
            return "form" in section or "url" not in section
        return mode in section

    @property
    def sampling(self) -> bool:
        return self.declared is None or self._section("sampling") is not None

    @property
    def roots(self) -> bool:
        return self.declared is None or self._section("roots") is not None

    def allows(self, request: dict[str, Any]) -> bool:
        method = request.get("method")
        if method == ELICIT:
            return self.elicitation(str((request.get("params") or {}).get("mode", "form")))
        if method == SAMPLE:
            return self.sampling
        if method == ROOTS:
            return self.roots
        return False


UNKNOWN = ClientCapabilities(None)


def _error_of(raw: Any) -> dict[str, Any] | None:
    """A client's JSON-RPC error stored as its answer (2025: it POSTed an error response)."""
    if isinstance(raw, dict) and "error" in raw and "action" not in raw and "role" not in raw:
        error = raw["error"]
        return error if isinstance(error, dict) else {"message": str(error)}
    return None


@dataclass(frozen=True)
class ElicitUrl:
    """A URL-mode elicitation: the client opens ``url`` for the user (a sign-in, a payment,
    anything that must not pass through the client). The answer says only whether the user
    went ahead; whatever happens at the URL reaches the server out of band."""

    message: str
    url: str
    elicitation_id: str = field(default_factory=lambda: uuid.uuid4().hex)

    def to_request(self) -> dict[str, Any]:
        return {
            "method": ELICIT,
            "params": {
                "mode": "url",
                "message": self.message,
                "url": self.url,
                "elicitationId": self.elicitation_id,
            },
        }


@dataclass(frozen=True)
class Sampled:
    """The client's answer to ``Sample``: the model's message."""

    role: str
    content: Any
    model: str
    stop_reason: str | None = None

    @property
    def text(self) -> str:
        """The text of the answer (text blocks joined; empty if it has none)."""
        blocks = self.content if isinstance(self.content, list) else [self.content]
        return "".join(b.get("text", "") for b in blocks if isinstance(b, dict) and b.get("type") == "text")


@dataclass(frozen=True)
class Sample:
    """A ``sampling/createMessage`` request: ask the client's LLM. ``messages`` are
    SamplingMessages; ``Sample.prompt("…")`` builds the one-user-message case."""

    messages: list[dict[str, Any]]
    max_tokens: int = 1000
    system_prompt: str | None = None
    temperature: float | None = None
    stop_sequences: list[str] | None = None
    model_preferences: dict[str, Any] | None = None

    @classmethod
    def prompt(cls, text: str, **options: Any) -> Sample:
        return cls(messages=[{"role": "user", "content": {"type": "text", "text": text}}], **options)

    def to_request(self) -> dict[str, Any]:
        params: dict[str, Any] = {"messages": self.messages, "maxTokens": self.max_tokens}
        if self.system_prompt is not None:
            params["systemPrompt"] = self.system_prompt
        if self.temperature is not None:
            params["temperature"] = self.temperature
        if self.stop_sequences:
            params["stopSequences"] = list(self.stop_sequences)
        if self.model_preferences:
            params["modelPreferences"] = self.model_preferences
        return {"method": SAMPLE, "params": params}

    @staticmethod
    def parse(key: str, raw: Any) -> Sampled:
        error = _error_of(raw)
        if error is not None:
            raise InputRefused(f"The client refused to sample: {error.get('message', 'no reason given')}")
        if not isinstance(raw, dict):
            raise invalid_answer(key, "a sampling result")
        role, content, model = raw.get("role"), raw.get("content"), raw.get("model")
        if (
            role not in ("user", "assistant")
            or not isinstance(content, (dict, list))
            or not isinstance(model, str)
        ):
            raise invalid_answer(key, "a sampling result (role, content, model)")
        stop = raw.get("stopReason")
        return Sampled(
            role=role, content=content, model=model, stop_reason=stop if isinstance(stop, str) else None
        )


@dataclass(frozen=True)
class Root:
    """One of the client's roots."""

    uri: str
    name: str | None = None


@dataclass(frozen=True)
class ListRoots:
    """A ``roots/list`` request: the directories or files the client lets the server see."""

    def to_request(self) -> dict[str, Any]:
        return {"method": ROOTS, "params": {}}

    @staticmethod
    def parse(key: str, raw: Any) -> list[Root]:
        error = _error_of(raw)
        if error is not None:
            raise InputRefused(
                f"The client refused to list its roots: {error.get('message', 'no reason given')}"
            )
        roots = raw.get("roots") if isinstance(raw, dict) else None
        if not isinstance(roots, list):
            raise invalid_answer(key, "a roots result")
        out: list[Root] = []
        for root in roots:
            if not isinstance(root, dict) or not isinstance(root.get("uri"), str):
                raise invalid_answer(key, "roots with a uri each")
            name = root.get("name")
            out.append(Root(uri=root["uri"], name=name if isinstance(name, str) else None))
        return out


def required_capability(request: dict[str, Any]) -> tuple[dict[str, Any], str]:
    """The ``requiredCapabilities`` object (and a word for it) a request needs."""
    method = request.get("method")
    if method == SAMPLE:
        return {"sampling": {}}, "sampling"
    if method == ROOTS:
        return {"roots": {}}, "roots"
    mode = str((request.get("params") or {}).get("mode", "form"))
    return {"elicitation": {mode: {}}}, f"elicitation ({mode} mode)"


def check_elicit_answer(key: str, raw: Any) -> tuple[str, dict[str, Any]]:
    """``(action, content)`` of an elicitation answer, or -32602."""
    if _error_of(raw) is not None:
        # The client answered with an error: the user did not answer.
        return "cancel", {}
    if not isinstance(raw, dict) or raw.get("action") not in ELICIT_ACTIONS:
        raise invalid_answer(key, "an elicitation result with action accept, decline or cancel")
    content = raw.get("content", {})
    if content is None:
        content = {}
    if not isinstance(content, dict):
        raise invalid_answer(key, "an elicitation result whose content is an object")
    return str(raw["action"]), content


_KEPT = {"elicitation": ("form", "url"), "sampling": ("context", "tools"), "roots": ()}


def declared_view(capabilities: Any) -> dict[str, Any]:
    """The part of a client's capabilities that questions depend on, small enough to keep
    with a session or a task whatever else the client declared."""
    if not isinstance(capabilities, dict):
        return {}
    out: dict[str, Any] = {}
    for name, keys in _KEPT.items():
        section = capabilities.get(name)
        if isinstance(section, dict):
            out[name] = {k: {} for k in keys if k in section}
    return out
