"""The client factory: the template's endpoint override, clients made on first use,
and a rebuild that keeps only what was made."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from taskgate import wiring
from taskgate.adapters import aws_clients
from taskgate.config import Settings

ARN = "arn:aws:states:eu-west-1:123456789012:stateMachine:t"


@pytest.fixture(autouse=True)
def fresh(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"):
        monkeypatch.setenv(name, "testing")
    monkeypatch.setenv("AWS_REGION", "eu-west-1")
    monkeypatch.delenv("AWS_ENDPOINT_URL", raising=False)
    aws_clients.reset()
    yield
    aws_clients.reset()


def test_no_override_means_aws_itself(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AWS_ENDPOINT_URL", "")  # the template declares it empty
    assert aws_clients.client("dynamodb").meta.endpoint_url == "https://dynamodb.eu-west-1.amazonaws.com"


def test_the_endpoint_override_reaches_every_client(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AWS_ENDPOINT_URL", "http://host.docker.internal:4599")
    for service in ("dynamodb", "stepfunctions", "s3"):
        assert aws_clients.client(service).meta.endpoint_url == "http://host.docker.internal:4599"


def test_a_client_is_made_by_the_adapters_first_call_and_follows_a_refresh() -> None:
    workflow = wiring.aws_ports(Settings(task_table="t", state_machine_arn=ARN)).workflow()
    assert "stepfunctions" not in aws_clients._clients
    assert workflow._sfn.meta.region_name == "eu-west-1"  # type: ignore[attr-defined]
    made = aws_clients.client("stepfunctions")
    assert workflow._sfn is made  # type: ignore[attr-defined]
    aws_clients.refresh()
    assert set(aws_clients._clients) == {"stepfunctions"}  # only what had been made
    assert aws_clients.client("stepfunctions") is not made
    assert workflow._sfn is aws_clients.client("stepfunctions")  # type: ignore[attr-defined]


def test_the_sweeper_never_runs_more_threads_than_its_clients_have_connections(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """botocore keeps max_pool_connections per client (10 unless told): a 16-thread sweep on
    a 10-connection pool throws connections away and warns "Connection pool is full"."""
    from taskgate import wiring

    monkeypatch.setenv("TASK_TABLE", "t")
    monkeypatch.setenv("STATE_MACHINE_ARN", "arn:aws:states:us-east-1:123456789012:stateMachine:m")
    monkeypatch.setenv("TOOL_MODULES", "taskgate_tools")
    wiring.reset()
    try:
        sweeper = wiring.root().sweeper
        for service in ("dynamodb", "stepfunctions"):
            assert sweeper._parallelism <= aws_clients.client(service).meta.config.max_pool_connections, (
                service
            )
    finally:
        wiring.reset()
