"""What the client declared, kept in DynamoDB: with its 2025 session (and the level it set)
and with each task, so a question the client cannot answer is never sent."""

from __future__ import annotations

from taskgate import wiring
from taskgate.domain.sessions import Session
from taskgate.local.runtime import EmbeddedAws
from tests.integration.conftest import owner_client


def test_a_session_keeps_capabilities_and_log_level(aws: EmbeddedAws) -> None:
    store = wiring.root().sessions
    store.create_session(Session("s1", "alice", "2025-11-25", 10**13, capabilities={"sampling": {}}))
    store.create_session(Session("s0", "alice", "2025-11-25", 10**13))
    store.set_log_level("s1", "warning")
    store.set_log_level("gone", "debug")  # a session that is gone stays gone
    kept = store.get_session("s1")
    assert kept is not None and kept.capabilities == {"sampling": {}} and kept.log_level == "warning"
    older = store.get_session("s0")
    assert older is not None and older.capabilities is None and older.log_level is None
    assert store.get_session("gone") is None


def test_a_task_row_keeps_what_its_call_declared(aws: EmbeddedAws) -> None:
    alice = owner_client("alice")
    created = alice.call("test_sampling", {"prompt": "x"})
    record = wiring.root().store.get(created["taskId"])
    # The tests' client declares elicitation (form and URL) and the tasks extension; only
    # what questions depend on is kept.
    assert record is not None and record.client_capabilities == {"elicitation": {"form": {}, "url": {}}}
    failed = alice.wait(created["taskId"])
    assert failed["status"] == "failed" and failed["error"]["code"] == -32021
    assert failed["error"]["data"] == {"requiredCapabilities": {"sampling": {}}}
