"""The per-owner cap on long-held requests on DynamoDB (moto): one conditional write decides
each take, so instances taking at once never pass the cap between them; a lease whose
instance died runs out and its slot is taken again; releasing creates nothing."""

from __future__ import annotations

import threading

import boto3

from taskgate.adapters.dynamodb_held import DynamoDBHeldStore
from taskgate.domain.held import HeldRequests, Lease, TooManyHeld
from taskgate.local.runtime import REGION, EmbeddedAws


def _store(aws: EmbeddedAws) -> DynamoDBHeldStore:
    client = boto3.client("dynamodb", region_name=REGION)
    return DynamoDBHeldStore(lambda: client, aws.table_name)


def test_takes_racing_from_many_instances_never_pass_the_cap(aws: EmbeddedAws) -> None:
    store = _store(aws)
    taken: list[bool] = []
    start = threading.Barrier(12)

    def take(i: int) -> None:
        start.wait()
        taken.append(store.take("ann", Lease(f"l{i}", "listen", 10_000), cap=4, now_ms=1_000))

    threads = [threading.Thread(target=take, args=(i,)) for i in range(12)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert taken.count(True) == 4
    assert len(store.open_leases("ann", 1_000)) == 4
    # Another owner has a cap of their own.
    assert store.take("bob", Lease("b", "listen", 10_000), cap=4, now_ms=1_000)


def test_a_lease_past_its_end_frees_its_slot_and_a_release_frees_one_at_once(aws: EmbeddedAws) -> None:
    store = _store(aws)
    assert store.take("ann", Lease("died", "listen", 5_000), cap=2, now_ms=1_000)
    assert store.take("ann", Lease("live", "call", 50_000), cap=2, now_ms=1_000)
    assert not store.take("ann", Lease("third", "listen", 50_000), cap=2, now_ms=4_000)
    # The instance holding "died" never released it; once past its end, its slot is taken again.
    assert store.take("ann", Lease("third", "listen", 50_000), cap=2, now_ms=6_000)
    assert {lease.lease_id for lease in store.open_leases("ann", 6_000)} == {"live", "third"}
    store.release("ann", "live")
    assert store.take("ann", Lease("fourth", "listen", 50_000), cap=2, now_ms=6_000)


def test_releasing_for_an_owner_with_no_leases_writes_no_item(aws: EmbeddedAws) -> None:
    store = _store(aws)
    store.release("nobody", "x")
    client = boto3.client("dynamodb", region_name=REGION)
    assert "Item" not in client.get_item(TableName=aws.table_name, Key={"taskId": {"S": "held#nobody"}})


def test_the_cap_refuses_with_the_limit_and_releases_when_the_request_ends(aws: EmbeddedAws) -> None:
    clock = [1_000]
    held = HeldRequests(_store(aws), lambda: clock[0], cap=1)
    with held.hold("ann", "listen", 60):
        try:
            with held.hold("ann", "call", 60):
                raise AssertionError("a second lease passed a cap of one")
        except TooManyHeld as refused:
            assert refused.data == {"limit": 1}
    with held.hold("ann", "call", 60) as lease:
        assert held.open("ann") == [lease]
