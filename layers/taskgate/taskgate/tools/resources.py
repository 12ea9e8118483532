"""Resources: functions that answer ``resources/read`` for a URI or a URI template.

    @resource("docs://readme", mime_type="text/markdown")
    def readme(ctx: ResourceContext) -> str: ...

    class ReportVars(BaseModel):
        year: int

    @resource("reports://orders/{year}", mime_type="application/json",
              complete={"year": ["2024", "2025"]})
    def yearly(args: ReportVars, ctx: ResourceContext) -> dict: ...

A function returns ``str`` (text), ``bytes`` (a blob, base64 on the wire), a ``dict``
(JSON text), a ``Contents`` or a list of ``Contents``; it raises ``ResourceNotFound``
for a URI its template matches but that names nothing (or nothing of this caller's).
"""

from __future__ import annotations

import base64
import functools
import inspect
import json
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, Literal
from urllib.parse import unquote

from pydantic import BaseModel, ValidationError

from .awaiting import finish
from .catalog import CallerContext, Completer, split_signature

CacheScope = Literal["public", "private"]
# The subset of RFC 6570 a resource template may use: {var} (one path segment) and
# {+var} (reserved expansion: may span segments).
_VARIABLE = re.compile(r"\{(\+?)([A-Za-z_][A-Za-z0-9_]*)\}")


class ResourceNotFound(Exception):
    """No resource at this URI (for this caller): -32602 / -32002 with ``data.uri``."""

    def __init__(self, uri: str, reason: str = "Resource not found") -> None:
        super().__init__(reason)
        self.uri = uri
        self.reason = reason


@dataclass(frozen=True)
class ResourceContext(CallerContext):
    """What a resource function sees: the URI read, the caller and their tasks."""

    uri: str = ""


@dataclass(frozen=True)
class Contents:
    """One item of a ``ReadResourceResult``: text or bytes, with its URI and MIME type."""

    text: str | None = None
    blob: bytes | None = None
    uri: str | None = None
    mime_type: str | None = None

    def to_wire(self, uri: str, mime_type: str | None) -> dict[str, Any]:
        out: dict[str, Any] = {"uri": self.uri or uri}
        mime = self.mime_type or mime_type
        if mime:
            out["mimeType"] = mime
        if self.blob is not None:
            out["blob"] = base64.b64encode(self.blob).decode("ascii")
        else:
            out["text"] = self.text or ""
        return out


ResourceFn = Callable[..., Any]
VersionFn = Callable[..., str | None]
ListFn = Callable[[ResourceContext], Iterable[dict[str, Any]]]


@functools.cache
def _template_regex(template: str) -> re.Pattern[str]:
    out, pos = [], 0
    for match in _VARIABLE.finditer(template):
        out.append(re.escape(template[pos : match.start()]))
        reserved, name = match.groups()
        out.append(f"(?P<{name}>.+?)" if reserved else f"(?P<{name}>[^/?#]+)")
        pos = match.end()
    out.append(re.escape(template[pos:]))
    return re.compile("".join(out))


@dataclass(frozen=True)
class Resource:
    """A static resource (``uri``) or a template of many (``uri`` with ``{variables}``)."""

    uri: str
    name: str
    fn: ResourceFn
    description: str = ""
    title: str | None = None
    mime_type: str | None = None
    # The template's variables, validated (and typed) by this model.
    variables_model: type[BaseModel] | None = None
    complete: dict[str, Completer] = field(default_factory=dict)
    # SEP-2549 caching hint of a read: how long a client may keep it, and whether it
    # may be shared across callers (never for anything that depends on the caller).
    ttl_ms: int = 0
    cache_scope: CacheScope = "private"
    # A cheap fingerprint of the content (None: it does not exist yet). A change is what
    # ``notifications/resources/updated`` reports to subscribers; no function: never.
    version: VersionFn | None = None
    # The concrete resources of a template this caller can read, for resources/list.
    lister: ListFn | None = None
    size: int | None = None

    @property
    def is_template(self) -> bool:
        return _VARIABLE.search(self.uri) is not None

    def variables(self) -> list[str]:
        return [m.group(2) for m in _VARIABLE.finditer(self.uri)]

    def match(self, uri: str) -> dict[str, str] | None:
        """The template variables ``uri`` binds, or None when it is not one of ours."""
        if not self.is_template:
            return {} if uri == self.uri else None
        found = _template_regex(self.uri).fullmatch(uri)
        if found is None:
            return None
        return {k: unquote(v) for k, v in found.groupdict().items()}

    def describe(self) -> dict[str, Any]:
        key = "uriTemplate" if self.is_template else "uri"
        out: dict[str, Any] = {key: self.uri, "name": self.name}
        if self.title:
            out["title"] = self.title
        if self.description:
            out["description"] = self.description
        if self.mime_type:
            out["mimeType"] = self.mime_type
        if self.size is not None and not self.is_template:
            out["size"] = self.size
        return out

    def _args(self, uri: str, bound: dict[str, str]) -> list[Any]:
        if self.variables_model is None:
            return []
        try:
            return [self.variables_model.model_validate(bound)]
        except ValidationError as exc:
            # A URI the template's pattern matches but its types refuse names nothing.
            raise ResourceNotFound(uri) from exc

    def read(self, uri: str, ctx: ResourceContext) -> list[dict[str, Any]]:
        """The ``contents`` of a read of ``uri`` (which this resource matches)."""
        bound = self.match(uri)
        if bound is None:
            raise ResourceNotFound(uri)
        return self._contents(uri, finish(self.fn(*self._args(uri, bound), ctx)))

    def current_version(self, uri: str, ctx: ResourceContext) -> str | None:
        bound = self.match(uri)
        if self.version is None or bound is None:
            return None
        try:
            return self.version(*self._args(uri, bound), ctx)
        except ResourceNotFound:
            return None

    def _contents(self, uri: str, value: Any) -> list[dict[str, Any]]:
        items = value if isinstance(value, list) else [value]
        out: list[dict[str, Any]] = []
        for item in items:
            if isinstance(item, Contents):
                out.append(item.to_wire(uri, self.mime_type))
            elif isinstance(item, str):
                out.append(Contents(text=item).to_wire(uri, self.mime_type))
            elif isinstance(item, bytes | bytearray):
                out.append(Contents(blob=bytes(item)).to_wire(uri, self.mime_type))
            elif isinstance(item, dict | BaseModel):
                data = item.model_dump(mode="json") if isinstance(item, BaseModel) else item
                text = json.dumps(data, ensure_ascii=False)
                out.append(Contents(text=text).to_wire(uri, self.mime_type or "application/json"))
            else:
                raise TypeError(f"resource {self.name} returned {type(item).__name__}")
        if not out:
            # An empty contents array is ambiguous (SEP-2164): a resource with nothing is not found.
            raise ResourceNotFound(uri)
        return out


class ResourceRegistry:
    def __init__(self) -> None:
        self._resources: dict[str, Resource] = {}

    def add(self, r: Resource) -> None:
        if r.uri in self._resources and self._resources[r.uri].fn is not r.fn:
            raise ValueError(f"resource {r.uri!r} is registered twice")
        self._resources[r.uri] = r

    def __iter__(self) -> Iterator[Resource]:
        return iter(list(self._resources.values()))

    def __len__(self) -> int:
        return len(self._resources)


registry = ResourceRegistry()


def resource(
    uri: str,
    *,
    name: str | None = None,
    description: str | None = None,
    title: str | None = None,
    mime_type: str | None = None,
    complete: dict[str, Completer] | None = None,
    ttl_ms: int = 0,
    cache_scope: CacheScope = "private",
    version: VersionFn | None = None,
    lister: ListFn | None = None,
    size: int | None = None,
) -> Callable[[ResourceFn], ResourceFn]:
    """Register ``fn(ctx)`` (a static URI) or ``fn(args: Model, ctx)`` (a URI template
    whose ``{variables}`` are the model's fields) as a resource."""

    def decorate(fn: ResourceFn) -> ResourceFn:
        model = split_signature(fn, "resource")
        r = Resource(
            uri=uri,
            name=name or fn.__name__,
            fn=fn,
            description=description or _doc(fn),
            title=title,
            mime_type=mime_type,
            variables_model=model,
            complete=dict(complete or {}),
            ttl_ms=ttl_ms,
            cache_scope=cache_scope,
            version=version,
            lister=lister,
            size=size,
        )
        if r.is_template:
            missing = set(r.variables()) - set(model.model_fields if model else ())
            if missing:
                raise TypeError(f"{fn.__name__}: the arguments model lacks {sorted(missing)} of {uri}")
        elif model is not None:
            raise TypeError(f"{fn.__name__}: {uri} has no variables; take (ctx) only")
        if lister is not None and not r.is_template:
            raise TypeError(f"{fn.__name__}: only a template lists concrete resources")
        registry.add(r)
        return fn

    return decorate


def _doc(fn: Callable[..., Any]) -> str:
    return inspect.getdoc(fn) or ""
