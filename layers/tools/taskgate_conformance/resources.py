"""Fixture resources the MCP conformance suite reads by URI (its resources-* scenarios,
caching and sep-2164-resource-not-found). The first one listed must be readable: the
caching scenario reads whatever ``resources/list`` names first."""

from __future__ import annotations

import base64
import json
import time

from pydantic import BaseModel, Field

from taskgate.tools.resources import ResourceContext, resource

# A 1x1 red PNG, as the suite's reference server uses.
PNG_BASE64 = (
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="
)
# The watched resource changes this often, so a subscriber has something to hear about.
WATCHED_EVERY_SECONDS = 3


@resource(
    "test://static-text",
    name="static-text",
    title="Static Text Resource",
    description="A static text resource for testing",
    mime_type="text/plain",
)
def static_text(ctx: ResourceContext) -> str:
    return "This is the content of the static text resource."


@resource(
    "test://static-binary",
    name="static-binary",
    title="Static Binary Resource",
    description="A static binary resource (image) for testing",
    mime_type="image/png",
)
def static_binary(ctx: ResourceContext) -> bytes:
    return base64.b64decode(PNG_BASE64)


class TemplateVars(BaseModel):
    id: str = Field(description="Any identifier; it is echoed in the data")


@resource(
    "test://template/{id}/data",
    name="template",
    title="Resource Template",
    description="A resource template with parameter substitution",
    mime_type="application/json",
    complete={"id": ["123", "456", "789"]},
)
def template_data(args: TemplateVars, ctx: ResourceContext) -> str:
    return json.dumps({"id": args.id, "templateTest": True, "data": f"Data for ID: {args.id}"})


def _revision() -> int:
    return int(time.time() // WATCHED_EVERY_SECONDS)


@resource(
    "test://watched-resource",
    name="watched-resource",
    title="Watched Resource",
    description=f"A resource that changes every {WATCHED_EVERY_SECONDS} seconds (subscribe to it)",
    mime_type="text/plain",
    version=lambda ctx: str(_revision()),
)
def watched(ctx: ResourceContext) -> str:
    return f"Watched resource content (revision {_revision()})"
