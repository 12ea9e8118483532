"""Eight tool signatures as Python MCP authors write them (issue 31, item 2): defaults,
``Optional``, ``Literal``, ``list[str]``, ``Annotated[…, Field(description=…)]``, a nested
model, a keyword-only context and an enum. Their ``inputSchema`` must be what FastMCP 4.2.3
makes of the same functions, titles aside (recorded in fastmcp_schemas.json by
tests/e2e/test_plain_parameters.py, which runs FastMCP itself).

``Context`` is whatever the reader sets before reading the hints: ``taskgate.tools.ToolContext``
here, ``fastmcp.Context`` in FastMCP's venv. Each function returns what it was called with.
"""

from __future__ import annotations

import enum
import json
from typing import Annotated, Any, Literal, Optional

from pydantic import BaseModel, Field

Context: Any = None  # set by the reader


class Color(enum.Enum):
    RED = "red"
    GREEN = "green"


class Address(BaseModel):
    street: str
    city: str = "Paris"


def _said(**arguments: Any) -> str:
    return json.dumps(
        arguments, sort_keys=True, default=lambda v: v.value if isinstance(v, enum.Enum) else v.model_dump()
    )


def defaults(path: str, ctx: Context, include_tests: bool = False, depth: int = 2) -> str:
    return _said(path=path, include_tests=include_tests, depth=depth)


def optional(name: str, nickname: Optional[str] = None, ctx: Context = None) -> str:  # noqa: UP045 - as written
    return _said(name=name, nickname=nickname)


def literal(mode: Literal["fast", "slow"], ctx: Context) -> str:
    return _said(mode=mode)


def listed(tags: list[str], ctx: Context, limit: int | None = None) -> str:
    return _said(tags=tags, limit=limit)


def annotated(
    query: Annotated[str, Field(description="What to look for")],
    ctx: Context,
    top: Annotated[int, Field(ge=1, le=50, description="How many")] = 10,
) -> str:
    return _said(query=query, top=top)


def nested(name: str, address: Address, ctx: Context) -> str:
    return _said(name=name, address=address)


def keyword_ctx(city: str, days: int = 3, *, ctx: Context) -> str:
    return _said(city=city, days=days)


def enumerated(color: Color, ctx: Context, shades: list[Color] = []) -> str:  # noqa: B006 - as written
    return _said(color=color, shades=shades)


SIGNATURES = (defaults, optional, literal, listed, annotated, nested, keyword_ctx, enumerated)


def without_titles(schema: Any) -> Any:
    """A JSON Schema without its ``title`` keywords (a property named "title" stays)."""
    if isinstance(schema, list):
        return [without_titles(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    return {
        key: (
            {name: without_titles(s) for name, s in value.items()}
            if key == "properties"
            else without_titles(value)
        )
        for key, value in schema.items()
        if not (key == "title" and isinstance(value, str))
    }
