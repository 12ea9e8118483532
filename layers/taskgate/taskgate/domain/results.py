"""Where a task's result lives: in its row while it fits, in the result bucket
when it does not. Written once by the worker; read only where a result is
returned (tasks/get of a finished task, tasks/result), never on cancel or update.
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any

from .errors import PayloadTooLarge
from .limits import MAX_ROW_BYTES
from .model import TaskRecord
from .ports import BlobStore


@dataclasses.dataclass(frozen=True)
class PlacedResult:
    inline: dict[str, Any] | None
    ref: str | None


class ResultStore:
    def __init__(self, blobs: BlobStore | None, *, max_inline_bytes: int) -> None:
        self._blobs = blobs
        self._max_inline = max_inline_bytes

    def place(self, task_id: str, result: dict[str, Any], beside_bytes: int) -> PlacedResult:
        """Keep ``result`` in the row, or write it to the bucket and keep its key.
        ``beside_bytes`` is what else the row holds (``limits.row_size``)."""
        encoded = json.dumps(result, separators=(",", ":"), ensure_ascii=False).encode()
        room = max(0, min(self._max_inline, MAX_ROW_BYTES - beside_bytes))
        if len(encoded) <= room:
            return PlacedResult(inline=result, ref=None)
        if self._blobs is None:
            raise PayloadTooLarge("The result", len(encoded), room)
        ref = f"results/{task_id}.json"
        self._blobs.put(ref, encoded)
        return PlacedResult(inline=None, ref=ref)

    def keep(self, name: str, value: dict[str, Any]) -> str | None:
        """Keep ``value`` in the bucket (a plain call's response that a stream must be
        able to replay); its key, or None when there is no bucket."""
        if self._blobs is None:
            return None
        ref = f"results/{name}.json"
        self._blobs.put(ref, json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode())
        return ref

    def load(self, ref: str) -> dict[str, Any]:
        if self._blobs is None:
            raise LookupError(ref)
        loaded: dict[str, Any] = json.loads(self._blobs.get(ref))
        return loaded

    def discard(self, placed: PlacedResult) -> None:
        """The task ended otherwise (cancelled) while this result was written: nobody
        will ever read the object."""
        if placed.ref is not None and self._blobs is not None:
            self._blobs.delete(placed.ref)

    def attach(self, record: TaskRecord) -> TaskRecord:
        """``record`` with its result in hand, read from the bucket when it lives there."""
        if record.result_ref is None or self._blobs is None:
            return record
        return dataclasses.replace(record, result=json.loads(self._blobs.get(record.result_ref)))
