"""BlobStore on S3: results too large for a DynamoDB item (400 KB) or a Step Functions
payload (256 KB). The bucket encrypts at rest and expires objects by lifecycle: each
object is tagged with its retention class, and template.yaml has one rule per class.

A missing key is S3's ``NoSuchKey`` (404) only when the caller may list the bucket;
otherwise S3 answers 403 AccessDenied, which would look like a permission problem. The
API function is granted ``s3:ListBucket`` on the bucket for that reason.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any
from urllib.parse import quote

from botocore.exceptions import ClientError

from ..domain.results import RETENTION_TAG
from .aws_errors import error_code, translating

# What S3 says for a key that holds nothing (HeadObject has no body: its code is "404").
_MISSING = ("NoSuchKey", "NotFound", "404")


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
    def put(self, key: str, data: bytes, *, keep_days: int) -> None:
        self._s3.put_object(
            Bucket=self._bucket,
            Key=key,
            Body=data,
            ContentType="application/json",
            Tagging=f"{RETENTION_TAG}={quote(f'{keep_days}d')}",
        )

    @translating
    def get(self, key: str) -> bytes:
        try:
            return self._s3.get_object(Bucket=self._bucket, Key=key)["Body"].read()  # type: ignore[no-any-return]
        except ClientError as exc:
            if error_code(exc) in _MISSING:
                raise KeyError(key) from exc
            raise

    @translating
    def get_range(self, key: str, start: int, length: int) -> tuple[bytes, int]:
        try:
            found = self._s3.get_object(
                Bucket=self._bucket, Key=key, Range=f"bytes={start}-{start + max(1, length) - 1}"
            )
        except ClientError as exc:
            if error_code(exc) in _MISSING:
                raise KeyError(key) from exc
            if error_code(exc) != "InvalidRange":
                raise
            # At or past the end: S3 refuses the range, so ask the size alone.
            try:
                head = self._s3.head_object(Bucket=self._bucket, Key=key)
            except ClientError as missing:
                if error_code(missing) in _MISSING:
                    raise KeyError(key) from missing
                raise
            return b"", int(head["ContentLength"])
        # "bytes 0-99/12345": the whole size follows the slash.
        total = int(str(found["ContentRange"]).rpartition("/")[2])
        return found["Body"].read(), total

    @translating
    def delete(self, key: str) -> None:
        self._s3.delete_object(Bucket=self._bucket, Key=key)
