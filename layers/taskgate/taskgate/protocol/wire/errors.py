"""JSON-RPC errors, and the one table from domain errors to them.

Which HTTP status a JSON-RPC error travels with is each era's own table
(``Era.http_status``). Three cases are not a code's to decide and are named
here instead: a rejection at the transport (401, 403, 404 for an unknown
session, 413 …), a retryable failure of a dependency (503 with Retry-After),
and a crash (500).
"""

from __future__ import annotations

from ...codes import INTERNAL_ERROR, INVALID_PARAMS, INVALID_REQUEST, TASK_LIMIT_REACHED
from ...domain.calls import CallCancelled, CallIdInUse
from ...domain.errors import (
    DependencyFailure,
    InvalidCursor,
    PayloadTooLarge,
    ResultUnavailable,
    ServerBusy,
    ServiceUnavailable,
    TaskgateError,
    TaskNotFound,
    TooManyActiveTasks,
)
from ...tools.errors import ProtocolError

RETRY_AFTER_SECONDS = 1


# Raised anywhere below the dispatcher; becomes a JSON-RPC error response. One class with
# what a tool raises (``taskgate.tools.ProtocolError``): either reaches the client as is.
RpcError = ProtocolError


class TransportRejection(RpcError):
    """Refused at the HTTP level, with a status the transport specification fixes
    (an unknown session is 404 whatever the era); the body is still JSON-RPC."""

    def __init__(
        self, http_status: int, code: int, message: str, headers: dict[str, str] | None = None
    ) -> None:
        super().__init__(code, message)
        self.http_status = http_status
        self.headers = headers or {}


class Retryable(RpcError):
    """A dependency is unavailable: HTTP 503 with Retry-After, in every era."""

    def __init__(self, message: str = "Service temporarily unavailable; please retry") -> None:
        super().__init__(INTERNAL_ERROR, message)
        self.retry_after = RETRY_AFTER_SECONDS


# Domain error → (JSON-RPC code, message prefix). A subclass finds its nearest listed base.
DOMAIN_ERRORS: dict[type[TaskgateError], tuple[int, str]] = {
    TaskNotFound: (INVALID_PARAMS, ""),
    InvalidCursor: (INVALID_PARAMS, "Invalid cursor: "),
    PayloadTooLarge: (INVALID_PARAMS, "Invalid params: "),
    TooManyActiveTasks: (TASK_LIMIT_REACHED, ""),
    # The client cancelled the call while it was being served (domain/calls.py).
    CallCancelled: (INVALID_REQUEST, ""),
    # The request id names another call of this caller (domain/calls.py).
    CallIdInUse: (INVALID_REQUEST, ""),
    DependencyFailure: (INTERNAL_ERROR, "Internal error: "),
    # Permanent, and said plainly: retrying cannot bring a deleted result back.
    ResultUnavailable: (INTERNAL_ERROR, ""),
}


def from_domain(exc: TaskgateError) -> RpcError:
    if isinstance(exc, ServerBusy):
        return Retryable(str(exc))
    if isinstance(exc, ServiceUnavailable):
        return Retryable()
    for kind in type(exc).__mro__:
        mapped = DOMAIN_ERRORS.get(kind)
        if mapped is not None:
            code, prefix = mapped
            return RpcError(code, f"{prefix}{exc}", exc.data)
    # A domain error no client should see (a lost race that was not handled): a bug.
    return RpcError(INTERNAL_ERROR, "Internal error")
