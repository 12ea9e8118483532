"""Turning what a person types into JSON values a JSON Schema accepts.

Used for ``call TOOL key=value`` (against the tool's ``inputSchema``) and for
answers to elicitations (against ``requestedSchema``). It covers the flat
shapes both use: string (with enum, length, format), number, integer, boolean,
null, arrays of enum values (multi-select), and JSON for objects and arrays.
Anything the schema does not describe well enough is left to the server.
"""

from __future__ import annotations

import datetime
import json
import math
import re
from typing import Any

TRUE_WORDS = {"y", "yes", "true", "t", "1", "on"}
FALSE_WORDS = {"n", "no", "false", "f", "0", "off"}
_EMAIL = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$")
_URI = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:\S+$")


class Invalid(ValueError):
    """A value that does not fit the schema; the message is for a person."""


def types_of(schema: dict[str, Any]) -> list[str]:
    """The JSON types a (sub)schema allows, in the order to try them."""
    found: list[str] = []
    declared = schema.get("type")
    if isinstance(declared, str):
        found.append(declared)
    elif isinstance(declared, list):
        found += [t for t in declared if isinstance(t, str)]
    for key in ("anyOf", "oneOf"):
        for sub in schema.get(key) or []:
            if isinstance(sub, dict):
                found += types_of(sub)
                if "const" in sub and not sub.get("type"):
                    found.append(_json_type(sub["const"]))
    if not found and isinstance(schema.get("enum"), list):
        found += [_json_type(v) for v in schema["enum"]]
    if not found and "const" in schema:
        found.append(_json_type(schema["const"]))
    order = ["null", "boolean", "integer", "number", "array", "object", "string"]
    unique = list(dict.fromkeys(found))
    return sorted(unique, key=lambda t: order.index(t) if t in order else len(order))


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return "string"


def choices(schema: dict[str, Any]) -> list[tuple[Any, str]]:
    """``(value, label)`` pairs of an enumerated schema: ``enum`` (with the legacy
    ``enumNames``) or ``oneOf``/``anyOf`` of ``{"const", "title"}``; [] if not one."""
    if isinstance(schema.get("enum"), list):
        names = schema.get("enumNames")
        values = schema["enum"]
        if isinstance(names, list) and len(names) == len(values):
            return [(v, str(n)) for v, n in zip(values, names, strict=True)]
        return [(v, str(v)) for v in values]
    for key in ("oneOf", "anyOf"):
        options = schema.get(key)
        if (
            isinstance(options, list)
            and options
            and all(isinstance(o, dict) and "const" in o for o in options)
        ):
            return [(o["const"], str(o.get("title", o["const"]))) for o in options]
    return []


def describe(schema: dict[str, Any]) -> str:
    """A short type label: ``string``, ``integer 1..10``, ``one of a|b``."""
    options = choices(schema)
    if options:
        return "one of " + "|".join(str(v) for v, _ in options)
    items = schema.get("items")
    if schema.get("type") == "array" and isinstance(items, dict) and choices(items):
        return "any of " + "|".join(str(v) for v, _ in choices(items))
    kinds = types_of(schema)
    label = "|".join(kinds) if kinds else "json"
    low, high = schema.get("minimum"), schema.get("maximum")
    if low is not None or high is not None:
        label += f" {'' if low is None else _num(low)}..{'' if high is None else _num(high)}"
    if isinstance(schema.get("format"), str):
        label += f" ({schema['format']})"
    return label


def _num(value: Any) -> str:
    return f"{value:g}" if isinstance(value, float) else str(value)


def _parse_bool(text: str) -> bool:
    word = text.strip().lower()
    if word in TRUE_WORDS:
        return True
    if word in FALSE_WORDS:
        return False
    raise Invalid("answer yes or no (y/n)")


def _parse_int(text: str) -> int:
    try:
        return int(text.strip())
    except ValueError:
        try:
            number = float(text.strip())
        except ValueError:
            raise Invalid("expected a whole number") from None
        if math.isfinite(number) and number.is_integer():
            return int(number)
        raise Invalid("expected a whole number") from None


def _parse_number(text: str) -> int | float:
    stripped = text.strip()
    try:
        return int(stripped)
    except ValueError:
        pass
    try:
        number = float(stripped)
    except ValueError:
        raise Invalid("expected a number") from None
    if not math.isfinite(number):
        raise Invalid("expected a finite number")
    return number


def _parse_json(text: str, kind: str) -> Any:
    try:
        value = json.loads(text)
    except ValueError:
        raise Invalid(f"expected JSON ({kind})") from None
    if _json_type(value) != kind:
        raise Invalid(f"expected a JSON {kind}")
    return value


def _pick_choice(text: str, options: list[tuple[Any, str]]) -> Any:
    stripped = text.strip()
    for value, label in options:
        if stripped == str(value) or stripped.lower() == label.lower():
            return value
    if stripped.isdigit() and 1 <= int(stripped) <= len(options):
        return options[int(stripped) - 1][0]
    raise Invalid("choose one of " + ", ".join(str(v) for v, _ in options))


def _convert(text: str, kind: str, schema: dict[str, Any]) -> Any:
    if kind == "null":
        if text.strip().lower() in {"null", "none"}:
            return None
        raise Invalid("expected null")
    if kind == "boolean":
        return _parse_bool(text)
    if kind == "integer":
        return _parse_int(text)
    if kind == "number":
        return _parse_number(text)
    if kind == "array":
        items = schema.get("items")
        if not text.strip().startswith("[") and isinstance(items, dict):
            # Multi-select / simple lists: comma-separated items of the item schema.
            return [coerce(part, items) for part in text.split(",") if part.strip()]
        return _parse_json(text, "array")
    if kind == "object":
        return _parse_json(text, "object")
    return text


def check(value: Any, schema: dict[str, Any]) -> None:
    """The constraints a person can get wrong: enum, bounds, length, pattern, format."""
    options = choices(schema)
    if options and value not in [v for v, _ in options]:
        raise Invalid("choose one of " + ", ".join(str(v) for v, _ in options))
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        _check_number(value, schema)
    if isinstance(value, str):
        _check_text(value, schema)
    if isinstance(value, list):
        _check_list(value, schema)


def _check_number(value: float, schema: dict[str, Any]) -> None:
    low, high = schema.get("minimum"), schema.get("maximum")
    if isinstance(low, (int, float)) and value < low:
        raise Invalid(f"must be at least {_num(low)}")
    if isinstance(high, (int, float)) and value > high:
        raise Invalid(f"must be at most {_num(high)}")


def _check_text(value: str, schema: dict[str, Any]) -> None:
    min_len, max_len = schema.get("minLength"), schema.get("maxLength")
    if isinstance(min_len, int) and len(value) < min_len:
        raise Invalid(f"must be at least {min_len} characters")
    if isinstance(max_len, int) and len(value) > max_len:
        raise Invalid(f"must be at most {max_len} characters")
    pattern = schema.get("pattern")
    if isinstance(pattern, str):
        try:
            matches = re.search(pattern, value) is not None
        except re.error:
            matches = True  # a pattern Python cannot read: the server decides
        if not matches:
            raise Invalid(f"must match {pattern}")
    _check_format(value, schema.get("format"))


def _check_list(value: list[Any], schema: dict[str, Any]) -> None:
    items = schema.get("items")
    if isinstance(items, dict):
        for item in value:
            check(item, items)
    min_items, max_items = schema.get("minItems"), schema.get("maxItems")
    if isinstance(min_items, int) and len(value) < min_items:
        raise Invalid(f"choose at least {min_items}")
    if isinstance(max_items, int) and len(value) > max_items:
        raise Invalid(f"choose at most {max_items}")


def _check_format(value: str, fmt: Any) -> None:
    if fmt == "email" and not _EMAIL.match(value):
        raise Invalid("expected an email address")
    if fmt == "uri" and not _URI.match(value):
        raise Invalid("expected a URI such as https://example.com")
    if fmt == "date":
        try:
            datetime.date.fromisoformat(value)
        except ValueError:
            raise Invalid("expected a date YYYY-MM-DD") from None
    if fmt == "date-time":
        try:
            datetime.datetime.fromisoformat(value)
        except ValueError:
            raise Invalid("expected a date and time such as 2026-01-31T09:30:00Z") from None


def coerce(text: str, schema: dict[str, Any]) -> Any:
    """The JSON value for ``text`` under ``schema``; raises ``Invalid`` with a reason."""
    options = choices(schema)
    if options:
        value = _pick_choice(text, options)
        check(value, schema)
        return value
    kinds = types_of(schema)
    if not kinds:
        # No type given (or only a $ref): JSON if it parses, else the text itself.
        try:
            return json.loads(text)
        except ValueError:
            return text
    first: Invalid | None = None
    for kind in kinds:
        try:
            value = _convert(text, kind, schema)
        except Invalid as exc:
            first = first or exc
            continue
        check(value, schema)
        return value
    assert first is not None
    raise first
