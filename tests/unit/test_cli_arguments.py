"""taskgate_cli.arguments: ``key=value`` command-line arguments typed by a tool's inputSchema."""

from __future__ import annotations

from typing import Any

import pytest
from taskgate_cli.arguments import UsageError, parse_arguments

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "seconds": {"type": "integer", "minimum": 0, "maximum": 60},
        "label": {"type": "string"},
        "dry_run": {"type": "boolean"},
        "tags": {"type": "array", "items": {"type": "string"}},
        "options": {"type": "object"},
        "level": {"enum": ["low", "high"]},
    },
    "required": ["seconds"],
}


def test_values_are_typed_by_the_schema() -> None:
    got = parse_arguments(
        ["seconds=5", "label=demo", "dry_run=yes", "tags=a,b", 'options={"x": 1}', "level=2"], SCHEMA
    )
    assert got == {
        "seconds": 5,
        "label": "demo",
        "dry_run": True,
        "tags": ["a", "b"],
        "options": {"x": 1},
        "level": "high",
    }


def test_raw_json_with_colon_equals_bypasses_the_schema() -> None:
    assert parse_arguments(["seconds:=5", 'label:="5"', "options:=[1]"], SCHEMA) == {
        "seconds": 5,
        "label": "5",
        "options": [1],
    }


def test_only_the_first_equals_sign_splits() -> None:
    assert parse_arguments(["seconds=1", "label=a=b", "other=x:=y"], SCHEMA) == {
        "seconds": 1,
        "label": "a=b",
        "other": "x:=y",
    }


def test_an_argument_the_schema_does_not_name_is_a_string() -> None:
    assert parse_arguments(["seconds=1", "extra=42"], SCHEMA)["extra"] == "42"


def test_no_schema_at_all_takes_strings() -> None:
    assert parse_arguments(["a=1", "b:=2"], {}) == {"a": "1", "b": 2}


@pytest.mark.parametrize(
    ("pairs", "message"),
    [
        (["seconds"], "expected key=value (or key:=json), got 'seconds'"),
        (["=5"], "expected key=value"),
        ([":=5"], "expected key=value"),
        (["seconds=1", "seconds=2"], "argument seconds given twice"),
        (["seconds:=nope"], "seconds: not valid JSON: 'nope'"),
        (["seconds=soon"], "seconds: expected a whole number (integer 0..60), got 'soon'"),
        (["seconds=61"], "seconds: must be at most 60 (integer 0..60), got '61'"),
        (["level=medium"], "level: choose one of low, high (one of low|high), got 'medium'"),
        ([], "missing required argument(s): seconds (integer 0..60)"),
    ],
)
def test_bad_input_is_a_usage_error_that_says_why(pairs: list[str], message: str) -> None:
    with pytest.raises(UsageError) as caught:
        parse_arguments(pairs, SCHEMA)
    assert message in str(caught.value)


def test_a_closed_schema_refuses_unknown_arguments_and_names_the_known_ones() -> None:
    closed = {**SCHEMA, "additionalProperties": False}
    with pytest.raises(UsageError, match="unknown argument 'extra'") as caught:
        parse_arguments(["seconds=1", "extra=1"], closed)
    assert "seconds, label, dry_run, tags, options, level" in str(caught.value)
    with pytest.raises(UsageError, match=r"this tool takes: none"):
        parse_arguments(["x=1"], {"additionalProperties": False})


def test_every_missing_required_argument_is_listed() -> None:
    schema = {"properties": {"a": {"type": "integer"}}, "required": ["a", "b"]}
    with pytest.raises(UsageError, match=r"missing required argument\(s\): a \(integer\), b \(json\)"):
        parse_arguments([], schema)
