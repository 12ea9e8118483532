"""Where a task's result lives: in its row while it fits, in the result bucket
when it does not. Written once by the worker; read only where a result is
returned (tasks/get of a finished task, tasks/result), never on cancel or update.
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any

from .errors import PayloadTooLarge, ResultUnavailable
from .model import TaskRecord
from .ports import BlobStore

# Room left in a 400 KB DynamoDB item for the arguments and bookkeeping beside a result.
ROW_BUDGET_BYTES = 350_000

DAY_MS = 86_400_000
# How long the result bucket keeps an object, by the tag it was written with: one
# lifecycle rule per class in template.yaml (a unit test keeps the two equal). The
# longest covers the longest task TTL the template allows (MaxTtlMs, 365 days).
RETENTION_CLASSES_DAYS = (1, 2, 7, 30, 90, 180, 366)
RETENTION_TAG = "retention"


def retention_days(keep_ms: int) -> int:
    """The shortest retention class that keeps an object at least ``keep_ms`` (plus a
    minute of clock skew): a result never expires before the task row that points at it."""
    needed = keep_ms + 60_000
    for days in RETENTION_CLASSES_DAYS:
        if days * DAY_MS >= needed:
            return days
    raise ValueError(f"no retention class keeps a result for {keep_ms} ms")


@dataclasses.dataclass(frozen=True)
class PlacedResult:
    inline: dict[str, Any] | None
    ref: str | None


class ResultStore:
    def __init__(self, blobs: BlobStore | None, *, max_inline_bytes: int) -> None:
        self._blobs = blobs
        self._max_inline = max_inline_bytes

    def place(self, task_id: str, result: dict[str, Any], beside_bytes: int, *, keep_ms: int) -> PlacedResult:
        """Keep ``result`` in the row, or write it to the bucket and keep its key.
        ``beside_bytes`` is what else the row holds (the arguments); ``keep_ms`` how long
        the row is kept after this write (its retention), which the object must outlive."""
        encoded = json.dumps(result, separators=(",", ":"), ensure_ascii=False).encode()
        if len(encoded) <= self._max_inline and len(encoded) + beside_bytes <= ROW_BUDGET_BYTES:
            return PlacedResult(inline=result, ref=None)
        if self._blobs is None:
            raise PayloadTooLarge("The result", len(encoded), self._max_inline)
        ref = f"results/{task_id}.json"
        self._blobs.put(ref, encoded, keep_days=retention_days(keep_ms))
        return PlacedResult(inline=None, ref=ref)

    def discard(self, placed: PlacedResult) -> None:
        """The task ended otherwise (cancelled) while this result was written: nobody
        will ever read the object."""
        if placed.ref is not None and self._blobs is not None:
            self._blobs.delete(placed.ref)

    def attach(self, record: TaskRecord) -> TaskRecord:
        """``record`` with its result in hand, read from the bucket when it lives there."""
        if record.result_ref is None:
            return record
        if self._blobs is None:
            raise ResultUnavailable(record.task_id)
        try:
            data = self._blobs.get(record.result_ref)
        except KeyError:
            raise ResultUnavailable(record.task_id) from None
        return dataclasses.replace(record, result=json.loads(data))
