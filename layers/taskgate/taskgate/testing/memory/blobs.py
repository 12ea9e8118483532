"""``BlobStore`` (the result bucket) over a dict."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    pass


class MemoryBlobs:
    """``BlobStore`` over a dict."""

    def __init__(self) -> None:
        self.objects: dict[str, bytes] = {}
        self.keep_days: dict[str, int] = {}

    def put(self, key: str, data: bytes, *, keep_days: int) -> None:
        self.objects[key] = data
        self.keep_days[key] = keep_days

    def get(self, key: str) -> bytes:
        return self.objects[key]

    def get_range(self, key: str, start: int, length: int) -> tuple[bytes, int]:
        data = self.objects[key]
        return data[start : start + max(1, length)], len(data)

    def delete(self, key: str) -> None:
        self.objects.pop(key, None)
