"""Section 2 worker: warm per-request cost of taskgate's own code, AWS replaced by fakes.

Run by bench/run.py in a fresh process with the ApiFunction's environment
(``benchlib.lambda_env``); writes its figures as JSON to ``--out``. Everything is
timed in batches: one batch is ``--batch`` consecutive requests, set up untimed
beforehand; the rows take turns batch by batch (so a noisy moment hits all of them),
and each row reports the median, min and p90 of its per-batch µs/op.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchlib import median, p90
from taskgate_cli import protocol
from tests.fakes import CannedAws

from taskgate.clock import now_ms
from taskgate.config import Settings
from taskgate.domain.model import Outcome, TaskRecord, TaskStatus
from taskgate.http_app import create_app
from taskgate.protocol.server import McpServer
from taskgate.protocol.wire.exchange import HttpReply
from taskgate.root import Ports, Taskgate
from taskgate.testing.memory import Memory, MemoryDurationStore, MemorySessionStore
from taskgate.tools import Elicit

OWNERS = [f"bench-owner-{i}" for i in range(8)]


# --- the 2026-07-28 wire, as the CLI's client builds it (taskgate_cli.protocol) ----------
META = protocol.meta_2026(elicitation=True, client_info={"name": "taskgate-bench", "version": "0"})
headers_for = protocol.headers_2026


def envelope(method: str, params: dict[str, Any], msg_id: int) -> dict[str, Any]:
    return protocol.envelope(method, params, msg_id, META)


Call = tuple[dict[str, Any], dict[str, str], str]


def call(method: str, params: dict[str, Any], owner: str, msg_id: int = 1) -> Call:
    return envelope(method, params, msg_id), headers_for(method, params), owner


# --- task rows put straight into the fake store ------------------------------------------
def record(owner: str, status: TaskStatus = TaskStatus.WORKING, **changes: Any) -> TaskRecord:
    from taskgate.domain.service import new_task_id

    now = now_ms()
    base = TaskRecord(
        task_id=new_task_id(),
        owner=owner,
        tool="slow_compute",
        arguments={"seconds": 0, "label": "bench"},
        status=status,
        status_message="The operation is now in progress.",
        created_at_ms=now,
        last_updated_at_ms=now,
        ttl_ms=3_600_000,
        retention_ms=3_600_000,
        poll_interval_ms=1_000,
        expires_at_ms=now + 3_600_000,
    )
    return dataclasses.replace(base, **changes)


COMPLETED = {
    "outcome": Outcome.SUCCESS,
    "status_message": "The operation completed.",
    "result": {"content": [{"type": "text", "text": "bench finished after 0 seconds"}], "isError": False},
}
CONFIRM = Elicit(
    message="Delete a.txt?",
    properties={"confirm": {"type": "boolean", "description": "Delete the file"}},
    required=["confirm"],
).to_request()
ANSWER = {"confirm_delete": {"action": "accept", "content": {"confirm": True}}}


# --- in-process ASGI and Lambda calls --------------------------------------------------
async def asgi_post(app: Any, body: bytes, headers: dict[str, str], owner: str | None) -> tuple[int, bytes]:
    """One POST /mcp, in process. ``owner`` goes where Mangum puts the API Gateway event
    (``scope["aws.event"]``), as a Lambda authorizer's principal; None is anonymous."""
    scope: dict[str, Any] = {
        "type": "http",
        "asgi": {"version": "3.0", "spec_version": "2.3"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": "/mcp",
        "raw_path": b"/mcp",
        "root_path": "",
        "query_string": b"",
        "headers": [(k.encode(), v.encode()) for k, v in headers.items()]
        + [(b"host", b"127.0.0.1"), (b"content-length", str(len(body)).encode())],
        "client": ("127.0.0.1", 40000),
        "server": ("127.0.0.1", 80),
    }
    if owner is not None:
        scope["aws.event"] = {"requestContext": {"authorizer": {"lambda": {"owner": owner}}}}
    delivered = False
    status = 0
    chunks: list[bytes] = []

    async def receive() -> dict[str, Any]:
        nonlocal delivered
        if not delivered:
            delivered = True
            return {"type": "http.request", "body": body, "more_body": False}
        return {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        nonlocal status
        if message["type"] == "http.response.start":
            status = message["status"]
        elif message["type"] == "http.response.body":
            chunks.append(message.get("body", b""))

    await app(scope, receive, send)
    return status, b"".join(chunks)


# --- rows ---------------------------------------------------------------------------------
@dataclass
class Row:
    name: str
    path: str
    prepare: Callable[[int], list[Any]]
    run: Callable[[list[Any]], Any]
    check: Callable[[Any], bool]
    batch: int
    samples: list[float] = dataclasses.field(default_factory=list)
    checked: bool = False


def direct(server: McpServer) -> Callable[[list[Any]], HttpReply | None]:
    def run(items: list[Any]) -> HttpReply | None:
        handle = server.handle
        last = None
        for body, headers, owner in items:
            last = handle(body, headers, owner)
        return last

    return run


def ok_reply(reply: Any) -> bool:
    return (
        isinstance(reply, HttpReply)
        and reply.status == 200
        and reply.body is not None
        and "result" in reply.body
    )


def build_rows(batch: int, adapter_batch: int) -> list[Row]:
    memory = Memory(clock=now_ms)
    store = memory.store
    settings = Settings.from_env()
    server = Taskgate(settings, memory.ports(with_bucket=False)).server  # no audit hook: our code only

    # A completed task with its result inline, read over and over.
    done = record(OWNERS[0], TaskStatus.COMPLETED, **COMPLETED)
    store.put(done)

    def same(c: Call) -> Callable[[int], list[Any]]:
        return lambda n: [c] * n

    def creates(n: int) -> list[Any]:
        store.finish_all()  # keeps every owner under MAX_ACTIVE_TASKS_PER_OWNER
        args = {"name": "slow_compute", "arguments": {"seconds": 0, "label": "bench"}}
        return [call("tools/call", args, OWNERS[i % len(OWNERS)], i) for i in range(n)]

    def parked(n: int) -> list[Any]:
        out = []
        for i in range(n):
            r = record(
                OWNERS[i % len(OWNERS)],
                TaskStatus.INPUT_REQUIRED,
                task_token=f"token-{i}",
                input_requests={"confirm_delete": CONFIRM},
                status_message="Waiting for input.",
            )
            store.put(r)
            out.append(call("tasks/update", {"taskId": r.task_id, "inputResponses": ANSWER}, r.owner, i))
        return out

    def working(n: int) -> list[Any]:
        out = []
        for i in range(n):
            r = record(OWNERS[i % len(OWNERS)])
            store.put(r)
            out.append(call("tasks/cancel", {"taskId": r.task_id}, r.owner, i))
        return out

    run = direct(server)
    rows = [
        Row("tools/call -> task", "direct", creates, run, lambda r: ok_reply(r) and r.body["result"]["resultType"] == "task", batch),
        Row("tasks/get (completed, result inline)", "direct", same(call("tasks/get", {"taskId": done.task_id}, done.owner)), run, lambda r: ok_reply(r) and r.body["result"]["status"] == "completed", batch),
        Row("tasks/update (answers a parked task)", "direct", parked, run, ok_reply, batch),
        Row("tasks/cancel (working task)", "direct", working, run, ok_reply, batch),
    ]  # fmt: skip

    # The same requests through the Starlette app, as bytes in and bytes out.
    app = create_app(
        lambda: server, anonymous_owner=settings.anonymous_owner, max_body_bytes=settings.max_body_bytes
    )
    loop = asyncio.new_event_loop()
    anon_done = dataclasses.replace(done, task_id=done.task_id[:-4] + "cafe", owner=settings.anonymous_owner)
    store.put(anon_done)

    def asgi_items(method: str, params: dict[str, Any]) -> Callable[[int], list[Any]]:
        wire = (json.dumps(envelope(method, params, 7)).encode(), headers_for(method, params), None)
        return lambda n: [wire] * n

    def asgi_creates(n: int) -> list[Any]:
        store.finish_all()
        params = {"name": "slow_compute", "arguments": {"seconds": 0, "label": "bench"}}
        body = json.dumps(envelope("tools/call", params, 7)).encode()
        headers = headers_for("tools/call", params)
        # One principal per request in turn, so no owner reaches MAX_ACTIVE_TASKS_PER_OWNER.
        return [(body, headers, OWNERS[i % len(OWNERS)]) for i in range(n)]

    def asgi_run(items: list[Any]) -> tuple[int, bytes]:
        async def many() -> tuple[int, bytes]:
            last = (0, b"")
            for body, headers, owner in items:
                last = await asgi_post(app, body, headers, owner)
            return last

        return loop.run_until_complete(many())

    def asgi_ok(reply: Any) -> bool:
        return bool(reply[0] == 200 and "result" in json.loads(reply[1]))

    def hop_run(items: list[Any]) -> int:
        from starlette.concurrency import run_in_threadpool

        async def many() -> int:
            last = 0
            for _ in items:
                last = await run_in_threadpool(int, 1)
            return last

        return loop.run_until_complete(many())

    rows += [
        Row("run_in_threadpool(no-op) (baseline: the hop alone)", "ASGI", lambda n: [None] * n, hop_run, lambda r: r == 1, batch),
        Row("tasks/get (completed, result inline)", "ASGI", asgi_items("tasks/get", {"taskId": anon_done.task_id}), asgi_run, asgi_ok, batch),
        Row("tools/call -> task", "ASGI", asgi_creates, asgi_run, asgi_ok, batch),
    ]  # fmt: skip

    # Real adapters and boto3 clients; only the HTTP send is replaced (CannedAws).
    return [*rows, adapter_row(adapter_batch, settings)]


def adapter_row(batch: int, settings: Any) -> Row:
    import boto3
    from botocore.config import Config

    from taskgate.adapters.dynamodb_store import DynamoDBTaskStore
    from taskgate.adapters.stepfunctions_workflow import StepFunctionsWorkflow
    from taskgate.protocol.wire.request_state import ephemeral_keys

    canned = CannedAws()
    session = boto3.session.Session(region_name="us-east-1")
    config = Config(retries={"mode": "standard", "max_attempts": 3}, connect_timeout=2, read_timeout=10)
    ddb = session.client("dynamodb", config=config)
    sfn = session.client("stepfunctions", config=config)
    canned.attach(ddb)
    canned.attach(sfn)
    store = DynamoDBTaskStore(lambda: ddb, settings.task_table)
    sessions = MemorySessionStore()
    ports = Ports(
        store=lambda: store,
        workflow=lambda: StepFunctionsWorkflow(lambda: sfn, settings.state_machine_arn),
        sessions=lambda: sessions,
        blobs=lambda: None,
        request_state_keys=ephemeral_keys,
        durations=MemoryDurationStore,
    )
    server = Taskgate(settings, ports).server
    done = record(OWNERS[0])
    store.create(done)
    # Finish it by hand (CannedAws does not answer UpdateItem): a completed row with its result.
    item = canned.items[done.task_id]
    item.pop("activeOwner", None)
    item["status"] = {"S": "completed"}
    item["outcome"] = {"S": "success"}
    item["result"] = {"S": json.dumps(COMPLETED["result"])}
    item["statusMessage"] = {"S": "The operation completed."}

    get = call("tasks/get", {"taskId": done.task_id}, done.owner)
    return Row("tasks/get (GetItem)", "adapters+botocore", lambda n: [get] * n, direct(server), lambda r: ok_reply(r) and r.body["result"]["status"] == "completed", batch)  # fmt: skip


def measure(rows: list[Row], repeats: int, warmup: int = 2) -> None:
    for r in range(warmup + repeats):
        for row in rows:
            items = row.prepare(row.batch)
            t0 = time.perf_counter_ns()
            last = row.run(items)
            elapsed = time.perf_counter_ns() - t0
            if not row.checked:
                if not row.check(last):
                    raise SystemExit(f"warm: {row.path} {row.name}: unexpected reply {last!r}")
                row.checked = True
            if r >= warmup:
                row.samples.append(elapsed / row.batch / 1000)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--batch", type=int, default=200)
    parser.add_argument("--adapter-batch", type=int, default=50)
    parser.add_argument("--repeats", type=int, default=21)
    args = parser.parse_args()
    rows = build_rows(args.batch, args.adapter_batch)
    measure(rows, args.repeats)
    out = {
        "repeats": args.repeats,
        "rows": [
            {
                "name": row.name,
                "path": row.path,
                "batch": row.batch,
                "us_per_op_median": median(row.samples),
                "us_per_op_min": min(row.samples),
                "us_per_op_p90": p90(row.samples),
                "samples": row.samples,
            }
            for row in rows
        ],
    }
    args.out.write_text(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
