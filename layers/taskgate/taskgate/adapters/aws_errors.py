"""AWS failures in domain terms: the one policy every adapter applies.

Throttling, 5xx and failures to connect are ``ServiceUnavailable`` (the client
is told to retry); everything else AWS refuses (access denied, validation, a
missing resource) is a ``DependencyFailure``, which retrying cannot mend.
Adapters handle the codes that mean something to them (a failed condition, an
execution that already exists) before this sees them.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from botocore.exceptions import (
    BotoCoreError,
    ClientError,
    ConnectionClosedError,
    EndpointConnectionError,
    HTTPClientError,
    ReadTimeoutError,
)
from botocore.exceptions import ConnectionError as BotoConnectionError

from ..domain.errors import DependencyFailure, ServiceUnavailable, TaskgateError

# Error codes AWS uses for "slow down" and "try again", across DynamoDB, Step
# Functions, S3 and Lambda.
RETRYABLE_CODES = frozenset(
    {
        "Throttling",
        "ThrottlingException",
        "ThrottledException",
        "RequestThrottled",
        "RequestThrottledException",
        "RequestLimitExceeded",
        "TooManyRequestsException",
        "ProvisionedThroughputExceededException",
        "TransactionInProgressException",
        "SlowDown",
        "InternalError",
        "InternalFailure",
        "InternalServerError",
        "InternalServerException",
        "InternalServiceError",
        "ServiceUnavailable",
        "ServiceUnavailableException",
        "ServiceException",
    }
)
_UNREACHABLE = (
    BotoConnectionError,
    EndpointConnectionError,
    ConnectionClosedError,
    ReadTimeoutError,
    HTTPClientError,
)


def error_code(exc: ClientError) -> str:
    return str(exc.response.get("Error", {}).get("Code", ""))


def _http_status(exc: ClientError) -> int:
    status = exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode", 0)
    return status if isinstance(status, int) else 0


def translate(exc: Exception) -> TaskgateError:
    """The domain error for an AWS SDK exception (anything else is returned as a
    permanent failure, so nothing from botocore escapes an adapter)."""
    if isinstance(exc, TaskgateError):
        return exc
    if isinstance(exc, ClientError):
        code = error_code(exc)
        if code in RETRYABLE_CODES or _http_status(exc) >= 500:
            return ServiceUnavailable(f"AWS is unavailable ({code or _http_status(exc)})")
        return DependencyFailure(f"AWS refused the request ({code or 'unknown error'})")
    if isinstance(exc, _UNREACHABLE):
        return ServiceUnavailable(f"AWS could not be reached ({type(exc).__name__})")
    return DependencyFailure(f"AWS call failed ({type(exc).__name__})")


@contextmanager
def translated() -> Iterator[None]:
    """Run AWS calls with their failures turned into domain errors."""
    try:
        yield
    except (ClientError, BotoCoreError) as exc:
        raise translate(exc) from exc


def translating[**P, R](method: Callable[P, R]) -> Callable[P, R]:
    """An adapter method whose AWS failures come out as domain errors. Codes the
    method itself catches and handles never reach the translation."""

    @functools.wraps(method)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        with translated():
            return method(*args, **kwargs)

    return wrapper
