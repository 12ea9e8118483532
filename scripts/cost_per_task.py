#!/usr/bin/env python3
"""What one task costs, measured from real executions of the real state machine under moto.

For each scenario it counts Step Functions state transitions, worker Lambda
invocations, API requests, and DynamoDB reads and writes in capacity units,
then prices a million such tasks at us-east-1 list prices.

DynamoDB units are computed from item sizes as DynamoDB defines them (moto's
ReturnConsumedCapacity is a constant): a write is ceil(size/1 KB) WCU for the
larger of the item before and after, plus one per index entry it adds, changes
or removes; a strongly consistent read is ceil(size/4 KB) RCU, an index read half
that. Lambda durations are not measurable here (moto's emulation dominates), so
they are assumptions, printed with the prices.

Two scenarios follow one 2025-11-25 client (with its session) through an hour of
waiting on a task that works for that hour: one polling ``tasks/get`` at the
task's pollInterval, one waiting on ``tasks/result`` and reconnecting as the
stream's ``retry`` says. The hour passes on a virtual clock (the streams' own sleeps and
the client's waits advance it; every request and DynamoDB call is real), and the
seconds a stream holds its API Lambda while it waits are counted and priced.

Three more price a tool that works 45 seconds, for a host that calls it plainly (issue 18):
a 2025-11-25 client on its call's own stream, resumed piece by piece behind the HTTP API
(CALL_PIECE_SECONDS each); a 2026-07-28 client held on the streaming REST API; and, to
compare, the same work as a task polled every second. The worker's 45 s are the same in
all three and priced in each.

Three more rows compare waiting an hour on a job that runs elsewhere (a Batch job, a
child workflow, a partner's webhook): handed off (``ctx.hand_off``: the state machine
waits natively, nothing of taskgate runs; measured from a real hand-off of the example
pipeline, whose cost does not grow with the wait), against the same hour in a worker that
holds its Lambda (four 15-minute steps) or one that polls the job every minute (a step a
minute). The client's own polling is left out of all three: it is the same for each.

Five more price push against polling (issue 30): a 2026-07-28 client polling ``tasks/get`` for
an hour at the task's pollIntervalMs, and one host watching one, two or ten such tasks with
``subscriptions/listen`` on the streaming endpoint for the hour (a stream of LISTEN_SECONDS,
then a re-listen, until the hour is over; one batch read of the watched tasks a second; the
heartbeats, the place each stream holds and renews, and the REST API's requests included).
Each stream holds its function for its whole length: priced at the listen function's size
(``--listen-mb``, the StreamFunction's memory), as a watched task-hour beside polling's.

    python scripts/cost_per_task.py [--json out.json] [--only NAME] [--listen-mb 128]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import pathlib
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "layers" / "taskgate"), str(ROOT / "layers" / "tools")]
sys.path.append(str(ROOT / "cli"))
from taskgate_cli.protocol import Client2026, meta_2026  # noqa: E402
from taskgate_cli.transport import Reply  # noqa: E402

# us-east-1 list prices (checked 2026-11; on-demand DynamoDB after the Nov 2024 cut).
PRICES = {
    "transition": 0.025 / 1000,  # Step Functions Standard, per state transition
    "lambda_request": 0.20 / 1_000_000,
    "lambda_gb_second_arm": 0.0000133334,
    "ddb_wru": 0.625 / 1_000_000,  # per write request unit
    "ddb_rru": 0.125 / 1_000_000,  # per read request unit
    "http_api_request": 1.00 / 1_000_000,
    # REST API (the streaming endpoint, StreamingApi "true"): each 10 MB streamed counts as one.
    "rest_api_request": 3.50 / 1_000_000,
    "ddb_storage_gb_month": 0.25,
}
# Assumed, not measured: one worker step of a short tool, one API request.
WORKER_STEP = {"ms": 120, "mb": 1024}
API_REQUEST = {"ms": 25, "mb": 512}
# The function a listen stream holds for its whole length (StreamFunction), by default sized
# for waiting (--listen-mb); 512 MB is ApiFunction's default, for comparison.
LISTEN_MB = 192


_observer = threading.local()


class Meter:
    def __init__(self) -> None:
        self.wcu = 0.0
        self.rcu = 0.0
        self.ops: Counter[str] = Counter()
        self.max_item_bytes = 0

    def write(self, op: str, before: int, after: int, index_changes: int) -> None:
        if getattr(_observer, "active", False):
            return
        self.ops[op] += 1
        self.wcu += max(1, math.ceil(max(before, after) / 1024)) + index_changes
        self.max_item_bytes = max(self.max_item_bytes, after)

    def read(self, op: str, size: int, consistent: bool = True) -> None:
        if getattr(_observer, "active", False):
            return
        self.ops[op] += 1
        units = max(1, math.ceil(size / 4096))
        self.rcu += units if consistent else units / 2


INDEX_KEYS = {"byOwner": ("ownerId", "createdAt"), "byActive": ("activeOwner", "createdAt")}


def _index_changes(before: dict[str, Any] | None, after: dict[str, Any] | None) -> int:
    changes = 0
    for keys in INDEX_KEYS.values():
        b = tuple((before or {}).get(k) for k in keys)
        a = tuple((after or {}).get(k) for k in keys)
        b_in, a_in = all(v is not None for v in b), all(v is not None for v in a)
        if b_in and a_in and a != b:
            changes += 2  # delete + put in the index
        elif b_in != a_in:
            changes += 1
    return changes


@contextmanager
def metered(meter: Meter) -> Iterator[None]:
    from moto.dynamodb.models import DynamoDBBackend

    def attrs(item: Any) -> dict[str, Any] | None:
        return {k: v.value for k, v in item.attrs.items()} if item is not None else None

    def lookup(self: Any, table: str, key: dict[str, Any]) -> Any:
        try:
            return self.get_item(table, key)
        except Exception:
            return None

    originals: dict[str, Callable[..., Any]] = {}

    def wrap(name: str, fn: Callable[..., Any]) -> None:
        originals[name] = getattr(DynamoDBBackend, name)
        setattr(DynamoDBBackend, name, fn)

    from moto.dynamodb.responses import DynamoHandler

    put, update, get, delete, query = (
        getattr(DynamoDBBackend, n) for n in ("put_item", "update_item", "get_item", "delete_item", "query")
    )
    # Per thread: the worker, the state machine and the API call DynamoDB at once.
    flags = threading.local()

    class _State:
        def __getitem__(self, key: str) -> bool:
            return bool(getattr(flags, key, False))

        def __setitem__(self, key: str, value: bool) -> None:
            setattr(flags, key, value)

    state = _State()
    handler_originals: dict[str, Callable[..., Any]] = {}
    for op in ("put_item", "update_item", "delete_item"):
        # moto's own request handling reads the item around a write; that read is
        # part of the write, not a read the caller pays for.
        original = getattr(DynamoHandler, op)
        handler_originals[op] = original

        def handler(self: Any, *a: Any, __original: Callable[..., Any] = original, **k: Any) -> Any:
            flags.writing = True
            try:
                return __original(self, *a, **k)
            finally:
                flags.writing = False

        setattr(DynamoHandler, op, handler)

    # A GetItem costs a whole read unit per 4 KB when strongly consistent, half otherwise.
    handler_get = DynamoHandler.get_item
    handler_originals["get_item"] = handler_get

    def handler_get_item(self: Any, *a: Any, **k: Any) -> Any:
        flags.consistent = bool(self.body.get("ConsistentRead", False))
        return handler_get(self, *a, **k)

    DynamoHandler.get_item = handler_get_item

    # A BatchGetItem is priced as its items read one by one (consistent or not, as asked).
    handler_batch = DynamoHandler.batch_get_item
    handler_originals["batch_get_item"] = handler_batch

    def handler_batch_get_item(self: Any, *a: Any, **k: Any) -> Any:
        requests = self.body.get("RequestItems", {}).values()
        flags.consistent = all(bool(r.get("ConsistentRead", False)) for r in requests)
        flags.batch = True
        try:
            return handler_batch(self, *a, **k)
        finally:
            flags.batch = False

    DynamoHandler.batch_get_item = handler_batch_get_item

    def put_item(self: Any, table_name: str, item_attrs: dict[str, Any], *a: Any, **k: Any) -> Any:
        key = {"taskId": item_attrs["taskId"]}
        state["inside"] = True
        try:
            found = lookup(self, table_name, key)
            before_size, before_attrs = (found.size(), attrs(found)) if found is not None else (0, None)
            after = put(self, table_name, item_attrs, *a, **k)
        finally:
            state["inside"] = False
        meter.write("PutItem", before_size, after.size(), _index_changes(before_attrs, attrs(after)))
        return after

    def update_item(self: Any, table_name: str, key: dict[str, Any], *a: Any, **k: Any) -> Any:
        state["inside"] = True
        try:
            found = lookup(self, table_name, key)
            # moto updates the item object in place: measure it before the call.
            before_size, before_attrs = (found.size(), attrs(found)) if found is not None else (0, None)
            result = update(self, table_name, key, *a, **k)
            after = lookup(self, table_name, key)
        finally:
            state["inside"] = False
        meter.write(
            "UpdateItem",
            before_size,
            after.size() if after else 0,
            _index_changes(before_attrs, attrs(after)),
        )
        return result

    def get_item(self: Any, table_name: str, keys: dict[str, Any], *a: Any, **k: Any) -> Any:
        item = get(self, table_name, keys, *a, **k)
        if not state["inside"] and not state["writing"]:
            consistent = getattr(flags, "consistent", True)
            op = "BatchGetItem (per item)" if getattr(flags, "batch", False) else "GetItem"
            meter.read(op, item.size() if item is not None else 0, consistent=consistent)
        return item

    def delete_item(self: Any, table_name: str, key: dict[str, Any], *a: Any, **k: Any) -> Any:
        state["inside"] = True
        try:
            before = lookup(self, table_name, key)
        finally:
            state["inside"] = False
        state["inside"] = True
        try:
            result = delete(self, table_name, key, *a, **k)
        finally:
            state["inside"] = False
        meter.write("DeleteItem", before.size() if before else 0, 0, _index_changes(attrs(before), None))
        return result

    def query_(self: Any, *a: Any, **k: Any) -> Any:
        result = query(self, *a, **k)
        items = result[0] if isinstance(result, tuple) else []
        meter.read("Query", sum(i.size() for i in items) or 1, consistent=False)
        return result

    for name, fn in (
        ("put_item", put_item),
        ("update_item", update_item),
        ("get_item", get_item),
        ("delete_item", delete_item),
        ("query", query_),
    ):
        wrap(name, fn)
    try:
        yield
    finally:
        for name, fn in originals.items():
            setattr(DynamoDBBackend, name, fn)
        for name, fn in handler_originals.items():
            setattr(DynamoHandler, name, fn)


def _execution_states(runtime: Any, task_id: str) -> list[str]:
    import boto3

    sfn = boto3.client("stepfunctions", region_name="us-east-1")
    arn = runtime.state_machine_arn.replace(":stateMachine:", ":execution:") + ":" + task_id
    deadline = time.monotonic() + 30
    while sfn.describe_execution(executionArn=arn)["status"] == "RUNNING":
        if time.monotonic() > deadline:
            break
        time.sleep(0.02)
    events = sfn.get_execution_history(executionArn=arn, maxResults=1000)["events"]
    return [e["stateEnteredEventDetails"]["name"] for e in events if "stateEnteredEventDetails" in e]


class VirtualClock:
    """An hour that passes in seconds: the streams sleep and the client waits on it.
    ``held`` is what the server's sleeps add up to: time an API Lambda is held.
    ``at(t, fn)`` runs ``fn`` once, when the clock first reaches ``t``."""

    def __init__(self) -> None:
        self.now = 0.0
        self.held = 0.0
        self._due: list[tuple[float, Callable[[], None]]] = []

    def at(self, when: float, fn: Callable[[], None]) -> None:
        self._due.append((when, fn))

    def _tick(self) -> None:
        for when, fn in [d for d in self._due if d[0] <= self.now]:
            self._due.remove((when, fn))
            fn()

    def monotonic(self) -> float:
        return self.now

    def server_sleep(self, seconds: float) -> None:
        self.now += seconds
        self.held += seconds
        self._tick()

    def client_wait(self, seconds: float) -> None:
        self.now += seconds
        self._tick()


HOUR = 3600.0
_hour_over = threading.Event()


def _register_hour_tool() -> None:
    """A tool that works until the scenario's virtual hour is over. One tool for the process
    (the registry is global), so a second copy of this script (a test loads it per test) takes
    the tool's release event rather than its own."""
    global _hour_over
    from pydantic import BaseModel

    from taskgate.tools.registry import Tool, registry

    existing = registry.get("hour_of_work")
    if existing is not None:
        _hour_over = existing.fn.release  # type: ignore[attr-defined]
        return

    class NoInput(BaseModel):
        pass

    def hour_of_work(args: Any, ctx: Any) -> str:
        hour_of_work.release.wait(300)  # type: ignore[attr-defined]
        return "an hour of work"

    hour_of_work.release = _hour_over  # type: ignore[attr-defined]
    registry.add(Tool("hour_of_work", "Works until released.", NoInput, hour_of_work))


def _streams_on(server: Any, clock: VirtualClock) -> None:
    """The 2025 era's result streams and the 2026 era's held calls sleep and read time on ``clock``."""
    streams = next(e for e in server.eras if e.version == "2025-11-25")._streams
    streams._sleep = clock.server_sleep
    streams._monotonic = clock.monotonic
    held = next(e for e in server.eras if e.version == "2026-07-28")._held()
    held._sleep = clock.server_sleep
    held._monotonic = clock.monotonic


PLAIN_SECONDS = 45.0
_work_over = threading.Event()


def _register_plain_tool() -> None:
    """A tool declared to take 45 s, which works until the scenario's 45 virtual seconds are over."""
    from pydantic import BaseModel

    from taskgate.tools.registry import Tool, registry

    class NoInput(BaseModel):
        pass

    def forty_five_seconds(args: Any, ctx: Any) -> str:
        _work_over.wait(300)
        return "45 seconds of work"

    if registry.get("forty_five_seconds") is None:
        registry.add(
            Tool(
                "forty_five_seconds",
                "Works 45 s.",
                NoInput,
                forty_five_seconds,
                expected_seconds=PLAIN_SECONDS,
            )
        )


def _release_when_done(clock: VirtualClock) -> None:
    """At 45 virtual seconds the work ends; the clock waits (off the meter) until it has."""

    def release() -> None:
        from taskgate import wiring

        _work_over.set()
        _observer.active = True
        try:
            deadline = time.monotonic() + 30
            while wiring.root().store.count_active("cost", 1) and time.monotonic() < deadline:
                time.sleep(0.02)
        finally:
            _observer.active = False

    clock.at(PLAIN_SECONDS, release)


PLAIN_SCENARIOS = (
    "plain 45 s call, 2025 stream pieces",
    "plain 45 s call, 2026 held (REST API)",
    "45 s task polled every second",
)


def plain_call(name: str, server: Any) -> tuple[str, int, float]:
    """One host calls the 45-second tool plainly (or as a task polled every second, to
    compare): (task id, requests, held seconds)."""
    clock = VirtualClock()
    _streams_on(server, clock)
    _work_over.clear()
    _release_when_done(clock)
    requests = 0
    headers = {"content-type": "application/json", "accept": "application/json, text/event-stream"}
    call = {"name": "forty_five_seconds", "arguments": {}, "_meta": {"progressToken": "p"}}

    def post(method: str, params: dict[str, Any], extra: dict[str, str] | None = None) -> Any:
        nonlocal requests
        requests += 1
        body = {"jsonrpc": "2.0", "id": requests, "method": method, "params": params}
        return server.handle(body, {**headers, **(extra or {})}, "cost")

    def task_id_of_owner() -> str:
        _observer.active = True
        try:
            return _last_task()
        finally:
            _observer.active = False

    if name == "plain 45 s call, 2026 held (REST API)":
        # A plain call: the client does not declare the tasks extension.
        meta = {**meta_2026(tasks=False, elicitation=True), "progressToken": "p"}
        extra = {"mcp-protocol-version": "2026-07-28", "mcp-method": "tools/call", "mcp-name": call["name"]}
        reply = post("tools/call", {**call, "_meta": meta}, extra)
        assert reply.stream is not None, reply.body
        events = _sse("".join(reply.stream))
        assert any(e["data"] and "result" in e["data"] for e in events), events[-3:]
        return task_id_of_owner(), requests, clock.held
    init = post(
        "initialize",
        {
            "protocolVersion": "2025-11-25",
            "capabilities": {"tasks": {}},
            "clientInfo": {"name": "cost", "version": "0"},
        },
    )
    headers["mcp-session-id"] = init.headers["mcp-session-id"]
    headers["mcp-protocol-version"] = "2025-11-25"
    if name == "45 s task polled every second":
        task = post("tools/call", {**call, "task": {}}).body["result"]["task"]
        while True:
            clock.client_wait(task["pollInterval"] / 1000)
            task = post("tasks/get", {"taskId": task["taskId"]}).body["result"]
            if task["status"] in ("completed", "failed", "cancelled"):
                break
        assert "result" in post("tasks/result", {"taskId": task["taskId"]}).body
        return task["taskId"], requests, clock.held
    reply = post("tools/call", call)
    last: str | None = None
    retry_ms = 1000
    for _ in range(1000):
        events = _sse("".join(reply.stream)) if reply.stream is not None else []
        if any(e["data"] and "result" in e["data"] for e in events):
            return task_id_of_owner(), requests, clock.held
        last = ([e["id"] for e in events if e["id"]] or [last])[-1]
        retry_ms = ([e["retry"] for e in events if e["retry"] is not None] or [retry_ms])[-1]
        clock.client_wait(retry_ms / 1000)
        requests += 1
        assert last is not None
        reply = server.handle_get({**headers, "last-event-id": last}, "cost")
    raise AssertionError("the stream never delivered the result")


def _last_task() -> str:
    import boto3

    from taskgate import wiring

    items = boto3.client("dynamodb", region_name="us-east-1").scan(
        TableName=wiring.root().settings.task_table
    )["Items"]
    (task,) = [i["taskId"]["S"] for i in items if "#" not in i["taskId"]["S"]]
    return task


def _sse(text: str) -> list[dict[str, Any]]:
    from taskgate_cli.transport import parse_sse

    return [{"id": e.id, "retry": e.retry_ms, "data": e.message()} for e in parse_sse(text)]


def wait_one_hour(name: str, server: Any) -> tuple[str, int, float]:
    """A 2025-11-25 client (with its session) waits an hour on a task that works that
    long, polling tasks/get or on tasks/result: (task id, requests, held seconds)."""
    clock = VirtualClock()
    _streams_on(server, clock)
    _hour_over.clear()
    requests = 0
    headers = {"content-type": "application/json", "accept": "application/json, text/event-stream"}

    def post(method: str, params: dict[str, Any]) -> Any:
        nonlocal requests
        requests += 1
        return server.handle(
            {"jsonrpc": "2.0", "id": requests, "method": method, "params": params}, headers, "cost"
        )

    init = post(
        "initialize",
        {
            "protocolVersion": "2025-11-25",
            "capabilities": {"tasks": {}},
            "clientInfo": {"name": "cost", "version": "0"},
        },
    )
    headers["mcp-session-id"] = init.headers["mcp-session-id"]
    headers["mcp-protocol-version"] = "2025-11-25"
    task = post("tools/call", {"name": "hour_of_work", "arguments": {}, "task": {}}).body["result"]["task"]
    task_id, poll = task["taskId"], task["pollInterval"] / 1000
    if name == "polls tasks/get for an hour":
        while clock.now < HOUR:
            clock.client_wait(poll)
            post("tasks/get", {"taskId": task_id})
        _hour_over.set()
        _wait_store(task_id)
        assert "result" in post("tasks/result", {"taskId": task_id}).body
        return task_id, requests, clock.held
    reply = post("tasks/result", {"taskId": task_id})
    last: str | None = None
    retry_ms = 1000
    for _ in range(100_000):
        events = _sse("".join(reply.stream)) if reply.stream is not None else []
        if reply.stream is None or any(e["data"] and "result" in e["data"] for e in events):
            return task_id, requests, clock.held
        last = ([e["id"] for e in events if e["id"]] or [last])[-1]
        retry_ms = ([e["retry"] for e in events if e["retry"] is not None] or [retry_ms])[-1]
        clock.client_wait(retry_ms / 1000)
        if clock.now >= HOUR:
            _hour_over.set()
            _wait_store(task_id)
        requests += 1
        assert last is not None
        reply = server.handle_get({**headers, "last-event-id": last}, "cost")
    raise AssertionError("the stream never delivered the result")


POLL_2026 = "2026 client polls tasks/get for an hour"
LISTEN_TASKS = (1, 2, 10)
LISTEN_SCENARIOS = tuple(f"listen, {n} task{'s' if n > 1 else ''} watched for an hour" for n in LISTEN_TASKS)


def _post_2026(server: Any, counter: list[int], method: str, params: dict[str, Any]) -> Any:
    counter[0] += 1
    headers = {
        "content-type": "application/json",
        "accept": "application/json, text/event-stream",
        "mcp-protocol-version": "2026-07-28",
        "mcp-method": method,
    }
    if method == "tools/call":
        headers["mcp-name"] = params["name"]
    elif "taskId" in params:
        headers["mcp-name"] = params["taskId"]
    body = {"jsonrpc": "2.0", "id": counter[0], "method": method, "params": {**params, "_meta": meta_2026()}}
    return server.handle(body, headers, "cost")


def poll_or_listen_one_hour(name: str, server: Any) -> tuple[str, int, float]:
    """A 2026-07-28 client waits an hour on tasks that work that long: polling tasks/get at
    the task's pollIntervalMs, or watching one, two or ten of them with subscriptions/listen
    (streams of LISTEN_SECONDS, each followed by a re-listen): (a task id, requests, held s)."""
    clock = VirtualClock()
    # The era builds its listen streams with the first listen: built here, for the clock.
    listens = next(e for e in server.eras if e.version == "2026-07-28")._listens()
    listens._sleep = clock.server_sleep
    listens._monotonic = clock.monotonic
    _hour_over.clear()
    counter = [0]
    watched = LISTEN_TASKS[LISTEN_SCENARIOS.index(name)] if name in LISTEN_SCENARIOS else 1
    # Created off the meter: each row prices the waiting, the tasks' own writes are priced above.
    _observer.active = True
    try:
        ids = [
            _post_2026(server, counter, "tools/call", {"name": "hour_of_work", "arguments": {}}).body[
                "result"
            ]["taskId"]
            for _ in range(watched)
        ]
    finally:
        _observer.active = False
    counter[0] = 0
    if name == POLL_2026:
        poll = POLL_INTERVAL_SECONDS
        while clock.now < HOUR:
            clock.client_wait(poll)
            _post_2026(server, counter, "tasks/get", {"taskId": ids[0]})
    else:
        while clock.now < HOUR:
            reply = _post_2026(server, counter, "subscriptions/listen", {"notifications": {"taskIds": ids}})
            assert reply.stream is not None, reply.body
            text = "".join(reply.stream)
            # Each stream ran to its end and finished with its result: the client listens again.
            assert '"resultType":"complete","_meta"' in text, text[-500:]
    _hour_over.set()
    for task_id in ids:
        _wait_store(task_id)
    return ids[0], counter[0], clock.held


POLL_INTERVAL_SECONDS = 1.0


def _wait_store(task_id: str) -> None:
    """Until the task has ended (read off the meter: the client does not pay for it)."""
    from taskgate import wiring

    _observer.active = True
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            record = wiring.root().store.get(task_id)
            if record is not None and record.status.terminal:
                return
            time.sleep(0.02)
    finally:
        _observer.active = False
    raise AssertionError(f"{task_id} did not finish")


HOUR_SCENARIOS = ("polls tasks/get for an hour", "waits on tasks/result for an hour")
HANDED_OFF = "hands a job off, waits an hour"
# A worker waiting on a job itself, for comparison (the same prices, the durations stated):
# holding its Lambda the whole hour, in four steps of 15 minutes (Lambda's longest), or
# checking the job once a minute, a short step each time.
HELD_STEP = {"ms": 900_000, "mb": 1024}
HELD_STEPS = 4
POLL_STEPS = 60


def worker_rows(handed_off: dict[str, Any]) -> list[dict[str, Any]]:
    """The same hour in a worker that holds or polls, priced like the measured rows: the
    task's own writes (create, result) as the hand-off measured them, less its job's."""
    gb_s = lambda spec: spec["ms"] / 1000 * spec["mb"] / 1024  # noqa: E731
    base = {"api_requests": handed_off["api_requests"], "api_held_seconds": 0, "rcu": handed_off["rcu"]}
    held = {
        **base,
        "scenario": "worker holds its Lambda the hour",
        # RunTool, then RunTool again after each checkpoint that ran short of time.
        "transitions": HELD_STEPS,
        "worker_invocations": HELD_STEPS,
        "worker_gb_seconds": HELD_STEPS * gb_s(HELD_STEP),
        "wcu": 2 + HELD_STEPS - 1,  # the row, a checkpoint per extra step, the result
    }
    polled = {
        **base,
        "scenario": "worker polls the job each minute",
        # A step a minute: RunTool, then a Wait of 60 s before the next.
        "transitions": 2 * POLL_STEPS,
        "worker_invocations": POLL_STEPS,
        "worker_gb_seconds": POLL_STEPS * gb_s(WORKER_STEP),
        "wcu": 2 + POLL_STEPS,  # a checkpoint per look
    }
    return [held, polled]


def run_scenario(name: str, runtime: Any) -> dict[str, Any]:
    from taskgate import wiring

    server = wiring.root().server
    requests = 0
    held = 0.0

    class InProcess:
        """The API handler's server, called in process, as a transport for the CLI's client."""

        def send(
            self, method: str, headers: dict[str, str], body: Any = None, *, timeout: float | None = None
        ) -> Reply:
            nonlocal requests
            requests += 1
            reply = server.handle(body, headers, "cost")
            return Reply(reply.status, {}, reply.body)

    client = Client2026(InProcess(), meta=meta_2026(elicitation=True))
    rpc = client.request

    def wait(task_id: str, statuses: set[str], polls: list[int]) -> dict[str, Any]:
        # Waiting is done off the meter (store reads) so only the client's polls count.
        deadline = time.monotonic() + 30
        while True:
            record = wiring.root().store.get(task_id)
            assert record is not None
            if record.status.value in statuses:
                return {}
            assert time.monotonic() < deadline, record
            time.sleep(0.02)

    meter = Meter()
    with metered(meter):
        if name in HOUR_SCENARIOS:
            task_id, requests, held = wait_one_hour(name, server)
        elif name == POLL_2026 or name in LISTEN_SCENARIOS:
            task_id, requests, held = poll_or_listen_one_hour(name, server)
        elif name in PLAIN_SCENARIOS:
            task_id, requests, held = plain_call(name, server)
        elif name == "simple":
            task_id = rpc("tools/call", {"name": "slow_compute", "arguments": {"seconds": 0}})["taskId"]
            with paused(meter):
                wait(task_id, {"completed"}, [])
            rpc("tasks/get", {"taskId": task_id})
        elif name == "one input round":
            task_id = rpc("tools/call", {"name": "confirm_delete", "arguments": {"filename": "a"}})["taskId"]
            with paused(meter):
                wait(task_id, {"input_required"}, [])
            rpc("tasks/get", {"taskId": task_id})
            rpc(
                "tasks/update",
                {
                    "taskId": task_id,
                    "inputResponses": {"confirm_delete": {"action": "accept", "content": {"confirm": True}}},
                },
            )
            with paused(meter):
                wait(task_id, {"completed"}, [])
            rpc("tasks/get", {"taskId": task_id})
        elif name == "cancelled":
            task_id = rpc("tools/call", {"name": "slow_compute", "arguments": {"seconds": 30}})["taskId"]
            with paused(meter):
                time.sleep(0.3)
            rpc("tasks/cancel", {"taskId": task_id})
            rpc("tasks/get", {"taskId": task_id})
        elif name == HANDED_OFF:
            # The pipeline with no time in its stages: what a hand-off costs does not grow
            # with the wait (Step Functions waits natively; nothing is invoked or written).
            task_id = rpc("tools/call", {"name": "run_pipeline", "arguments": {"stage_seconds": 0}})["taskId"]
            with paused(meter):
                wait(task_id, {"completed"}, [])
        elif name == "polled 20 times":
            task_id = rpc("tools/call", {"name": "slow_compute", "arguments": {"seconds": 2}})["taskId"]
            for _ in range(20):
                rpc("tasks/get", {"taskId": task_id})
                with paused(meter):
                    time.sleep(0.1)
            with paused(meter):
                wait(task_id, {"completed"}, [])
        else:
            raise ValueError(name)
        with paused(meter):
            states = _execution_states(runtime, task_id)
    invocations = states.count("RunTool")
    record = wiring.root().store.get(task_id)
    return {
        "scenario": name,
        "status": record.status.value if record else "?",
        "states": states,
        "transitions": len(states),
        "worker_invocations": invocations,
        "api_requests": requests,
        # Seconds streams held their API Lambda while they waited (beyond each request's own).
        "api_held_seconds": held,
        # The tool's own run time in the worker, when it is not a short step.
        "worker_seconds": PLAIN_SECONDS if name in PLAIN_SCENARIOS else 0.0,
        "rest_api": name == "plain 45 s call, 2026 held (REST API)" or name in LISTEN_SCENARIOS,
        # What a held second costs: the listen function's size for a listen stream.
        "held_mb": LISTEN_MB if name in LISTEN_SCENARIOS else API_REQUEST["mb"],
        "watched_tasks": LISTEN_TASKS[LISTEN_SCENARIOS.index(name)] if name in LISTEN_SCENARIOS else 1,
        # The hours the row covers: streams run their full length, so the last one of the hour
        # ends past it (five of 840 s are 70 minutes); a task-hour is the row over these.
        "hours": held / HOUR if name in LISTEN_SCENARIOS else 1.0,
        "wcu": meter.wcu,
        "rcu": meter.rcu,
        "dynamodb_ops": dict(meter.ops),
        "item_bytes": meter.max_item_bytes,
    }


@contextmanager
def paused(meter: Meter) -> Iterator[None]:
    """Calls this thread makes meanwhile (our own waiting) are not the task's cost;
    the worker's and the state machine's, on their own threads, still are."""
    _observer.active = True
    try:
        yield
    finally:
        _observer.active = False


def price(row: dict[str, Any]) -> dict[str, float]:
    gb_s = lambda spec: spec["ms"] / 1000 * spec["mb"] / 1024  # noqa: E731
    worker_step = {**WORKER_STEP, "ms": max(WORKER_STEP["ms"], row.get("worker_seconds", 0) * 1000)}
    worker_gb_s = row.get("worker_gb_seconds", row["worker_invocations"] * gb_s(worker_step))
    front = PRICES["rest_api_request"] if row.get("rest_api") else PRICES["http_api_request"]
    parts = {
        "step_functions": row["transitions"] * PRICES["transition"],
        "worker_lambda": row["worker_invocations"] * PRICES["lambda_request"]
        + worker_gb_s * PRICES["lambda_gb_second_arm"],
        "api": row["api_requests"]
        * (front + PRICES["lambda_request"] + gb_s(API_REQUEST) * PRICES["lambda_gb_second_arm"])
        + row.get("api_held_seconds", 0)
        * row.get("held_mb", API_REQUEST["mb"])
        / 1024
        * PRICES["lambda_gb_second_arm"],
        "dynamodb": row["wcu"] * PRICES["ddb_wru"] + row["rcu"] * PRICES["ddb_rru"],
    }
    return {k: v * 1_000_000 for k, v in parts.items()}


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--json", help="also write the rows here")
    parser.add_argument("--only", action="append", help="run only this scenario (repeatable)")
    parser.add_argument(
        "--listen-mb", type=int, default=LISTEN_MB, help="the memory of the function a listen stream holds"
    )
    args = parser.parse_args()
    globals()["LISTEN_MB"] = args.listen_mb
    import logging

    logging.disable(logging.CRITICAL)
    from taskgate.local.runtime import EmbeddedAws

    _register_hour_tool()
    _register_plain_tool()
    rows = []
    scenarios = (
        "simple",
        "one input round",
        "cancelled",
        "polled 20 times",
        *HOUR_SCENARIOS,
        HANDED_OFF,
        *PLAIN_SCENARIOS,
        POLL_2026,
        *LISTEN_SCENARIOS,
    )
    for scenario in scenarios:
        if args.only and scenario not in args.only:
            continue
        if scenario == "plain 45 s call, 2026 held (REST API)" or scenario in LISTEN_SCENARIOS:
            os.environ.update(FRONT_STREAMING="true", FRONT_TIMEOUT_SECONDS="900")
        else:
            os.environ.pop("FRONT_STREAMING", None)
            os.environ.pop("FRONT_TIMEOUT_SECONDS", None)
        runtime = EmbeddedAws().start()
        try:
            row = run_scenario(scenario, runtime)
        finally:
            runtime.stop()
        row["usd_per_million"] = price(row)
        rows.append(row)
        if scenario == HANDED_OFF:
            for compared in worker_rows(row):
                compared["usd_per_million"] = price(compared)
                compared.setdefault("status", "computed")
                compared.setdefault("states", [])
                compared.setdefault("dynamodb_ops", {})
                compared.setdefault("item_bytes", 0)
                rows.append(compared)

    print(
        f"{'scenario':<42} {'transitions':>11} {'worker inv.':>11} {'API req.':>8} {'API held s':>10} {'WCU':>5} "
        f"{'RCU':>7} {'item B':>7} {'SFN $':>7} {'Lambda $':>9} {'API $':>9} {'DDB $':>7} {'total $/M tasks':>15}"
    )
    for r in rows:
        p = r["usd_per_million"]
        print(
            f"{r['scenario']:<42} {r['transitions']:>11} {r['worker_invocations']:>11} {r['api_requests']:>8} "
            f"{r['api_held_seconds']:>10g} {r['wcu']:>5g} {r['rcu']:>7g} {r['item_bytes']:>7} "
            f"{p['step_functions']:>7.2f} {p['worker_lambda']:>9.2f} {p['api']:>9.2f} {p['dynamodb']:>7.2f} "
            f"{sum(p.values()):>15.2f}"
        )
    print()
    for r in rows:
        print(f"{r['scenario']}: {' -> '.join(r['states'])}; DynamoDB ops {r['dynamodb_ops']}")
    by_name = {r["scenario"]: r for r in rows}
    if HANDED_OFF in by_name:
        mine = sum(by_name[HANDED_OFF]["usd_per_million"].values())
        print()
        for other in worker_rows(by_name[HANDED_OFF]):
            theirs = sum(by_name[other["scenario"]]["usd_per_million"].values())
            print(
                f"an hour's wait on a job, handed off: ${mine / 1e6:.6f} a task; a worker that "
                f"{other['scenario'].split(' ', 1)[1]}: ${theirs / 1e6:.6f} (handed off is 1/{theirs / mine:.0f} of it)"
            )
    listened = [r for r in rows if r["scenario"] in LISTEN_SCENARIOS]
    if listened:
        print(f"\na watched task-hour (the listen function at {LISTEN_MB} MB), beside polling tasks/get:")
        for r in rows:
            if r["scenario"] in (POLL_2026, HOUR_SCENARIOS[0], *LISTEN_SCENARIOS):
                per_task = sum(r["usd_per_million"].values()) / 1e6 / r["hours"] / r["watched_tasks"]
                print(f"  {r['scenario']:<42} ${per_task:.6f} a task-hour")
    print(
        f"\nprices: {PRICES}\nassumed durations: worker step {WORKER_STEP}, API request {API_REQUEST}; "
        f"for comparison, a held step {HELD_STEP} ({HELD_STEPS} an hour), a polling step {WORKER_STEP} ({POLL_STEPS} an hour)"
    )
    if args.json:
        pathlib.Path(args.json).write_text(json.dumps(rows, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
