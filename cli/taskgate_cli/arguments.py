"""``key=value`` command-line arguments typed by a tool's ``inputSchema``."""

from __future__ import annotations

import json
from typing import Any

from .schema import Invalid, coerce, describe


class UsageError(Exception):
    """Bad command-line input (exit code 2)."""


def parse_arguments(pairs: list[str], input_schema: dict[str, Any]) -> dict[str, Any]:
    """``key=value`` (typed by the schema: number, integer, boolean, string, JSON for
    objects and arrays) and ``key:=json`` (a raw JSON value, whatever the schema says)."""
    properties: dict[str, Any] = input_schema.get("properties") or {}
    closed = input_schema.get("additionalProperties") is False
    out: dict[str, Any] = {}
    for pair in pairs:
        key, value = _argument(pair, properties, closed)
        if key in out:
            raise UsageError(f"argument {key} given twice")
        out[key] = value
    missing = [name for name in input_schema.get("required") or [] if name not in out]
    if missing:
        details = ", ".join(
            f"{name} ({describe(properties.get(name) or {})})" for name in missing if isinstance(name, str)
        )
        raise UsageError(f"missing required argument(s): {details}")
    return out


def _argument(pair: str, properties: dict[str, Any], closed: bool) -> tuple[str, Any]:
    """One ``key=value`` or ``key:=json``, typed."""
    raw_json = ":=" in pair and pair.index(":=") < pair.index("=")
    key, _, text = pair.partition(":=" if raw_json else "=")
    if not key or (not raw_json and "=" not in pair):
        raise UsageError(f"expected key=value (or key:=json), got {pair!r}")
    prop = properties.get(key)
    if prop is None and closed:
        known = ", ".join(properties) or "none"
        raise UsageError(f"unknown argument {key!r} (this tool takes: {known})")
    if raw_json:
        try:
            return key, json.loads(text)
        except ValueError:
            raise UsageError(f"{key}: not valid JSON: {text!r}") from None
    if not isinstance(prop, dict):
        return key, text  # not in the schema: sent as a string (use key:=json for other types)
    try:
        return key, coerce(text, prop)
    except Invalid as why:
        raise UsageError(f"{key}: {why} ({describe(prop)}), got {text!r}") from None
