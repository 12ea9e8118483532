"""Where a task's result lives: in its row while it fits, in the result bucket
when it does not. Written once by the worker; read only where a result is
returned (tasks/get of a finished task, tasks/result), never on cancel or update.

A result larger than one response may carry (``max_delivered_bytes``: a Lambda
response is at most 6 MB) is delivered as links instead: a CallToolResult whose
``resource_link`` items name the parts of its JSON, each read with
``resources/read`` of ``taskgate://tasks/{taskId}/result/{part}`` by the task's
owner only, and joined in order.
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any

from .errors import PayloadTooLarge, ResultUnavailable
from .limits import MAX_ROW_BYTES
from .model import Outcome, TaskRecord, TaskStatus
from .ports import BlobStore

# The parts of a result too large for one response.
RESULT_PART_URI = "taskgate://tasks/{task_id}/result/{part}"
RESULT_PART_TEMPLATE = "taskgate://tasks/{taskId}/result/{part}"
RESULT_MIME_TYPE = "application/json"
# A UTF-8 sequence is at most 4 bytes: a part may end up to 3 bytes past its nominal end.
_UTF8_TAIL = 3


def _encode(result: dict[str, Any]) -> bytes:
    return json.dumps(result, separators=(",", ":"), ensure_ascii=False).encode()


def _continuation(byte: int) -> bool:
    return byte & 0xC0 == 0x80


@dataclasses.dataclass(frozen=True)
class ResultPart:
    """One part of a result's JSON: whole UTF-8 characters, so each part is valid text."""

    text: str
    part: int
    parts: int
    total_bytes: int


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
    def __init__(
        self,
        blobs: BlobStore | None,
        *,
        max_inline_bytes: int,
        max_delivered_bytes: int = 2_097_152,
    ) -> None:
        self._blobs = blobs
        self._max_inline = max_inline_bytes
        self._max_delivered = max_delivered_bytes
        # Half the limit: a part's text, escaped again inside the JSON-RPC response
        # (every quote and backslash doubles), still fits in one.
        self.part_bytes = max(1, max_delivered_bytes // 2)

    def place(self, task_id: str, result: dict[str, Any], beside_bytes: int, *, keep_ms: int) -> PlacedResult:
        """Keep ``result`` in the row, or write it to the bucket and keep its key.
        ``beside_bytes`` is what else the row holds (``limits.row_size``); ``keep_ms`` how
        long the row is kept after this write (its retention), which the object must outlive."""
        encoded = json.dumps(result, separators=(",", ":"), ensure_ascii=False).encode()
        room = max(0, min(self._max_inline, MAX_ROW_BYTES - beside_bytes))
        if len(encoded) <= room:
            return PlacedResult(inline=result, ref=None)
        if self._blobs is None:
            raise PayloadTooLarge("The result", len(encoded), room)
        ref = result_key(task_id)
        self._blobs.put(ref, encoded, keep_days=retention_days(keep_ms))
        return PlacedResult(inline=None, ref=ref)

    def keep(self, name: str, value: dict[str, Any], *, keep_ms: int) -> str | None:
        """Keep ``value`` in the bucket for at least ``keep_ms`` (a plain call's response
        that a stream must be able to replay); its key, or None when there is no bucket."""
        if self._blobs is None:
            return None
        ref = f"results/{name}.json"
        self._blobs.put(ref, _encode(value), keep_days=retention_days(keep_ms))
        return ref

    def load(self, ref: str) -> dict[str, Any]:
        """What ``keep`` stored; ResultUnavailable once it is gone."""
        if self._blobs is None:
            raise ResultUnavailable(ref)
        try:
            loaded: dict[str, Any] = json.loads(self._blobs.get(ref))
        except KeyError:
            raise ResultUnavailable(ref) from None
        return loaded

    def discard(self, placed: PlacedResult) -> None:
        """The task ended otherwise (cancelled) while this result was written: nobody
        will ever read the object."""
        if placed.ref is not None and self._blobs is not None:
            self._blobs.delete(placed.ref)

    def attach(self, record: TaskRecord) -> TaskRecord:
        """``record`` with its result in hand, read from the bucket when it lives there;
        a result larger than one response becomes links to its parts."""
        if record.result_ref is None:
            if record.result is not None and len(_encode(record.result)) > self._max_delivered:
                return dataclasses.replace(record, result=self._links(record, len(_encode(record.result))))
            return record
        # One request either way: the whole object when it fits, else just its size.
        head, total = self._range(record, 0, self._max_delivered + 1)
        if total > self._max_delivered:
            return dataclasses.replace(record, result=self._links(record, total))
        return dataclasses.replace(record, result=json.loads(head))

    def parts_of(self, total_bytes: int) -> int:
        return max(1, -(-total_bytes // self.part_bytes))

    def read_part(self, record: TaskRecord, part: int) -> ResultPart | None:
        """Part ``part`` (from 1) of a completed task's result JSON; None when the task
        has no result or no such part."""
        if record.status is not TaskStatus.COMPLETED or part < 1:
            return None
        start = (part - 1) * self.part_bytes
        want = self.part_bytes + _UTF8_TAIL
        if record.result_ref is not None:
            chunk, total = self._range(record, start, want)
            if start >= total:
                return None
        elif record.result is not None:
            encoded = _encode(record.result)
            total = len(encoded)
            if start >= total:
                return None
            chunk = encoded[start : start + want]
        else:
            return None
        # A character that straddles a boundary belongs to the part it starts in.
        begin = 0
        while begin < len(chunk) and _continuation(chunk[begin]):
            begin += 1
        end = min(self.part_bytes, len(chunk))
        while end < len(chunk) and _continuation(chunk[end]):
            end += 1
        return ResultPart(chunk[begin:end].decode(), part, self.parts_of(total), total)

    def _range(self, record: TaskRecord, start: int, length: int) -> tuple[bytes, int]:
        """Bytes of the stored result; ResultUnavailable when it is gone (or there is no
        bucket to read it from): a permanent, plainly worded error, never "retry"."""
        if self._blobs is None or record.result_ref is None:
            raise ResultUnavailable(record.task_id)
        try:
            return self._blobs.get_range(record.result_ref, start, length)
        except KeyError:
            raise ResultUnavailable(record.task_id) from None

    def _links(self, record: TaskRecord, total: int) -> dict[str, Any]:
        parts = self.parts_of(total)
        note = (
            f"The result is {total} bytes, more than one response carries ({self._max_delivered}). "
            f"It is the JSON of the tool's CallToolResult in {parts} part(s): read each linked "
            "resource with resources/read and join their texts in order."
        )
        links = [
            {
                "type": "resource_link",
                "uri": RESULT_PART_URI.format(task_id=record.task_id, part=n),
                "name": f"result-part-{n}-of-{parts}",
                "title": f"Result of task {record.task_id}, part {n} of {parts}",
                "mimeType": RESULT_MIME_TYPE,
                "size": min(self.part_bytes, total - (n - 1) * self.part_bytes),
            }
            for n in range(1, parts + 1)
        ]
        return {
            "content": [{"type": "text", "text": note}, *links],
            "isError": record.outcome is Outcome.TOOL_ERROR,
        }


def result_key(task_id: str) -> str:
    return f"results/{task_id}.json"
