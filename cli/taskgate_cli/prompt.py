"""Terminal prompts for what a task asks (``elicitation/create``).

Rules (also in docs/reference/cli.md):

* Each property of ``requestedSchema`` is asked in turn and checked against its
  schema (type, enum, bounds, length, format); a wrong answer is explained and
  asked again.
* An empty answer takes the property's ``default``; with no default it skips an
  optional property and is refused for a required one (booleans included: an
  empty answer is never taken as "no").
* ``:decline`` at any field declines the whole request (``action: decline``);
  end of input (Ctrl-D, or a closed stdin) declines too. Ctrl-C cancels the task.
"""

from __future__ import annotations

from typing import Any, TextIO

from .display import Symbols
from .protocol import Question
from .schema import Invalid, choices, coerce, types_of

DECLINE = ":decline"


class Declined(Exception):
    """The person declined the request (or input ended)."""


class Prompter:
    def __init__(self, out: TextIO, inp: TextIO, sym: Symbols) -> None:
        self.out = out
        self.inp = inp
        self.sym = sym
        self._hinted = False
        self._echo = not _isatty(inp)
        self.mid_line = False  # a prompt is shown and its line not yet ended

    def end_line(self) -> None:
        """After Ctrl-C at a prompt: start the next output on a fresh line."""
        if self.mid_line:
            self.out.write("\n")
            self.out.flush()
            self.mid_line = False

    def _read(self, prompt: str) -> str:
        self.out.write(prompt)
        self.out.flush()
        self.mid_line = True
        line = self.inp.readline()
        self.mid_line = False
        if not line:
            self.out.write("\n")
            raise Declined("end of input")
        text = line.rstrip("\r\n")
        if self._echo:
            # Answers piped in: show them, so that the output reads like a session.
            self.out.write(text + "\n")
        if text.strip() == DECLINE:
            raise Declined(DECLINE)
        return text

    def _say(self, text: str) -> None:
        self.out.write(text + "\n")
        self.out.flush()

    def ask(self, question: Question) -> dict[str, Any] | None:
        """The response to send (``{"action": …, "content": …}``), or None when this
        is not something a terminal can answer."""
        if question.method != "elicitation/create":
            self._say(f"{self.sym.bad} the server asks for {question.method}, which taskgate cannot answer")
            return None
        params = question.params
        self._say(f"{self.sym.ask} {params.get('message') or 'The task needs input.'}")
        if not self._hinted:
            self._hinted = True
            self._say(f"  ({DECLINE} declines the request, Ctrl-C cancels the task)")
        try:
            if params.get("mode") == "url":
                url = params.get("url", "")
                self._say(f"  open: {url}")
                self._read("  press Enter when done: ")
                return {"action": "accept"}
            content = self._form(params.get("requestedSchema") or {})
        except Declined as why:
            self._say(f"  declined{' (end of input)' if str(why) == 'end of input' else ''}")
            return {"action": "decline"}
        return {"action": "accept", "content": content}

    def _form(self, schema: dict[str, Any]) -> dict[str, Any]:
        properties = schema.get("properties") or {}
        required = set(schema.get("required") or [])
        content: dict[str, Any] = {}
        for name, prop in properties.items():
            if not isinstance(prop, dict):
                continue
            value = self._field(name, prop, name in required)
            if value is not _SKIP:
                content[name] = value
        return content

    def _field(self, name: str, prop: dict[str, Any], required: bool) -> Any:
        options = choices(prop)
        items = prop.get("items")
        if not options and isinstance(items, dict):
            options = choices(items)
        is_bool = types_of(prop) == ["boolean"]
        hints = ["yes/no" if is_bool else _kind(prop, bool(options))]
        if required:
            hints.append("required")
        if "default" in prop:
            hints.append(f"default {_show(prop['default'])}")
        label = str(prop.get("title") or name)
        description = prop.get("description")
        head = f"  {label} ({', '.join(hints)})" + (f" {self.sym.dash} {description}" if description else "")
        if options:
            self._say(head)
            for number, (value, text) in enumerate(options, 1):
                self._say(f"    {number}) {text}" + (f" [{value}]" if str(value) != text else ""))
            multi = "comma-separated " if prop.get("type") == "array" else ""
            prompt = f"  {label} ({multi}1-{len(options)}): "
        else:
            prompt = head + ": "
        while True:
            text = self._read(prompt)
            if not text.strip():
                if "default" in prop:
                    return prop["default"]
                if not required:
                    return _SKIP
                self._say(f"  ! {label} is required")
                continue
            try:
                return coerce(text, prop)
            except Invalid as why:
                self._say(f"  ! {why}")


_SKIP = object()


def _isatty(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def _kind(prop: dict[str, Any], enumerated: bool) -> str:
    if enumerated:
        return "choose"
    kinds = [k for k in types_of(prop) if k != "null"] or ["text"]
    label = "|".join("text" if k == "string" else k for k in kinds)
    low, high = prop.get("minimum"), prop.get("maximum")
    if low is not None or high is not None:
        label += f" {'' if low is None else low}..{'' if high is None else high}"
    if isinstance(prop.get("format"), str):
        label += f", {prop['format']}"
    return label


def _show(value: Any) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    return str(value)
