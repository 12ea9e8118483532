"""The requestState key as deployed: a Secrets Manager secret (here moto's, made by the
local runtime as the stack makes its own), read once, shared by every instance."""

from __future__ import annotations

import boto3
import pytest

from taskgate import wiring
from taskgate.adapters import aws_clients
from taskgate.adapters.secrets import SecretsManagerSecret
from taskgate.domain.errors import DependencyFailure
from taskgate.lazy import Lazy
from taskgate.local.runtime import REGION, EmbeddedAws
from taskgate.protocol.wire.errors import RpcError
from taskgate.protocol.wire.request_state import Carried, RequestStates
from taskgate.protocol.wire.sealing import KeyRing
from tests.integration.conftest import owner_client

WHERE = {"method": "tools/call", "target": "t", "arguments": {}}


def test_the_runtime_makes_a_secret_and_the_adapter_reads_it(aws: EmbeddedAws) -> None:
    assert wiring.root().settings.request_state_secret_arn == aws.request_state_secret_arn
    value = SecretsManagerSecret(
        lambda: aws_clients.client("secretsmanager"), aws.request_state_secret_arn
    ).value()
    assert len(value) >= 32
    missing = SecretsManagerSecret(lambda: aws_clients.client("secretsmanager"), "taskgate-no-such-secret")
    with pytest.raises(DependencyFailure):
        missing.value()


def test_two_instances_share_the_key_another_secret_does_not_open(aws: EmbeddedAws) -> None:
    # Two instances: two roots from the same environment, each reading the secret itself.
    first = wiring.from_env().request_states
    second = wiring.from_env().request_states
    token = first.seal(Carried({"k": 1}, "s"), owner="alice", **WHERE)
    assert second.open(token, owner="alice", **WHERE) == Carried({"k": 1}, "s")
    other_arn = boto3.client("secretsmanager", region_name=REGION).create_secret(
        Name="another", SecretString="x" * 64
    )["ARN"]
    secret = SecretsManagerSecret(lambda: aws_clients.client("secretsmanager"), other_arn)
    stranger = RequestStates(Lazy(lambda: KeyRing([secret.value()])), ttl_ms=60_000, clock=lambda: 1_000)
    with pytest.raises(RpcError):
        stranger.open(token, owner="alice", **WHERE)


def test_a_multi_round_call_through_the_server(aws: EmbeddedAws) -> None:
    alice = owner_client("alice")
    first = alice.call("test_input_required_result_request_state", tasks=False)
    state = first["requestState"]
    answers = {"confirm": {"action": "accept", "content": {"ok": True}}}
    params = {"name": "test_input_required_result_request_state", "arguments": {}, "inputResponses": answers}
    done = alice.result("tools/call", {**params, "requestState": state}, tasks=False)
    assert done["content"][0]["text"] == "state-ok: confirmed=True"
    bob = owner_client("bob")
    refused = bob.request("tools/call", {**params, "requestState": state}, tasks=False)
    assert refused["error"]["code"] == -32602 and refused["_http_status"] == 400


def test_a_rotation_of_the_secret_breaks_no_state_in_flight(aws: EmbeddedAws) -> None:
    """Secrets Manager rotation (issue 29, n9): the new value becomes AWSCURRENT, the old one
    AWSPREVIOUS. A state sealed before opens after; an instance that read the secret before
    opens a state sealed with the new value."""
    warm = wiring.from_env().request_states  # an instance that read the secret before
    before = warm.seal(Carried({"k": 1}, "before"), owner="alice", **WHERE)
    boto3.client("secretsmanager", region_name=REGION).put_secret_value(
        SecretId=aws.request_state_secret_arn, SecretString="n" * 64
    )
    fresh = wiring.from_env().request_states  # one started after the rotation
    assert fresh.open(before, owner="alice", **WHERE).state == "before"
    after = fresh.seal(Carried({"k": 2}, "after"), owner="alice", **WHERE)
    assert warm.open(after, owner="alice", **WHERE).state == "after"
