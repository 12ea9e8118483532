"""The 2026-07-28 era's resource, prompt and completion methods (``CATALOG_METHODS``).

Imported by the composition root with the first request for one of them: a cold start
that serves a task never loads the catalogue's modules."""

from __future__ import annotations

from ...codes import INVALID_PARAMS
from ..calls.services import Services
from ..catalog.completion import CompletionMethods
from ..catalog.prompts import PromptMethods
from ..catalog.resources import ResourceMethods
from ..era import Method


def catalog_methods(services: Services) -> list[Method]:
    # SEP-2164: an unknown resource is -32602 with data.uri; SEP-2549 caching hints.
    resources = ResourceMethods(services, not_found_code=INVALID_PARAMS, hints=True)
    return [
        *resources.methods(),
        *PromptMethods(services, hints=True, can_ask=True).methods(),
        *CompletionMethods(services, resources).methods(),
    ]
