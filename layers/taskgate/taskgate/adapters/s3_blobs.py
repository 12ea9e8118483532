"""BlobStore on S3: results too large for a DynamoDB item (400 KB) or a Step Functions
payload (256 KB). The bucket encrypts at rest and expires objects by lifecycle."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from botocore.exceptions import ClientError

from .aws_errors import error_code, translating


class S3BlobStore:
    def __init__(self, client: Callable[[], Any], bucket: str) -> None:
        # A client factory: most requests never touch S3, so the API's cold start
        # does not pay for building an S3 client.
        self._client = client
        self._bucket = bucket

    @property
    def _s3(self) -> Any:
        return self._client()

    @translating
    def put(self, key: str, data: bytes) -> None:
        self._s3.put_object(Bucket=self._bucket, Key=key, Body=data, ContentType="application/json")

    @translating
    def get(self, key: str) -> bytes:
        return self._s3.get_object(Bucket=self._bucket, Key=key)["Body"].read()  # type: ignore[no-any-return]

    @translating
    def get_range(self, key: str, start: int, length: int) -> tuple[bytes, int]:
        try:
            found = self._s3.get_object(
                Bucket=self._bucket, Key=key, Range=f"bytes={start}-{start + max(1, length) - 1}"
            )
        except ClientError as exc:
            if error_code(exc) != "InvalidRange":
                raise
            # At or past the end: S3 refuses the range, so ask the size alone.
            return b"", int(self._s3.head_object(Bucket=self._bucket, Key=key)["ContentLength"])
        # "bytes 0-99/12345": the whole size follows the slash.
        total = int(str(found["ContentRange"]).rpartition("/")[2])
        return found["Body"].read(), total

    @translating
    def delete(self, key: str) -> None:
        self._s3.delete_object(Bucket=self._bucket, Key=key)
