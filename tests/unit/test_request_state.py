"""A plain 2026-07-28 call's ``requestState``: sealed, and refused unless it comes back
unchanged, unexpired, from the caller it was sealed for, on the request it belongs to."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import pytest

from taskgate.lazy import Lazy
from taskgate.protocol.wire.errors import RpcError
from taskgate.protocol.wire.request_state import Carried, RequestStates, ephemeral_keys
from taskgate.protocol.wire.sealing import KeyRing
from taskgate.testing.memory import FakeClock
from tests.fakes import World
from tests.unit.test_tool_features import call

CONFIRM = {"confirm": {"action": "accept", "content": {"ok": True}}}


def _first_round(
    world: World, owner: str = "alice", tool: str = "test_input_required_result_tampered_state"
) -> str:
    first = call(world, tool, owner=owner)
    assert first.result["resultType"] == "input_required"
    state = first.result["requestState"]
    assert isinstance(state, str) and state.startswith("tg1.")
    return state  # type: ignore[no-any-return]


def assert_refused(reply: Any) -> None:
    assert reply.status == 400
    assert reply.error == {"code": -32602, "message": "Invalid or expired requestState"}


def test_the_echoed_state_completes_the_call(world: World) -> None:
    state = _first_round(world)
    done = call(
        world,
        "test_input_required_result_tampered_state",
        owner="alice",
        inputResponses=CONFIRM,
        requestState=state,
    )
    assert done.result["content"][0]["text"] == "integrity-ok: state verified"


def test_state_sealed_for_alice_is_refused_for_bob(world: World) -> None:
    state = _first_round(world, owner="alice")
    assert_refused(
        call(
            world,
            "test_input_required_result_tampered_state",
            owner="bob",
            inputResponses=CONFIRM,
            requestState=state,
        )
    )
    # Still good for alice: a refusal changes nothing.
    ok = call(
        world,
        "test_input_required_result_tampered_state",
        owner="alice",
        inputResponses=CONFIRM,
        requestState=state,
    )
    assert ok.result["resultType"] == "complete"


def test_an_expired_state_is_refused(world: World) -> None:
    state = _first_round(world)
    world.clock.advance(600_000 - 1)
    ok = call(
        world,
        "test_input_required_result_tampered_state",
        owner="alice",
        inputResponses=CONFIRM,
        requestState=state,
    )
    assert ok.result["resultType"] == "complete"
    world.clock.advance(1)
    assert_refused(
        call(
            world,
            "test_input_required_result_tampered_state",
            owner="alice",
            inputResponses=CONFIRM,
            requestState=state,
        )
    )


@pytest.mark.parametrize(
    "tamper",
    [
        lambda s: s + "-TAMPERED",
        lambda s: s[:-1] + ("A" if s[-1] != "A" else "B"),
        lambda s: s[:10] + s[11:],
        lambda s: "tg1." + s[4:][::-1],
        lambda s: "tg2." + s[4:],
        lambda s: "",
        lambda s: "tg1.",
        lambda s: "tg1." + "A" * 300_000,
    ],
)
def test_a_tampered_state_is_refused(world: World, tamper: Any) -> None:
    state = _first_round(world)
    assert_refused(
        call(
            world,
            "test_input_required_result_tampered_state",
            owner="alice",
            inputResponses=CONFIRM,
            requestState=tamper(state),
        )
    )


def test_a_state_is_bound_to_its_tool_and_arguments(world: World) -> None:
    state = _first_round(world, tool="test_input_required_result_request_state")
    assert_refused(
        call(
            world,
            "test_input_required_result_tampered_state",
            owner="alice",
            inputResponses=CONFIRM,
            requestState=state,
        )
    )
    first = call(world, "test_elicitation", {"message": "a"}, owner="alice")
    assert "requestState" not in first.result  # nothing to carry yet
    second = call(
        world,
        "test_input_required_result_multi_round",
        owner="alice",
        inputResponses={"step1": {"action": "accept", "content": {"name": "A"}}},
        requestState=_first_round(world, tool="test_input_required_result_multi_round"),
    )
    moved = second.result["requestState"]
    assert_refused(
        call(
            world,
            "test_input_required_result_multi_round",
            {"extra": 1},
            owner="alice",
            inputResponses={"step2": {"action": "accept", "content": {"color": "red"}}},
            requestState=moved,
        )
    )


def test_a_state_from_another_key_is_refused(world: World) -> None:
    other = World()
    state = _first_round(other)
    assert_refused(
        call(
            world,
            "test_input_required_result_tampered_state",
            owner="alice",
            inputResponses=CONFIRM,
            requestState=state,
        )
    )


def test_multi_round_hands_out_a_new_state_each_round(world: World) -> None:
    tool = "test_input_required_result_multi_round"
    first = call(world, tool)
    assert list(first.result["inputRequests"]) == ["step1"]
    second = call(
        world,
        tool,
        inputResponses={"step1": {"action": "accept", "content": {"name": "Alice"}}},
        requestState=first.result["requestState"],
    )
    assert list(second.result["inputRequests"]) == ["step2"]
    assert second.result["requestState"] != first.result["requestState"]
    done = call(
        world,
        tool,
        inputResponses={"step2": {"action": "accept", "content": {"color": "blue"}}},
        requestState=second.result["requestState"],
    )
    assert done.result["content"][0]["text"] == "Multi-round complete for Alice who likes blue"


def test_a_state_that_is_not_a_string_is_invalid_params(world: World) -> None:
    reply = call(world, "test_input_required_result_tampered_state", inputResponses=CONFIRM, requestState=7)
    assert reply.status == 400 and reply.error["code"] == -32602


def _states(keys: Callable[[], Sequence[bytes]]) -> RequestStates:
    """As the composition root builds them: the ring (and its keys) on first use."""
    return RequestStates(Lazy(lambda: KeyRing(keys())), ttl_ms=1000, clock=FakeClock())


def test_the_state_is_encrypted_and_the_key_read_once_when_first_needed() -> None:
    reads: list[int] = []

    def keys() -> list[bytes]:
        reads.append(1)
        return [b"k" * 32]

    states = _states(keys)
    assert reads == []
    carried = Carried({"q": {"action": "accept", "content": {"secret": "hunter2"}}}, {"step": 1})
    token = states.seal(carried, owner="alice", method="tools/call", target="t", arguments={"a": 1})
    assert "hunter2" not in token and "alice" not in token
    opened = states.open(token, owner="alice", method="tools/call", target="t", arguments={"a": 1})
    assert opened == carried
    # The same secret in another instance opens it: that is how every Lambda agrees.
    again = _states(lambda: [b"k" * 32])
    assert again.open(token, owner="alice", method="tools/call", target="t", arguments={"a": 1}) == carried
    for kwargs in (
        {"owner": "bob", "method": "tools/call", "target": "t", "arguments": {"a": 1}},
        {"owner": "alice", "method": "prompts/get", "target": "t", "arguments": {"a": 1}},
        {"owner": "alice", "method": "tools/call", "target": "u", "arguments": {"a": 1}},
        {"owner": "alice", "method": "tools/call", "target": "t", "arguments": {"a": 2}},
    ):
        with pytest.raises(RpcError):
            states.open(token, **kwargs)  # type: ignore[arg-type]
    assert reads == [1]


def test_key_rotation_opens_with_any_key_and_seals_with_the_first() -> None:
    old = _states(lambda: [b"o" * 32])
    token = old.seal(Carried({}, 1), owner="a", method="m", target="t", arguments={})
    ring = _states(lambda: [b"n" * 32, b"o" * 32])
    assert ring.open(token, owner="a", method="m", target="t", arguments={}).state == 1
    fresh = ring.seal(Carried({}, 2), owner="a", method="m", target="t", arguments={})
    with pytest.raises(RpcError):
        old.open(fresh, owner="a", method="m", target="t", arguments={})


def test_short_secrets_are_refused() -> None:
    weak = _states(lambda: [b"short"])
    with pytest.raises(ValueError, match="at least 32 bytes"):
        weak.seal(Carried({}), owner="a", method="m", target="t", arguments={})
    assert len(ephemeral_keys()[0]) == 32


class _Secret:
    """A secret being rotated: its current value first, then its previous one."""

    def __init__(self, *values: bytes) -> None:
        self.values = list(values)
        self.reads = 0

    def versions(self) -> list[bytes]:
        self.reads += 1
        return self.values[:2]

    def rotate(self, value: bytes) -> None:
        self.values.insert(0, value)


def _rotating(secret: _Secret, clock: Any) -> RequestStates:
    from taskgate.protocol.wire.request_state import RotatingKeys

    keys = RotatingKeys(
        lambda: KeyRing(secret.versions()), clock, max_age_ms=15 * 60_000, reread_after_ms=60_000
    )
    return RequestStates(keys, ttl_ms=3_600_000, clock=clock)


def test_an_instance_that_read_the_key_before_a_rotation_opens_states_sealed_after_it() -> None:
    """A rotation of the requestState secret breaks no multi-round call and no cursor (issue 29,
    n9): the previous key still opens, an instance that read the secret before the rotation
    reads it again when a state names a key it does not hold, and reseals with the new one."""
    clock = FakeClock()
    secret = _Secret(b"1" * 32)
    where = {"owner": "a", "method": "m", "target": "t", "arguments": {}}
    early = _rotating(secret, clock)  # a warm instance: read the secret before the rotation
    before = early.seal(Carried({}, "before"), **where)
    secret.rotate(b"2" * 32)
    late = _rotating(secret, clock)  # an instance started after it
    assert late.open(before, **where).state == "before"  # the previous key still opens
    after = late.seal(Carried({}, "after"), **where)
    assert early.open(after, **where).state == "after"  # read again at once: the new key
    assert secret.reads == 3
    # A key no version holds is refused, and reading again then waits a minute.
    stranger = _rotating(_Secret(b"3" * 32), clock).seal(Carried({}), **where)
    with pytest.raises(RpcError):
        early.open(stranger, **where)
    assert secret.reads == 3
    clock.advance(61_000)
    with pytest.raises(RpcError):
        early.open(stranger, **where)
    assert secret.reads == 4
    # After 15 minutes an instance reads the secret again, and seals with its current key.
    secret.rotate(b"4" * 32)
    clock.advance(15 * 60_000)
    resealed = early.seal(Carried({}, "later"), **where)
    assert _rotating(_Secret(b"4" * 32), clock).open(resealed, **where).state == "later"
