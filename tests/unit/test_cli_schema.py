"""taskgate_cli.schema: what a person types, turned into values a JSON Schema accepts."""

from __future__ import annotations

import re
from typing import Any

import pytest
from taskgate_cli.schema import Invalid, check, choices, coerce, describe, types_of


@pytest.mark.parametrize(
    ("schema", "expected"),
    [
        ({"type": "string"}, ["string"]),
        ({"type": ["string", "null", "integer"]}, ["null", "integer", "string"]),
        ({"anyOf": [{"type": "number"}, {"type": "boolean"}]}, ["boolean", "number"]),
        ({"oneOf": [{"const": 1}, {"const": "a"}]}, ["integer", "string"]),
        ({"enum": [1.5, None]}, ["null", "number"]),
        ({"const": True}, ["boolean"]),
        ({"type": ["integer", "integer"]}, ["integer"]),
        ({}, []),
    ],
)
def test_types_of_lists_the_allowed_types_in_the_order_to_try_them(
    schema: dict[str, Any], expected: list[str]
) -> None:
    assert types_of(schema) == expected


def test_choices_reads_enums_legacy_names_and_titled_consts() -> None:
    assert choices({"enum": ["a", "b"]}) == [("a", "a"), ("b", "b")]
    assert choices({"enum": ["a", "b"], "enumNames": ["Alpha", "Beta"]}) == [("a", "Alpha"), ("b", "Beta")]
    # enumNames of the wrong length are ignored rather than mismatched
    assert choices({"enum": ["a", "b"], "enumNames": ["Alpha"]}) == [("a", "a"), ("b", "b")]
    titled = {"oneOf": [{"const": "lo", "title": "Low"}, {"const": "hi"}]}
    assert choices(titled) == [("lo", "Low"), ("hi", "hi")]
    assert choices({"anyOf": [{"const": 1, "title": "one"}]}) == [(1, "one")]
    assert choices({"anyOf": [{"type": "string"}, {"const": 1}]}) == []
    assert choices({"type": "string"}) == []


@pytest.mark.parametrize(
    ("schema", "label"),
    [
        ({"type": "string"}, "string"),
        ({"type": "integer", "minimum": 1, "maximum": 10}, "integer 1..10"),
        ({"type": "number", "minimum": 0.5}, "number 0.5.."),
        ({"type": "number", "maximum": 2}, "number ..2"),
        ({"enum": ["a", "b"]}, "one of a|b"),
        ({"type": "array", "items": {"enum": ["x", "y"]}}, "any of x|y"),
        ({"type": "string", "format": "email"}, "string (email)"),
        ({"type": ["string", "null"]}, "null|string"),
        ({}, "json"),
    ],
)
def test_describe_gives_a_short_type_label(schema: dict[str, Any], label: str) -> None:
    assert describe(schema) == label


@pytest.mark.parametrize(
    ("text", "schema", "value"),
    [
        ("3", {"type": "integer"}, 3),
        (" 3.0 ", {"type": "integer"}, 3),
        ("2.5", {"type": "number"}, 2.5),
        ("7", {"type": "number"}, 7),
        ("yes", {"type": "boolean"}, True),
        ("Off", {"type": "boolean"}, False),
        ("null", {"type": "null"}, None),
        ("hello", {"type": "string"}, "hello"),
        ("5", {"type": ["integer", "string"]}, 5),
        ("abc", {"type": ["integer", "string"]}, "abc"),
        ("None", {"type": ["null", "string"]}, None),
        ('{"a": 1}', {"type": "object"}, {"a": 1}),
        ("[1, 2]", {"type": "array"}, [1, 2]),
        ("1, 2,3", {"type": "array", "items": {"type": "integer"}}, [1, 2, 3]),
        ("[true]", {"type": "array", "items": {"type": "boolean"}}, [True]),
        ('{"x": 1}', {}, {"x": 1}),
        ("not json", {}, "not json"),
        ("b", {"enum": ["a", "b"]}, "b"),
        ("Beta", {"enum": ["a", "b"], "enumNames": ["Alpha", "Beta"]}, "b"),
        ("2", {"enum": ["a", "b"]}, "b"),
        ("low", {"oneOf": [{"const": "lo", "title": "Low"}]}, "lo"),
        ("x,2", {"type": "array", "items": {"enum": ["x", "y"]}}, ["x", "y"]),
        ("2026-01-31", {"type": "string", "format": "date"}, "2026-01-31"),
        ("2026-01-31T09:30:00Z", {"type": "string", "format": "date-time"}, "2026-01-31T09:30:00Z"),
        ("me@example.com", {"type": "string", "format": "email"}, "me@example.com"),
        ("https://example.com", {"type": "string", "format": "uri"}, "https://example.com"),
    ],
)
def test_coerce_turns_text_into_the_schemas_value(text: str, schema: dict[str, Any], value: Any) -> None:
    assert coerce(text, schema) == value
    assert type(coerce(text, schema)) is type(value)


@pytest.mark.parametrize(
    ("text", "schema", "reason"),
    [
        ("3.5", {"type": "integer"}, "expected a whole number"),
        ("three", {"type": "integer"}, "expected a whole number"),
        ("inf", {"type": "number"}, "expected a finite number"),
        ("x", {"type": "number"}, "expected a number"),
        ("maybe", {"type": "boolean"}, "answer yes or no"),
        ("nothing", {"type": "null"}, "expected null"),
        ("[1]", {"type": "object"}, "expected a JSON object"),
        ("{", {"type": "object"}, "expected JSON (object)"),
        ("c", {"enum": ["a", "b"]}, "choose one of a, b"),
        ("3", {"enum": ["a", "b"]}, "choose one of a, b"),
        ("0", {"type": "integer", "minimum": 1}, "must be at least 1"),
        ("11", {"type": "integer", "maximum": 10}, "must be at most 10"),
        ("ab", {"type": "string", "minLength": 3}, "must be at least 3 characters"),
        ("abcd", {"type": "string", "maxLength": 3}, "must be at most 3 characters"),
        ("abc", {"type": "string", "pattern": "^[0-9]+$"}, "must match ^[0-9]+$"),
        ("me", {"type": "string", "format": "email"}, "expected an email address"),
        ("example.com", {"type": "string", "format": "uri"}, "expected a URI"),
        ("31/01/2026", {"type": "string", "format": "date"}, "expected a date YYYY-MM-DD"),
        ("noon", {"type": "string", "format": "date-time"}, "expected a date and time"),
        ("x,z", {"type": "array", "items": {"enum": ["x", "y"]}}, "choose one of x, y"),
    ],
)
def test_coerce_explains_what_does_not_fit(text: str, schema: dict[str, Any], reason: str) -> None:
    with pytest.raises(Invalid, match=re.escape(reason)):
        coerce(text, schema)


def test_a_union_reports_the_first_types_reason() -> None:
    with pytest.raises(Invalid, match="answer yes or no"):
        coerce("maybe", {"type": ["boolean", "integer"]})


def test_a_pattern_python_cannot_read_is_left_to_the_server() -> None:
    assert coerce("abc", {"type": "string", "pattern": "(?<"}) == "abc"


def test_check_counts_array_items() -> None:
    schema = {"type": "array", "items": {"type": "integer"}, "minItems": 2, "maxItems": 3}
    check([1, 2], schema)
    with pytest.raises(Invalid, match="choose at least 2"):
        check([1], schema)
    with pytest.raises(Invalid, match="choose at most 3"):
        check([1, 2, 3, 4], schema)


def test_check_leaves_booleans_out_of_numeric_bounds() -> None:
    check(True, {"minimum": 5})
