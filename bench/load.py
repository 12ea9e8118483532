#!/usr/bin/env python3
"""Load test for a taskgate server over the 2026-07-28 tasks extension (httpx + the CLI's wire).

For each ``--n N``: create N tasks at once (``slow_compute`` with seconds=1; with ``--mix``
every 5th is ``confirm_delete``, answered once it is ``input_required``), poll each with
``tasks/get`` at the server's ``pollIntervalMs`` (capped at 250 ms) until terminal or the
round's deadline, and check every result came back for the task that asked for it.

    .venv/bin/python bench/load.py --n 50 --n 200 --mix          # starts a local server
    .venv/bin/python bench/load.py --url http://127.0.0.1:3000/mcp --n 50

Reports p50/p95/p99/max latency per method, errors (non-200, JSON-RPC error, transport),
lost tasks (never terminal before the deadline, or "not found"), duplicated tasks (two
creates with one taskId, a wrong or changed result) and failed tasks. Exits 1 if any of
those is non-zero, 2 if the server could not be started. Results go to
bench/results/load-latest.json (``--out``).

A started server (taskgate.local.process) gets ``--owners`` bearer tokens
(TASKGATE_DEV_TOKENS) and tasks are spread over them round-robin: each owner may have at
most MAX_ACTIVE_TASKS_PER_OWNER (100 by default) tasks active at once. Requests are built
and read by the CLI's client code; httpx only carries them, one connection per request
(``Connection: close``), so no request waits for a pooled connection.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import datetime as dt
import functools
import itertools
import json
import pathlib
import re
import sys
import time
import uuid
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import httpx
from benchlib import RESULTS, percentiles
from taskgate_cli.protocol import envelope, headers_2026, meta_2026, response_of
from taskgate_cli.transport import ConnectionTrouble, reply_of

from taskgate.local import process

METHODS = ("tools/call", "tasks/get", "tasks/update")
TERMINAL = {"completed", "failed", "cancelled"}
POLL_CAP_MS = 250
PER_OWNER_LIMIT = 100
NOT_FOUND = -32602
PROGRESS = re.compile(r"^(?P<label>\S+): [\d.]+s of [\d.]+s$")
ANSWER = {"confirm_delete": {"action": "accept", "content": {"confirm": True}}}
MAX_RECORDED = 50  # error / problem entries kept per round in the JSON
META = meta_2026(elicitation=True, client_info={"name": "taskgate-load", "version": "0"})


@dataclass
class RpcError:
    method: str
    kind: str  # transport | http | jsonrpc | shape
    detail: str
    task: str
    status: int | None = None
    code: int | None = None


class Client:
    """Times every request and keeps every error; the wire is the CLI's."""

    def __init__(self, url: str, request_timeout: float) -> None:
        self.url = url
        self.request_timeout = request_timeout
        unbounded = httpx.Limits(max_connections=None, max_keepalive_connections=0)
        self.http = httpx.AsyncClient(limits=unbounded, timeout=request_timeout)
        self._ids = itertools.count(1)
        self.reset()

    def reset(self) -> None:
        self.t0 = time.monotonic()
        self.latency: dict[str, list[float]] = {m: [] for m in METHODS}
        self.errors: list[RpcError] = []

    def _error(self, err: RpcError) -> tuple[None, RpcError]:
        err.detail = err.detail[:500]
        self.errors.append(err)
        return None, err

    async def rpc(
        self, method: str, params: dict[str, Any], token: str | None, task: str
    ) -> tuple[dict[str, Any] | None, RpcError | None]:
        msg_id = next(self._ids)
        headers = {**headers_2026(method, params), "connection": "close"}
        if token:
            headers["authorization"] = f"Bearer {token}"
        body = json.dumps(envelope(method, params, msg_id, META)).encode()
        started = time.monotonic()
        try:
            async with asyncio.timeout(self.request_timeout):
                resp = await self.http.post(self.url, content=body, headers=headers)
        except (TimeoutError, httpx.HTTPError) as exc:
            return self._error(RpcError(method, "transport", f"{type(exc).__name__}: {exc}", task))
        self.latency.setdefault(method, []).append(time.monotonic() - started)
        status = resp.status_code
        try:
            message = response_of(reply_of(status, dict(resp.headers), resp.content, self.url), msg_id)
        except ConnectionTrouble as exc:
            return self._error(
                RpcError(method, "http" if status != 200 else "shape", exc.message, task, status)
            )
        error = message.get("error") if isinstance(message, dict) else None
        if status != 200 or error is not None:
            code = error.get("code") if isinstance(error, dict) else None
            kind = "http" if status != 200 else "jsonrpc"
            return self._error(RpcError(method, kind, resp.text, task, status, code))
        if (
            not isinstance(message, dict)
            or message.get("id") != msg_id
            or not isinstance(message.get("result"), dict)
        ):
            return self._error(RpcError(method, "shape", f"id {msg_id}: {resp.text}", task, status))
        return message["result"], None


Rpc = Callable[[str, dict[str, Any]], Awaitable[tuple[dict[str, Any] | None, RpcError | None]]]


@dataclass
class TaskRun:
    index: int
    tool: str
    arguments: dict[str, Any]
    expected: str
    token: str | None
    label: str
    task_id: str | None = None
    status: str | None = None
    polls: int = 0
    answered: bool = False
    outcome: str = "pending"  # ok | not_created | lost | not_found | failed | wrong
    problems: list[str] = field(default_factory=list)

    async def run(self, client: Client, deadline: float, start: asyncio.Event) -> None:
        await start.wait()
        rpc: Rpc = functools.partial(client.rpc, token=self.token, task=self.label)
        created, err = await rpc("tools/call", {"name": self.tool, "arguments": self.arguments})
        if (
            created is None
            or created.get("resultType") != "task"
            or not isinstance(created.get("taskId"), str)
        ):
            self.outcome = "not_created"
            self.problems.append(f"tools/call: {err.detail if err else json.dumps(created)[:300]}")
            return
        self.task_id, self.status = created["taskId"], str(created.get("status"))
        interval = min(int(created.get("pollIntervalMs") or 1000), POLL_CAP_MS) / 1000
        failures = 0
        while time.monotonic() + interval <= deadline and failures < 5 and self.outcome == "pending":
            await asyncio.sleep(interval)
            got, err = await rpc("tasks/get", {"taskId": self.task_id})
            self.polls += 1
            if got is None:
                failures += 1
                if err is not None and err.code == NOT_FOUND:
                    self.outcome = "not_found"
                continue
            failures = 0
            await self._seen(got, rpc)
        if self.outcome == "pending":
            self.outcome = "lost"
            self.problems.append(f"still {self.status} at the deadline after {self.polls} polls")

    async def _seen(self, got: dict[str, Any], rpc: Rpc) -> None:
        """One tasks/get: the right task, its progress its own, its question answered once,
        and its end checked (read twice: a terminal task stays put)."""
        self.status = str(got.get("status"))
        message = got.get("statusMessage")
        if got.get("taskId") != self.task_id:
            self.outcome = "wrong"
            self.problems.append(f"tasks/get for {self.task_id} answered {got.get('taskId')}")
        elif self.status == "working" and isinstance(message, str) and (m := PROGRESS.match(message)):
            if m.group("label") != self.label:
                self.problems.append(f"progress of another task: {message!r}")
        elif self.status == "input_required" and not self.answered:
            self.answered = self.tool == "confirm_delete" and "confirm_delete" in (
                got.get("inputRequests") or {}
            )
            if not self.answered:
                self.problems.append(f"unexpected input_required: {json.dumps(got)[:300]}")
            else:
                await rpc("tasks/update", {"taskId": self.task_id, "inputResponses": ANSWER})
        elif self.status in TERMINAL:
            again, _ = await rpc("tasks/get", {"taskId": self.task_id})
            self.outcome = self._judge(got, again)

    def _judge(self, got: dict[str, Any], again: dict[str, Any] | None) -> str:
        if self.status != "completed":
            self.problems.append(f"{self.status}: {got.get('statusMessage')!r}")
            return "failed"
        if _text_of(got) != self.expected:
            self.problems.append(f"result {_text_of(got)!r}, expected {self.expected!r}")
            return "wrong"
        if again is not None and (again.get("status") != "completed" or _text_of(again) != self.expected):
            self.problems.append(f"changed after completing: {json.dumps(again)[:1000]}")
            return "wrong"
        return "wrong" if self.problems else "ok"


def _text_of(task: dict[str, Any]) -> str | None:
    content = (task.get("result") or {}).get("content")
    if isinstance(content, list) and content and isinstance(content[0], dict):
        text = content[0].get("text")
        return text if isinstance(text, str) else None
    return None


def plan(n: int, mix: bool, tokens: list[str | None], run_id: str) -> list[TaskRun]:
    runs = []
    for i in range(n):
        token, label = tokens[i % len(tokens)], f"load-{run_id}-n{n}-{i}"
        if mix and i % 5 == 4:
            name = f"{label}.txt"
            runs.append(TaskRun(i, "confirm_delete", {"filename": name}, f"Deleted {name}", token, name))
        else:
            expected = f"{label} finished after 1 seconds"
            runs.append(TaskRun(i, "slow_compute", {"seconds": 1, "label": label}, expected, token, label))
    return runs


async def run_round(
    n: int, client: Client, mix: bool, tokens: list[str | None], deadline_s: float, run_id: str
) -> dict[str, Any]:
    runs = plan(n, mix, tokens, run_id)
    client.reset()
    start = asyncio.Event()
    jobs = [asyncio.create_task(r.run(client, time.monotonic() + deadline_s, start)) for r in runs]
    await asyncio.sleep(0)
    start.set()
    _, pending = await asyncio.wait(jobs, timeout=deadline_s + client.request_timeout + 10)
    for job in pending:
        job.cancel()
    for job in jobs:
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await job
    return {
        "n": n,
        "mix": mix,
        "owners": len(tokens),
        "deadline_s": deadline_s,
        "wall_s": round(time.monotonic() - client.t0, 2),
        **_tally(runs),
        "errors": len(client.errors),
        "latency": {
            m: percentiles(client.latency.get(m, []))
            | {"errors": sum(1 for e in client.errors if e.method == m)}
            for m in METHODS
        },
        "errors_detail": [e.__dict__ for e in client.errors[:MAX_RECORDED]],
    }


def _tally(runs: list[TaskRun]) -> dict[str, Any]:
    """What became of the round's tasks: every one verified, or why not."""
    ids = Counter(r.task_id for r in runs if r.task_id)
    outcomes = Counter("lost" if r.outcome == "pending" else r.outcome for r in runs)
    return {
        "created": sum(1 for r in runs if r.task_id),
        "completed": outcomes["ok"],
        "confirm_delete_tasks": sum(1 for r in runs if r.tool == "confirm_delete"),
        "answered": sum(1 for r in runs if r.answered),
        "lost": outcomes["lost"] + outcomes["not_found"],
        "duplicated": sum(c - 1 for c in ids.values() if c > 1) + outcomes["wrong"],
        "failed": outcomes["failed"],
        "problem_tasks": [
            {
                "index": r.index,
                "tool": r.tool,
                "taskId": r.task_id,
                "outcome": r.outcome,
                "problems": r.problems,
            }
            for r in runs
            if r.outcome != "ok"
        ][:MAX_RECORDED],
    }


def print_round(r: dict[str, Any]) -> None:
    print(
        f"\n== N={r['n']}  mix={'on' if r['mix'] else 'off'}  owners={r['owners']}  "
        f"wall={r['wall_s']}s (deadline {r['deadline_s']:g}s)  created={r['created']}/{r['n']}  "
        f"completed+verified={r['completed']}/{r['n']}  answered={r['answered']}/{r['confirm_delete_tasks']}"
    )
    print(f"{'method':<14}{'count':>7}{'p50 ms':>10}{'p95 ms':>10}{'p99 ms':>10}{'max ms':>10}{'errors':>8}")
    for method, s in r["latency"].items():
        cells = "".join(
            f"{s[k]:>10.1f}" if k in s else f"{'-':>10}" for k in ("p50_ms", "p95_ms", "p99_ms", "max_ms")
        )
        print(f"{method:<14}{s['count']:>7}{cells}{s['errors']:>8}")
    for e in r["errors_detail"][:5]:
        print(f"    ! {e}")
    for t in r["problem_tasks"][:5]:
        print(
            f"    ? task {t['index']} {t['tool']} {t['taskId']}: {t['outcome']} {[x[:400] for x in t['problems'][:3]]}"
        )
    print(
        f"SUMMARY n={r['n']} errors={r['errors']} lost={r['lost']} duplicated={r['duplicated']} "
        f"failed={r['failed']} completed={r['completed']}/{r['n']}"
    )


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--url", help="a running server's /mcp URL (default: start one)")
    parser.add_argument("--n", type=int, action="append", help="tasks per round; repeat for more rounds")
    parser.add_argument("--mix", action="store_true", help="every 5th task is confirm_delete")
    parser.add_argument("--owners", type=int, default=4, help="owners (dev tokens) for a started server")
    parser.add_argument("--token", action="append", help="bearer token for --url; repeat to spread owners")
    parser.add_argument("--deadline", type=float, help="seconds per round (default max(60, 0.6*N))")
    parser.add_argument("--request-timeout", type=float, default=30.0)
    parser.add_argument("--out", type=pathlib.Path, default=RESULTS / "load-latest.json")
    parser.add_argument("--server-log", type=pathlib.Path, default=RESULTS / "load-server.log")
    args = parser.parse_args(argv)
    args.n = args.n or [50]
    if any(n < 1 or n > 5000 for n in args.n) or args.owners < 1:
        parser.error("--n must be between 1 and 5000, --owners at least 1")
    return args


async def amain(args: argparse.Namespace) -> int:
    run_id = uuid.uuid4().hex[:8]
    server: process.LocalServer | None = None
    tokens: list[str | None] = list(args.token or [None])
    url = args.url
    if url is None:
        owners = [f"bench-token-{i}" for i in range(args.owners)]
        dev_tokens = ",".join(f"{t}=bench-owner-{i}" for i, t in enumerate(owners))
        server = process.start(args.server_log, env={"TASKGATE_DEV_TOKENS": dev_tokens})
        try:
            server.wait()
        except RuntimeError as exc:
            server.stop()
            print(exc, file=sys.stderr)
            return 2
        url, tokens = server.url, list(owners)
        print(f"started {url} (pid {server.proc.pid}, log {args.server_log}), {args.owners} owners")
    if any(-(-n // len(tokens)) > PER_OWNER_LIMIT for n in args.n):
        print(
            f"warning: more than {PER_OWNER_LIMIT} tasks per owner in flight count as -32000 errors",
            file=sys.stderr,
        )
    client = Client(url, args.request_timeout)
    rounds: list[dict[str, Any]] = []
    try:
        for n in args.n:
            rounds.append(
                await run_round(n, client, args.mix, tokens, args.deadline or max(60.0, 0.6 * n), run_id)
            )
            print_round(rounds[-1])
    finally:
        await client.http.aclose()
        if server:
            server.stop()
    ok = len(rounds) == len(args.n) and all(
        r["errors"] == r["lost"] == r["duplicated"] == r["failed"] == 0 for r in rounds
    )
    report = {
        "generated_at": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "argv": sys.argv[1:],
        "url": url,
        "poll_cap_ms": POLL_CAP_MS,
        "pass": ok,
        "rounds": rounds,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2) + "\n")
    print(f"\n{'PASS' if ok else 'FAIL'}: results in {args.out}")
    return 0 if ok else 1


def main(argv: list[str] | None = None) -> int:
    return asyncio.run(amain(parse_args(argv)))


if __name__ == "__main__":
    sys.exit(main())
