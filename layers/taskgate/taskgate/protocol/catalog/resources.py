"""``resources/list``, ``resources/templates/list`` and ``resources/read``, for both eras.

What the modules in ToolModules registered with ``@resource``, plus one template
taskgate serves itself: the parts of a task result too large for one response
(``taskgate://tasks/{taskId}/result/{part}``, readable by the task's owner only).

The eras differ in two things, passed in: the code of "no such resource" (-32002
in 2025-11-25; -32602 since SEP-2164) and the caching hints of SEP-2549 (2026).
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, StringConstraints

from ...codes import INVALID_PARAMS
from ...domain.errors import TaskNotFound
from ...domain.results import RESULT_MIME_TYPE, RESULT_PART_TEMPLATE
from ...tools.resources import Contents, Resource, ResourceContext, ResourceNotFound
from ..calls.services import Services
from ..era import Method
from ..wire.errors import RpcError
from ..wire.exchange import Call
from ..wire.params import MAX_ID_LENGTH, Params
from .callers import OwnerTasks

# Far above any URI a resource needs, far below the request body limit.
MAX_URI_LENGTH = 8192
# SEP-2549: lists that are the same for every caller may be cached and shared a while.
SHARED_LIST_TTL_MS = 300_000

Uri = Annotated[str, StringConstraints(min_length=1, max_length=MAX_URI_LENGTH)]


class ReadResource(Params):
    uri: Uri


class ListPage(Params):
    cursor: str | None = None


class _ResultPartVars(BaseModel):
    model_config = ConfigDict(defer_build=True)

    taskId: Annotated[str, StringConstraints(min_length=1, max_length=MAX_ID_LENGTH)]
    part: Annotated[int, Field(ge=1)]


def result_parts_resource(services: Services) -> Resource:
    """The parts of a finished task's result, for its owner: how a result too large
    for one response is delivered (its CallToolResult links them)."""

    def read(args: _ResultPartVars, ctx: ResourceContext) -> Contents:
        try:
            part = services.tasks.result_part(ctx.owner, args.taskId, args.part)
        except TaskNotFound:
            part = None
        if part is None:
            raise ResourceNotFound(ctx.uri)
        return Contents(text=part.text, mime_type=RESULT_MIME_TYPE)

    def version(args: _ResultPartVars, ctx: ResourceContext) -> str | None:
        task = ctx.tasks.get(args.taskId)
        return task.status if task is not None and task.status == "completed" else None

    return Resource(
        uri=RESULT_PART_TEMPLATE,
        name="task-result-part",
        title="Part of a task's result",
        description=(
            "One part of the JSON of a finished task's CallToolResult, for results larger than "
            "one response: tasks/get (or tasks/result) links every part; join their texts in order."
        ),
        mime_type=RESULT_MIME_TYPE,
        fn=read,
        variables_model=_ResultPartVars,
        version=version,
    )


def not_found(code: int, uri: str, reason: str = "Resource not found") -> RpcError:
    return RpcError(code, reason, {"uri": uri})


class ResourceMethods:
    def __init__(self, services: Services, *, not_found_code: int, hints: bool) -> None:
        self._s = services
        self._not_found_code = not_found_code
        self._hints = hints
        self._builtins = [result_parts_resource(services)]

    def methods(self) -> list[Method]:
        return [
            Method("resources/list", self.list, ListPage),
            Method("resources/templates/list", self.templates, ListPage),
            Method("resources/read", self.read, ReadResource, name_field="uri"),
        ]

    # -- the catalogue ------------------------------------------------------------

    def all(self) -> list[Resource]:
        return [*self._s.resources, *self._builtins]

    def resolve(self, uri: str) -> Resource | None:
        """The resource that serves ``uri``: a static URI first, then the first template."""
        every = self.all()
        exact = next((r for r in every if not r.is_template and r.uri == uri), None)
        return exact or next((r for r in every if r.is_template and r.match(uri) is not None), None)

    def template(self, uri_template: str) -> Resource | None:
        return next((r for r in self.all() if r.is_template and r.uri == uri_template), None)

    def context(self, call: Call, uri: str = "") -> ResourceContext:
        return ResourceContext(owner=call.owner, tasks=OwnerTasks(self._s.tasks, call.owner), uri=uri)

    def not_found(self, uri: str, reason: str = "Resource not found") -> RpcError:
        return not_found(self._not_found_code, uri, reason)

    # -- methods ------------------------------------------------------------------

    def _check_cursor(self, params: ListPage) -> None:
        # Every list fits in one page, so no cursor was ever issued.
        if params.cursor is not None:
            raise RpcError(INVALID_PARAMS, "Invalid cursor: this list has a single page")

    def _with_hints(self, result: dict[str, Any], ttl_ms: int, scope: str) -> dict[str, Any]:
        if self._hints:
            result.update(ttlMs=ttl_ms, cacheScope=scope)
        return result

    def list(self, call: Call, params: ListPage) -> dict[str, Any]:
        self._check_cursor(params)
        listed = [r.describe() for r in self.all() if not r.is_template]
        listers = [r for r in self.all() if r.lister is not None]
        for template in listers:
            assert template.lister is not None
            ctx = self.context(call)
            for item in template.lister(ctx):
                entry = {"name": template.name, **item}
                if template.mime_type and "mimeType" not in entry:
                    entry["mimeType"] = template.mime_type
                listed.append(entry)
        # What a lister adds belongs to this caller: such a list is never shared.
        if listers:
            return self._with_hints({"resources": listed}, 0, "private")
        return self._with_hints({"resources": listed}, SHARED_LIST_TTL_MS, "public")

    def templates(self, call: Call, params: ListPage) -> dict[str, Any]:
        self._check_cursor(params)
        found = [r.describe() for r in self.all() if r.is_template]
        return self._with_hints({"resourceTemplates": found}, SHARED_LIST_TTL_MS, "public")

    def read(self, call: Call, params: ReadResource) -> dict[str, Any]:
        found = self.resolve(params.uri)
        if found is None:
            raise self.not_found(params.uri)
        try:
            contents = found.read(params.uri, self.context(call, params.uri))
        except ResourceNotFound as exc:
            raise self.not_found(params.uri, exc.reason) from exc
        return self._with_hints({"contents": contents}, found.ttl_ms, found.cache_scope)
