"""One error policy: AWS failures become domain errors in the adapters, domain
errors become JSON-RPC errors in one table, and no failure reaches a client as a
trace."""

from __future__ import annotations

import json
from typing import Any

import pytest
from botocore.exceptions import ClientError, EndpointConnectionError, NoCredentialsError, ReadTimeoutError

from taskgate.adapters.aws_errors import translate, translating
from taskgate.codes import INTERNAL_ERROR, INVALID_PARAMS, TASK_LIMIT_REACHED
from taskgate.domain.errors import (
    DependencyFailure,
    InvalidCursor,
    PayloadTooLarge,
    ServiceUnavailable,
    TaskAlreadyExists,
    TaskNotFound,
    TooManyActiveTasks,
)
from taskgate.protocol.wire.errors import Retryable, from_domain
from tests.fakes import World


def client_error(code: str, status: int = 400) -> ClientError:
    return ClientError(
        {"Error": {"Code": code, "Message": "m"}, "ResponseMetadata": {"HTTPStatusCode": status}}, "Op"
    )


@pytest.mark.parametrize(
    "exc",
    [
        client_error("ThrottlingException"),
        client_error("ProvisionedThroughputExceededException"),
        client_error("TooManyRequestsException", 429),
        client_error("InternalServerError", 500),
        client_error("SomethingNew", 503),
        EndpointConnectionError(endpoint_url="https://dynamodb"),
        ReadTimeoutError(endpoint_url="https://dynamodb"),
    ],
)
def test_throttling_5xx_and_unreachable_are_retryable(exc: Exception) -> None:
    assert isinstance(translate(exc), ServiceUnavailable)


@pytest.mark.parametrize(
    "exc",
    [
        client_error("AccessDeniedException"),
        client_error("AccessDenied", 403),
        client_error("ValidationException"),
        client_error("NoSuchKey", 404),
        client_error("ResourceNotFoundException"),
        NoCredentialsError(),
    ],
)
def test_everything_else_is_a_permanent_failure(exc: Exception) -> None:
    assert isinstance(translate(exc), DependencyFailure)


def test_an_adapter_method_lets_no_aws_error_out() -> None:
    @translating
    def call() -> None:
        raise client_error("ThrottlingException")

    with pytest.raises(ServiceUnavailable) as raised:
        call()
    assert isinstance(raised.value.__cause__, ClientError)


@pytest.mark.parametrize(
    ("exc", "code", "data"),
    [
        (TaskNotFound("t"), INVALID_PARAMS, None),
        (InvalidCursor("bad"), INVALID_PARAMS, None),
        (PayloadTooLarge("arguments", 10, 5), INVALID_PARAMS, {"limit": 5}),
        (TooManyActiveTasks(3), TASK_LIMIT_REACHED, {"limit": 3}),
        (DependencyFailure("AWS refused"), INTERNAL_ERROR, None),
        (TaskAlreadyExists("t"), INTERNAL_ERROR, None),
    ],
)
def test_domain_errors_map_to_json_rpc_codes(exc: Exception, code: int, data: Any) -> None:
    error = from_domain(exc)  # type: ignore[arg-type]
    assert (error.code, error.data) == (code, data)


def test_a_retryable_failure_is_503_with_retry_after_in_both_eras(world: World) -> None:
    world.workflow.fail_next["start"] = ServiceUnavailable("throttled")
    reply = world.mcp().request("tools/call", {"name": "slow_compute", "arguments": {"seconds": 0}})
    assert reply["_http_status"] == 503 and "retry" in reply["error"]["message"]
    world.workflow.fail_next["start"] = ServiceUnavailable("throttled")
    old = world.handle(
        {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "slow_compute", "task": {}}}
    )
    assert old.status == 503 and old.headers["retry-after"] == "1"
    # Nothing was left working: the rows that were written are failed, with a reason.
    assert {r.status.value for r in world.store.records.values()} == {"failed"}
    assert isinstance(from_domain(ServiceUnavailable("x")), Retryable)


def test_a_permanent_failure_is_a_json_rpc_error_without_retry(world: World) -> None:
    world.workflow.fail_next["start"] = DependencyFailure("AWS refused the request (AccessDeniedException)")
    reply = world.mcp().request("tools/call", {"name": "slow_compute", "arguments": {"seconds": 0}})
    assert reply["error"]["code"] == INTERNAL_ERROR
    assert reply["_http_status"] == 200 and "retry" not in reply["error"]["message"]


def test_a_crash_is_a_500_without_a_trace(world: World, monkeypatch: pytest.MonkeyPatch) -> None:
    def boom(*args: Any, **kwargs: Any) -> Any:
        raise ZeroDivisionError("secret detail")

    monkeypatch.setattr(world.tasks, "get", boom)
    reply = world.mcp().request("tasks/get", {"taskId": "t"})
    assert reply["_http_status"] == 500
    error_id = reply["error"]["data"]["errorId"]  # the key its trace is logged under (issue 31)
    assert reply["error"] == {
        "code": INTERNAL_ERROR,
        "message": f"Internal error (the function's log has the trace under errorId {error_id})",
        "data": {"errorId": error_id},
    }
    assert "secret" not in json.dumps(reply["error"])
