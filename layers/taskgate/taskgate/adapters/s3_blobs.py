"""BlobStore on S3: results too large for a DynamoDB item (400 KB) or a Step Functions
payload (256 KB). The bucket encrypts at rest and expires objects by lifecycle."""

from __future__ import annotations

from typing import Any


class S3BlobStore:
    def __init__(self, client: Any, bucket: str) -> None:
        self._s3 = client
        self._bucket = bucket

    def put(self, key: str, data: bytes) -> None:
        self._s3.put_object(Bucket=self._bucket, Key=key, Body=data, ContentType="application/json")

    def get(self, key: str) -> bytes:
        return self._s3.get_object(Bucket=self._bucket, Key=key)["Body"].read()  # type: ignore[no-any-return]

    def delete(self, key: str) -> None:
        self._s3.delete_object(Bucket=self._bucket, Key=key)
