"""The stack's life, rehearsed (tests/rehearsal.py; issue 29, item 2): every Parameter at each
allowed value or boundary, every pair of the paired ones, each deploy and the deploy that sets
the value back, each first create and its rollback, and the upgrade from the previous release
with its defaults, checked against AWS's own rules. It must find nothing here, and it must
find the four majors the third review found on the revision before it (170eb83)."""

from __future__ import annotations

import pytest

from tests.rehearsal import (
    PREVIOUS_RELEASE,
    Deployed,
    Transition,
    create_rollback,
    release,
    upgrade,
)

# main when the third review was made: N1-N4 are in it.
REVIEWED = "170eb83"


@pytest.fixture(scope="module")
def reviewed() -> object:
    return release(REVIEWED)


def test_it_finds_n1_a_reservation_alone_fails_the_deploy(reviewed: object) -> None:
    rel = release(REVIEWED)
    base = Deployed(rel, {})
    for name, value, function in (
        ("WorkerReservedConcurrency", "50", "WorkerFunction"),
        ("JwtAudience", "api://taskgate", "ApiFunction"),
        ("JwtScopes", "tasks/read", "ApiFunction"),
        ("JwtSignInClientId", "sign-in-client", "ApiFunction"),
    ):
        found = Transition(base, Deployed(rel, {name: value})).check()
        assert [(f.kind, f.where) for f in found] == [("publish-fails", function)], (name, found)


def test_it_finds_n2_a_failed_first_create_ends_in_rollback_failed(reviewed: object) -> None:
    found = create_rollback(Deployed(release(REVIEWED), {}))
    assert sorted((f.kind, f.where) for f in found) == [
        ("create-rollback-fails", "TaskTable"),
        ("create-rollback-fails", "UserPool"),
    ]


def test_it_finds_n3_the_streaming_stage_keeps_its_old_authorization(reviewed: object) -> None:
    rel = release(REVIEWED)
    streaming = Deployed(rel, {"StreamingApi": "true"})
    iam = Deployed(rel, {"StreamingApi": "true", "AuthMode": "IAM"})
    for before, after in ((streaming, iam), (iam, streaming)):
        found = [f for f in Transition(before, after).check() if f.kind == "not-redeployed"]
        assert [f.where for f in found] == ["StreamApiStage"], found
        assert "AuthorizationType" in found[0].message


def test_it_finds_n4_an_upgrade_from_jwt_locks_people_out(reviewed: object) -> None:
    found, _ = upgrade(release(PREVIOUS_RELEASE), release(REVIEWED))
    lost = [f.message for f in found if f.kind == "sign-in-lost"]
    assert any("McpClient loses callbacks" in m for m in lost), found
    assert any("McpClient loses scopes ['taskgate/tasks']" in m for m in lost), found
    assert any("no longer accepts client ids" in m for m in lost), found
