"""Held calls and their owner's share (red team round three, L2). On a front that streams, a
2026 plain call is held open for as long as its tool runs. Locally one owner holding 18 of
them left every other owner's quick call a 503 (their waits took the process's slots without
an owner); deployed, each is a Lambda execution of its own, so one owner took the account's
concurrency from everyone. Each owner now has MAX_HELD_CALLS_PER_OWNER places, counted in the
table (one lease per place, renewed while the call lasts, deleted when it ends, running out
when its holder dies); a call past them is handed over at once as a task handle."""

from __future__ import annotations

import json
from typing import Any

from taskgate.domain.model import TaskStatus
from tests.fakes import World
from tests.mcp_client import envelope, headers_for


def _held(world: World, owner: str, msg_id: int, arguments: dict[str, Any] | None = None) -> Any:
    params = {"name": "long_job", "arguments": arguments or {"minutes": 0.5, "steps": 2}}
    body = envelope("tools/call", params, msg_id, tasks=False)
    return world.handle(body, headers_for("tools/call", params), owner=owner)


def _first_message(reply: Any) -> dict[str, Any] | None:
    for chunk in reply.stream:
        if chunk.startswith("event: message"):
            return json.loads(chunk.split("data: ", 1)[1])  # type: ignore[no-any-return]
        if chunk.startswith(": keep-alive"):
            return None  # held: nothing yet
    return None


def _streaming_world(**settings: Any) -> World:
    world = World(front_streaming=True, front_timeout_seconds=900, **settings)
    world.workflow.runnable.clear()
    return world


def test_an_owner_holds_at_most_its_places_and_the_next_call_gets_its_handle_at_once() -> None:
    world = _streaming_world(max_held_calls_per_owner=3)
    open_calls = []
    for n in range(3):
        reply = _held(world, "ann", n + 1)
        world.workflow.runnable.clear()  # each tool keeps running
        assert _first_message(reply) is None, n  # held open
        open_calls.append(reply)
    fourth = _held(world, "ann", 4)
    message = _first_message(fourth)
    assert message is not None and message["id"] == 4
    handle = message["result"]["structuredContent"]["handle"]
    assert world.store.records[handle].status is TaskStatus.WORKING  # its work goes on
    # Another owner is not held back by ann's calls.
    bob = _held(world, "bob", 5)
    world.workflow.runnable.clear()
    assert _first_message(bob) is None
    # A place is given back when a call ends: ann may hold another.
    open_calls[0].stream.close()
    again = _held(world, "ann", 6)
    world.workflow.runnable.clear()
    assert _first_message(again) is None


def test_with_handles_off_a_call_past_the_places_is_refused_and_nothing_runs_for_it() -> None:
    world = _streaming_world(max_held_calls_per_owner=1, call_handles=False)
    first = _held(world, "ann", 1)
    world.workflow.runnable.clear()
    assert _first_message(first) is None
    second = _held(world, "ann", 2)
    message = _first_message(second)
    assert message is not None and "already have 1 calls held open" in message["error"]["message"]
    assert sorted(r.status.value for r in world.store.records.values()) == ["cancelled", "working"]


def test_a_place_whose_holder_died_is_free_once_its_lease_runs_out() -> None:
    from taskgate.domain.holds import Holds
    from taskgate.testing.memory import MemorySessionStore

    store, now = MemorySessionStore(), [1_000_000]
    holds = Holds(store, places=1, lease_ms=90_000, clock=lambda: now[0])
    held = holds.take("ann")
    assert held is not None and holds.take("ann") is None
    now[0] += 60_000
    assert held.renew()  # its holder is alive: the lease moves on
    now[0] += 60_000
    assert holds.take("ann") is None
    now[0] += 31_000  # no renewal for the whole lease: the holder died
    assert holds.take("ann") is not None
    assert not held.renew()  # and the dead holder's lease is not taken back


def test_locally_one_owners_held_calls_leave_other_owners_their_slots() -> None:
    """The local half of L2: a held call's wait takes a slot of its owner's share, so four
    of ann's calls waiting at once leave bob a slot (size 4, 2 per owner). Before, each wait
    took a slot of nobody's, and bob's quick call was a 503."""
    world = _streaming_world(max_inline_calls=4, max_inline_calls_per_owner=2, max_held_calls_per_owner=10)
    slots = world.root.inline
    streams = [_held(world, "ann", n + 1).stream for n in range(4)]
    seen: list[str | None] = []

    def wait() -> None:
        # Each of ann's calls, while it waits, lets the next one start waiting: all four at once.
        depth = len(seen)
        if depth < len(streams) - 1:
            seen.append("waiting")
            next(streams[depth + 1])
            return
        refused = slots.take("bob")
        seen.append(refused)
        if refused is None:
            slots.release("bob")

    world.memory.on_wait = wait
    next(streams[0])
    assert seen[-1] is None, seen[-1]  # bob's quick call finds a slot
