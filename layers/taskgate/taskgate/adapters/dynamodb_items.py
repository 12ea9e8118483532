"""The item codec both DynamoDB adapters share (tasks, and the 2025 era's sessions, streams
and subscriptions live in one table), and the one reading of a conditional write's failure.

JSON values are stored as strings, compact and unescaped: the bytes ``domain.limits``
counts are the bytes DynamoDB holds. ``expiresAt`` (the table's TTL attribute) is epoch
seconds, rounded up so that an item never dies early.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from botocore.exceptions import BotoCoreError, ClientError

from .aws_errors import error_code, translate

CONDITION_FAILED = "ConditionalCheckFailedException"


def dumps(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def s(value: str) -> dict[str, str]:
    return {"S": value}


def n(value: int) -> dict[str, str]:
    return {"N": str(value)}


def j(value: Any) -> dict[str, str]:
    """A JSON value, as a string attribute."""
    return {"S": dumps(value)}


def expires_at(ms: int) -> dict[str, str]:
    return n(-(-ms // 1000))


def expires_at_ms(item: dict[str, Any]) -> int:
    return int(item["expiresAt"]["N"]) * 1000


def conditional[R](write: Callable[..., R], **request: Any) -> R | None:
    """``write(**request)`` (a PutItem or UpdateItem with a condition): its response, or
    None when the condition failed. Any other failure comes out as a domain error."""
    try:
        return write(**request)
    except ClientError as exc:
        if error_code(exc) == CONDITION_FAILED:
            return None
        raise translate(exc) from exc
    except BotoCoreError as exc:
        raise translate(exc) from exc
