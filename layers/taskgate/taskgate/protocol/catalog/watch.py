"""What a ``subscriptions/listen`` stream watches of the catalogue (2026-07-28): the subscribed
resources' versions and the caller's resource list.

A resource changes when its ``version`` (its author's cheap fingerprint, ``@resource(version=)``,
as the 2025 path's subscriptions use it) differs from the one the stream last saw; a resource
without a version never reports a change, so it is not honoured. The resource list changes
only where a template lists the caller's own resources (``@resource(lister=)``): the stream
keeps a digest of what ``resources/list`` shows this caller. Tool and prompt lists are fixed by
the deployed code: they change with a deploy, which a running stream (on the code it started
with) cannot see; a client re-listens within the stream's length and refetches then.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Sequence
from typing import Any

from ..wire.exchange import Call
from .resources import ListPage, ResourceMethods
from .subscriptions import stored_version, updated

logger = logging.getLogger(__name__)

LIST_CHANGED = {"jsonrpc": "2.0", "method": "notifications/resources/list_changed", "params": {}}


class ResourceWatch:
    """The honoured part of a filter's ``resourceSubscriptions`` and ``resourcesListChanged``,
    and what changed since the last look (``changes``)."""

    def __init__(
        self, resources: ResourceMethods, call: Call, uris: Sequence[str], list_changes: bool
    ) -> None:
        self._resources = resources
        self._call = call
        self._versions: dict[str, str] = {}
        for uri in dict.fromkeys(uris):
            found = resources.resolve(uri)
            if found is None or found.version is None:
                continue  # nothing could ever tell us it changed
            seen = self._version(uri)
            if seen is not None:
                self._versions[uri] = seen
        self.lists = list_changes and any(r.lister is not None for r in resources.all())
        self._listed = self._list_digest() if self.lists else ""

    @property
    def uris(self) -> list[str]:
        return list(self._versions)

    def __bool__(self) -> bool:
        return bool(self._versions) or self.lists

    def _version(self, uri: str) -> str | None:
        found = self._resources.resolve(uri)
        if found is None:
            return None
        try:
            return stored_version(found.current_version(uri, self._resources.context(self._call, uri)))
        except Exception:
            # The author's code: a failing look is "no news", never the end of the stream.
            logger.warning("version of %s failed", uri, exc_info=True)
            return None

    def _list_digest(self) -> str:
        try:
            listed: Any = self._resources.list(self._call, ListPage())["resources"]
        except Exception:
            logger.warning("resources/list for a listen stream failed", exc_info=True)
            return self._listed
        text = json.dumps(listed, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()

    def changes(self) -> list[dict[str, Any]]:
        """The notifications for what changed since the last look."""
        out: list[dict[str, Any]] = []
        for uri, seen in self._versions.items():
            current = self._version(uri)
            if current is not None and current != seen:
                self._versions[uri] = current
                out.append(updated(uri))
        if self.lists:
            digest = self._list_digest()
            if digest != self._listed:
                self._listed = digest
                out.append(dict(LIST_CHANGED))
        return out
