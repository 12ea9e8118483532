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

With ``--start-server`` (the default without ``--url``) the server gets ``--owners`` bearer
tokens (TASKGATE_DEV_TOKENS) and tasks are spread over them round-robin: each owner may have
at most MAX_ACTIVE_TASKS_PER_OWNER (100 by default) tasks active at once.

Requests are built and read by the CLI's client code (taskgate_cli.protocol: envelope,
routing headers, JSON or event-stream replies); httpx only carries them, one connection
per request (``Connection: close``), so no request waits for a pooled connection.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import datetime as dt
import functools
import itertools
import json
import os
import pathlib
import re
import resource
import subprocess
import sys
import time
import uuid
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, TextIO

import httpx
from benchlib import free_port
from taskgate_cli.protocol import envelope, headers_2026, meta_2026, response_of
from taskgate_cli.transport import ConnectionTrouble, reply_of

ROOT = pathlib.Path(__file__).resolve().parents[1]
METHODS = ("tools/call", "tasks/get", "tasks/update")
TERMINAL = {"completed", "failed", "cancelled"}
POLL_CAP_MS = 250
DEFAULT_PER_OWNER_LIMIT = 100
NOT_FOUND = -32602
PROGRESS = re.compile(r"^(?P<label>\S+): [\d.]+s of [\d.]+s$")
ANSWER = {"confirm_delete": {"action": "accept", "content": {"confirm": True}}}
MAX_RECORDED = 50  # error / problem entries kept per round in the JSON
META = meta_2026(elicitation=True, client_info={"name": "taskgate-load", "version": "0"})


# --------------------------------------------------------------------------- stats


def percentile(values: list[float], q: float) -> float:
    """Nearest-rank percentile of ``values`` (seconds in, whatever out)."""
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[int(max(1, -(-len(ordered) * q // 100))) - 1]


def summarize(values: list[float]) -> dict[str, Any]:
    """Latency summary in milliseconds."""
    if not values:
        return {"count": 0}
    ms = {f"p{q}_ms": round(percentile(values, q) * 1000, 1) for q in (50, 95, 99)}
    return (
        {"count": len(values)}
        | ms
        | {
            "max_ms": round(max(values) * 1000, 1),
            "mean_ms": round(sum(values) / len(values) * 1000, 1),
        }
    )


def parse_iso_ms(value: Any) -> float | None:
    try:
        return dt.datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp() * 1000
    except (AttributeError, ValueError):
        return None


# --------------------------------------------------------------------------- server process


class ProcWatch:
    """CPU and thread counts of a local process, read from /proc (Linux only; else no-op)."""

    def __init__(self, pid: int | None) -> None:
        self.pid = pid
        self.ticks = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100

    def _stat(self, path: str) -> list[str] | None:
        try:
            raw = pathlib.Path(path).read_text()
        except OSError:
            return None
        return raw[raw.rindex(")") + 2 :].split()  # comm may contain spaces

    def _cpu(self, path: str) -> float | None:
        fields = self._stat(path) if self.pid is not None else None
        return (int(fields[11]) + int(fields[12])) / self.ticks if fields else None

    def cpu_seconds(self) -> float | None:
        return self._cpu(f"/proc/{self.pid}/stat")

    def threads(self) -> int | None:
        fields = self._stat(f"/proc/{self.pid}/stat") if self.pid is not None else None
        return int(fields[17]) if fields else None

    def per_thread(self) -> dict[int, float]:
        out: dict[int, float] = {}
        with contextlib.suppress(OSError):
            for entry in pathlib.Path(f"/proc/{self.pid}/task").iterdir() if self.pid else ():
                if (cpu := self._cpu(str(entry / "stat"))) is not None:
                    out[int(entry.name)] = cpu
        return out


@dataclass
class Server:
    proc: subprocess.Popen[bytes]
    url: str
    log_path: pathlib.Path
    log_file: TextIO
    tokens: list[str]

    def log_size(self) -> int:
        self.log_file.flush()
        return self.log_path.stat().st_size if self.log_path.exists() else 0

    def log_since(self, offset: int) -> str:
        with contextlib.suppress(OSError), self.log_path.open("rb") as f:
            f.seek(offset)
            return f.read().decode("utf-8", "replace")
        return ""

    def stop(self) -> int | None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=10)
        self.log_file.close()
        return self.proc.returncode


async def start_server(owners: int, log_path: pathlib.Path, timeout: float = 60.0) -> Server:
    port = free_port()
    tokens = [f"bench-token-{i}" for i in range(owners)]
    env = {
        **os.environ,
        "PORT": str(port),
        "HOST": "127.0.0.1",
        "PYTHONPATH": "layers/taskgate:layers/tools",
        "TOOL_MODULES": "taskgate_conformance,taskgate_tools",  # slow_compute and confirm_delete
        "TASKGATE_DEV_TOKENS": ",".join(f"{t}=bench-owner-{i}" for i, t in enumerate(tokens)),
    }
    env.pop("TASKGATE_BACKEND", None)
    log_path.parent.mkdir(parents=True, exist_ok=True)
    log_file = log_path.open("w")
    proc = subprocess.Popen(
        [sys.executable, "-m", "taskgate.local"], cwd=ROOT, env=env, stdout=log_file, stderr=subprocess.STDOUT
    )
    server = Server(proc, f"http://127.0.0.1:{port}/mcp", log_path, log_file, tokens)
    deadline = time.monotonic() + timeout
    async with httpx.AsyncClient(timeout=2.0) as http:
        while proc.poll() is None and time.monotonic() < deadline:
            with contextlib.suppress(httpx.HTTPError):
                if (await http.get(f"http://127.0.0.1:{port}/health")).status_code == 200:
                    return server
            await asyncio.sleep(0.1)
    server.stop()
    raise RuntimeError(f"server did not start (exit {proc.returncode}):\n{log_path.read_text()[-4000:]}")


# --------------------------------------------------------------------------- the client


@dataclass
class RpcError:
    method: str
    kind: str  # transport | http | jsonrpc | shape
    detail: str
    at_s: float
    task: str
    status: int | None = None
    code: int | None = None

    def as_dict(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if v is not None}


class Client:
    """Times every request and keeps every error; the wire is the CLI's."""

    def __init__(self, url: str, request_timeout: float) -> None:
        if not url.startswith("http://"):
            raise SystemExit(f"only http:// URLs are supported, got {url!r}")
        self.url = url
        self.request_timeout = request_timeout
        unbounded = httpx.Limits(max_connections=None, max_keepalive_connections=0)
        self.http = httpx.AsyncClient(limits=unbounded, timeout=request_timeout)
        self._ids = itertools.count(1)
        self.reset()

    def reset(self) -> None:
        self.t0 = time.monotonic()
        self.latency: dict[str, list[float]] = {m: [] for m in METHODS}
        self.timeline: list[tuple[float, str, float]] = []  # (seconds since start, method, latency)
        self.errors: list[RpcError] = []
        self.status_codes: Counter[int] = Counter()

    def _error(self, method: str, kind: str, detail: str, task: str, **extra: Any) -> RpcError:
        err = RpcError(method, kind, detail[:500], round(time.monotonic() - self.t0, 3), task, **extra)
        self.errors.append(err)
        return err

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
        except (TimeoutError, httpx.TimeoutException):
            return None, self._error(method, "transport", f"timeout after {self.request_timeout}s", task)
        except httpx.HTTPError as exc:
            return None, self._error(method, "transport", f"{type(exc).__name__}: {exc}", task)
        latency = time.monotonic() - started
        self.latency.setdefault(method, []).append(latency)
        self.timeline.append((started - self.t0, method, latency))
        status = resp.status_code
        self.status_codes[status] += 1
        try:
            message = response_of(reply_of(status, dict(resp.headers), resp.content, self.url), msg_id)
        except ConnectionTrouble as exc:
            return None, self._error(
                method, "http" if status != 200 else "shape", exc.message, task, status=status
            )
        if not isinstance(message, dict):
            return None, self._error(
                method, "shape", f"not an object: {resp.text[:300]}", task, status=status
            )
        error = message.get("error")
        if status != 200 or error is not None:
            code = error.get("code") if isinstance(error, dict) else None
            kind = "http" if status != 200 else "jsonrpc"
            return None, self._error(method, kind, resp.text, task, status=status, code=code)
        if message.get("id") != msg_id or not isinstance(message.get("result"), dict):
            return None, self._error(method, "shape", f"id {msg_id}: {resp.text}", task, status=status)
        return message["result"], None


# --------------------------------------------------------------------------- one task


@dataclass
class TaskRun:
    index: int
    tool: str
    arguments: dict[str, Any]
    expected: str
    token: str | None
    label: str
    task_id: str | None = None
    sent_s: float | None = None  # when tools/call was sent, seconds since round start
    created_s: float | None = None  # when tools/call returned
    terminal_s: float | None = None
    first_progress_s: float | None = None
    status: str | None = None
    last_message: str | None = None
    result_text: str | None = None
    server_run_ms: float | None = None
    polls: int = 0
    answered: bool = False
    transitions: list[str] = field(default_factory=list)
    outcome: str = "pending"  # ok | not_created | lost | not_found | failed | wrong
    problems: list[str] = field(default_factory=list)


async def run_task(run: TaskRun, client: Client, deadline: float, start: asyncio.Event) -> None:
    await start.wait()
    rpc = functools.partial(client.rpc, token=run.token, task=run.label)
    run.sent_s = time.monotonic() - client.t0
    created, err = await rpc("tools/call", {"name": run.tool, "arguments": run.arguments})
    if created is None:
        run.outcome = "not_created"
        run.problems.append(f"tools/call: {err.detail if err else '?'}")
        return
    run.created_s = time.monotonic() - client.t0
    task_id = created.get("taskId")
    if created.get("resultType") != "task" or not isinstance(task_id, str):
        client._error("tools/call", "shape", f"not a task: {json.dumps(created)[:300]}", run.label)
        run.outcome = "not_created"
        return
    run.task_id, run.status = task_id, str(created.get("status"))
    run.transitions.append(run.status)
    interval = min(int(created.get("pollIntervalMs") or 1000), POLL_CAP_MS) / 1000
    consecutive_errors = 0
    while time.monotonic() + interval <= deadline:
        await asyncio.sleep(interval)
        got, err = await rpc("tasks/get", {"taskId": task_id})
        run.polls += 1
        if got is None:
            if err is not None and err.code == NOT_FOUND:
                run.outcome = "not_found"
                run.problems.append(f"tasks/get said not found: {err.detail}")
                return
            consecutive_errors += 1
            if consecutive_errors >= 5:
                run.problems.append("5 tasks/get errors in a row; gave up")
                break
            continue
        consecutive_errors = 0
        if got.get("taskId") != task_id:
            run.outcome = "wrong"
            run.problems.append(f"tasks/get for {task_id} answered taskId {got.get('taskId')}")
            return
        status = str(got.get("status"))
        if status != run.status:
            run.transitions.append(status)
            run.status = status
        interval = min(int(got.get("pollIntervalMs") or interval * 1000), POLL_CAP_MS) / 1000
        message = got.get("statusMessage")
        run.last_message = message if isinstance(message, str) else None
        if status == "working" and isinstance(message, str) and (m := PROGRESS.match(message)):
            if run.first_progress_s is None:
                run.first_progress_s = time.monotonic() - client.t0
            if m.group("label") != run.label:
                run.problems.append(f"progress of another task: {message!r}")
        if status == "input_required":
            if run.tool != "confirm_delete" or "confirm_delete" not in (got.get("inputRequests") or {}):
                run.problems.append(f"unexpected input_required: {json.dumps(got)[:300]}")
            elif not run.answered:
                run.answered = True
                ack, _ = await rpc("tasks/update", {"taskId": task_id, "inputResponses": ANSWER})
                if ack is not None and ack.get("resultType") != "complete":
                    run.problems.append(f"tasks/update ack {ack}")
        if status in TERMINAL:
            run.terminal_s = time.monotonic() - client.t0
            await _check_terminal(run, client, got)
            return
    run.outcome = "lost"
    run.problems.append(f"still {run.status} ({run.last_message!r}) at the deadline after {run.polls} polls")


def _text_of(task: dict[str, Any]) -> str | None:
    result = task.get("result")
    content = result.get("content") if isinstance(result, dict) else None
    if isinstance(content, list) and content and isinstance(content[0], dict):
        text = content[0].get("text")
        return text if isinstance(text, str) else None
    return None


async def _check_terminal(run: TaskRun, client: Client, got: dict[str, Any]) -> None:
    run.result_text = _text_of(got)
    created_ms, updated_ms = parse_iso_ms(got.get("createdAt")), parse_iso_ms(got.get("lastUpdatedAt"))
    if created_ms is not None and updated_ms is not None:
        run.server_run_ms = updated_ms - created_ms
    # A terminal task stays put: read it once more (and, if the first read was off,
    # the second one tells a torn read from a result that is really wrong).
    again, _ = await client.rpc("tasks/get", {"taskId": run.task_id}, run.token, run.label)
    if run.status != "completed":
        run.outcome = "failed"
        run.problems.append(f"{run.status}: {got.get('statusMessage')!r}")
    elif run.result_text != run.expected:
        run.outcome = "wrong"
        run.problems.append(f"result {run.result_text!r}, expected {run.expected!r}")
        run.problems.append(f"tasks/get said: {json.dumps(got)[:1000]}")
        if again is not None:
            run.problems.append(f"read again: {json.dumps(again)[:1000]}")
    elif again is not None and (again.get("status") != "completed" or _text_of(again) != run.expected):
        run.outcome = "wrong"
        run.problems.append(f"changed after completing: {json.dumps(again)[:1000]}")
    else:
        run.outcome = "ok" if not run.problems else "wrong"


# --------------------------------------------------------------------------- one round


def plan(n: int, mix: bool, tokens: list[str | None], run_id: str) -> list[TaskRun]:
    runs = []
    for i in range(n):
        token = tokens[i % len(tokens)]
        if mix and i % 5 == 4:
            name = f"load-{run_id}-n{n}-{i}.txt"
            runs.append(TaskRun(i, "confirm_delete", {"filename": name}, f"Deleted {name}", token, name))
        else:
            label = f"load-{run_id}-n{n}-{i}"
            arguments = {"seconds": 1, "label": label}
            runs.append(
                TaskRun(i, "slow_compute", arguments, f"{label} finished after 1 seconds", token, label)
            )
    return runs


async def sample_server(
    watch: ProcWatch, samples: list[tuple[float, float, int]], stop: asyncio.Event
) -> None:
    """(seconds, cpu seconds, threads) every 0.5 s until stopped (bounded to an hour)."""
    t0 = time.monotonic()
    for _ in range(7200):
        cpu, threads = watch.cpu_seconds(), watch.threads()
        if cpu is not None and threads is not None:
            samples.append((time.monotonic() - t0, cpu, threads))
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), 0.5)
        if stop.is_set():
            return


def _server_cpu(
    watch: ProcWatch,
    before: tuple[float | None, dict[int, float]],
    after: tuple[float | None, dict[int, float]],
    samples: list[tuple[float, float, int]],
    wall: float,
) -> dict[str, Any]:
    (cpu_before, threads_before), (cpu_after, threads_after) = before, after
    if cpu_before is None or cpu_after is None:
        return {}
    deltas = {tid: cpu - threads_before.get(tid, 0.0) for tid, cpu in threads_after.items()}
    busy = sorted(deltas.values(), reverse=True)
    cpu_used = cpu_after - cpu_before
    main_cpu = deltas.get(watch.pid or -1, 0.0)
    return {
        "cpu_seconds": round(cpu_used, 2),
        "cpu_cores_avg": round(cpu_used / wall, 2) if wall else None,
        "threads_max": max((s[2] for s in samples), default=None),
        "threads_at_end": len(threads_after),
        # The main thread runs uvicorn's event loop (HTTP parsing, JSON, routing);
        # the others are anyio's request threadpool, execution threads and the sweeper.
        "main_thread_cpu_seconds": round(main_cpu, 2),
        "other_threads_cpu_seconds": round(cpu_used - main_cpu, 2),
        "threads_alive_at_end_that_used_cpu": sum(1 for d in busy if d > 0),
        "busiest_threads_cpu_seconds": [round(d, 2) for d in busy[:5]],
        "cpu_timeline": [
            {
                "t_s": round(b[0], 1),
                "cores": round((b[1] - a[1]) / (b[0] - a[0]), 2) if b[0] > a[0] else None,
                "threads": b[2],
            }
            for a, b in itertools.pairwise(samples)
        ][::4],
    }


async def run_round(
    n: int,
    *,
    client: Client,
    mix: bool,
    tokens: list[str | None],
    deadline_s: float,
    run_id: str,
    watch: ProcWatch,
    server: Server | None,
) -> dict[str, Any]:
    runs = plan(n, mix, tokens, run_id)
    log_offset = server.log_size() if server else 0
    before = (watch.cpu_seconds(), watch.per_thread())
    own_before = resource.getrusage(resource.RUSAGE_SELF)
    samples: list[tuple[float, float, int]] = []
    stop_sampling = asyncio.Event()
    sampler = asyncio.create_task(sample_server(watch, samples, stop_sampling))

    client.reset()
    deadline = time.monotonic() + deadline_s
    start = asyncio.Event()
    jobs = [asyncio.create_task(run_task(r, client, deadline, start)) for r in runs]
    await asyncio.sleep(0)
    start.set()
    _, pending = await asyncio.wait(jobs, timeout=deadline_s + client.request_timeout + 10)
    for job in pending:
        job.cancel()
    for job in jobs:
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await job
    wall = time.monotonic() - client.t0
    stop_sampling.set()
    await sampler
    after = (watch.cpu_seconds(), watch.per_thread())
    own_after = resource.getrusage(resource.RUSAGE_SELF)
    for r in runs:
        if r.outcome == "pending":
            r.outcome = "lost"
            r.problems.append("abandoned at the hard stop")

    # Duplicates: two creates that got one taskId.
    ids = Counter(r.task_id for r in runs if r.task_id)
    for r in runs:
        if ids[r.task_id] > 1:
            r.problems.append(f"taskId {r.task_id} also returned to another create")
    outcomes = Counter(r.outcome for r in runs)

    slow_done = [
        r for r in runs if r.terminal_s is not None and r.created_s is not None and r.tool == "slow_compute"
    ]
    created = [r for r in runs if r.created_s is not None]
    # Latency creep: tasks/get latency by 5-second window of the round.
    windows: dict[int, list[float]] = {}
    for at, method, latency in client.timeline:
        if method == "tasks/get":
            windows.setdefault(int(at // 5), []).append(latency)
    log_lines = (server.log_since(log_offset) if server else "").splitlines()
    bad_lines = [line for line in log_lines if re.search(r"ERROR|Traceback|Exception|CRITICAL|WARNING", line)]
    problems = [
        {"index": r.index, "tool": r.tool, "label": r.label, "taskId": r.task_id, "outcome": r.outcome}
        | {"status": r.status, "transitions": r.transitions, "polls": r.polls, "problems": r.problems}
        for r in runs
        if r.outcome != "ok"
    ]
    return {
        "n": n,
        "mix": mix,
        "owners": len(tokens),
        "deadline_s": deadline_s,
        "wall_s": round(wall, 2),
        "created": sum(1 for r in runs if r.task_id),
        "completed": outcomes["ok"],
        "confirm_delete_tasks": sum(1 for r in runs if r.tool == "confirm_delete"),
        "answered": sum(1 for r in runs if r.answered),
        "errors": len(client.errors),
        "lost": outcomes["lost"] + outcomes["not_found"],
        "duplicated": sum(c - 1 for c in ids.values() if c > 1) + outcomes["wrong"],
        "failed": outcomes["failed"],
        "outcomes": dict(outcomes),
        "http_status": {str(k): v for k, v in sorted(client.status_codes.items())},
        "error_kinds": dict(
            Counter(f"{e.method} {e.kind} {e.status or ''} {e.code or ''}".strip() for e in client.errors)
        ),
        "latency": {
            m: summarize(client.latency.get(m, []))
            | {"errors": sum(1 for e in client.errors if e.method == m)}
            for m in METHODS
        },
        "all_creates_returned_s": round(max(r.created_s or 0.0 for r in created), 2) if created else None,
        "create_sent_to_terminal_seen": summarize([(r.terminal_s or 0) - (r.sent_s or 0) for r in slow_done]),
        "create_returned_to_terminal_seen": summarize(
            [(r.terminal_s or 0) - (r.created_s or 0) for r in slow_done]
        ),
        "server_run_createdAt_to_lastUpdatedAt": summarize(
            [r.server_run_ms / 1000 for r in runs if r.server_run_ms is not None and r.tool == "slow_compute"]
        ),
        "create_to_first_progress_seen": summarize(
            [r.first_progress_s - (r.created_s or 0) for r in created if r.first_progress_s is not None]
        ),
        "polls_per_task_mean": round(sum(r.polls for r in runs) / n, 1) if n else 0,
        "tasks_get_latency_by_5s_window": [
            {"from_s": w * 5, "count": len(v), "p50_ms": round(percentile(v, 50) * 1000, 1)}
            | {"p95_ms": round(percentile(v, 95) * 1000, 1)}
            for w, v in sorted(windows.items())
        ],
        "server": _server_cpu(watch, before, after, samples, wall),
        "client_cpu_seconds": round(
            (own_after.ru_utime - own_before.ru_utime) + (own_after.ru_stime - own_before.ru_stime), 2
        ),
        "server_log": {
            "lines": len(log_lines),
            "suspicious": len(bad_lines),
            "first_suspicious": bad_lines[:20],
        },
        "errors_detail": [e.as_dict() for e in client.errors[:MAX_RECORDED]],
        "problem_tasks": problems[:MAX_RECORDED],
    }


# --------------------------------------------------------------------------- output


def fmt_ms(stats: dict[str, Any], key: str) -> str:
    value = stats.get(key)
    return f"{value:.1f}" if isinstance(value, (int, float)) else "-"


def print_round(r: dict[str, Any], out: TextIO = sys.stdout) -> None:
    p = functools.partial(print, file=out)
    p()
    p(
        f"== N={r['n']}  mix={'on' if r['mix'] else 'off'}  owners={r['owners']}  "
        f"wall={r['wall_s']}s (deadline {r['deadline_s']:g}s)  created={r['created']}/{r['n']}  "
        f"completed+verified={r['completed']}/{r['n']}  answered={r['answered']}/{r['confirm_delete_tasks']}"
    )
    p(f"{'method':<14}{'count':>7}{'p50 ms':>10}{'p95 ms':>10}{'p99 ms':>10}{'max ms':>10}{'errors':>8}")
    for method, s in r["latency"].items():
        cells = "".join(f"{fmt_ms(s, k):>10}" for k in ("p50_ms", "p95_ms", "p99_ms", "max_ms"))
        p(f"{method:<14}{s['count']:>7}{cells}{s['errors']:>8}")
    for title, key in (
        ("tools/call sent -> terminal seen (slow_compute, 1 s of work)", "create_sent_to_terminal_seen"),
        ("tools/call returned -> terminal seen", "create_returned_to_terminal_seen"),
        ("server createdAt -> lastUpdatedAt (slow_compute)", "server_run_createdAt_to_lastUpdatedAt"),
        ("create -> first progress message seen", "create_to_first_progress_seen"),
    ):
        if (s := r[key]).get("count"):
            p(
                f"  {title}: p50 {s['p50_ms'] / 1000:.2f}s  p95 {s['p95_ms'] / 1000:.2f}s  "
                f"max {s['max_ms'] / 1000:.2f}s  (n={s['count']})"
            )
    if r["all_creates_returned_s"] is not None:
        p(
            f"  all {r['created']} creates returned after {r['all_creates_returned_s']}s; "
            f"{r['polls_per_task_mean']} polls/task; HTTP status {r['http_status']}"
        )
    if creep := r["tasks_get_latency_by_5s_window"]:
        windows = (f"[{w['from_s']}s] {w['p50_ms']:.0f}/{w['p95_ms']:.0f} (n={w['count']})" for w in creep)
        p("  tasks/get p50/p95 ms by 5 s window: " + "  ".join(windows))
    if s := r["server"]:
        p(
            f"  server: {s['cpu_seconds']} CPU-s = {s['cpu_cores_avg']} cores avg over the round; "
            f"threads max {s['threads_max']}; main (event-loop) thread {s['main_thread_cpu_seconds']} CPU-s, "
            f"all other threads {s['other_threads_cpu_seconds']} CPU-s; "
            f"client {r['client_cpu_seconds']} CPU-s"
        )
    log = r["server_log"]
    if log["lines"] or log["suspicious"]:
        p(f"  server log: {log['lines']} lines, {log['suspicious']} with ERROR/WARNING/Traceback")
        for line in log["first_suspicious"][:5]:
            p(f"    | {line[:200]}")
    if r["error_kinds"]:
        p(f"  error kinds: {r['error_kinds']}")
        for e in r["errors_detail"][:5]:
            p(f"    ! {e}")
    for t in r["problem_tasks"][:5]:
        p(
            f"    ? task {t['index']} {t['tool']} {t['taskId']}: {t['outcome']} {[x[:400] for x in t['problems'][:3]]}"
        )
    p(
        f"SUMMARY n={r['n']} errors={r['errors']} lost={r['lost']} duplicated={r['duplicated']} "
        f"failed={r['failed']} completed={r['completed']}/{r['n']}"
    )


# --------------------------------------------------------------------------- main


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--url", help="a running server's /mcp URL (default: start one)")
    parser.add_argument("--n", type=int, action="append", help="tasks per round; repeat for more rounds")
    parser.add_argument("--mix", action="store_true", help="every 5th task is confirm_delete")
    parser.add_argument(
        "--start-server", action="store_true", help="start a local server (default without --url)"
    )
    parser.add_argument("--owners", type=int, default=4, help="owners (dev tokens) for a started server")
    parser.add_argument("--token", action="append", help="bearer token for --url; repeat to spread owners")
    parser.add_argument("--deadline", type=float, help="seconds per round (default max(60, 0.6*N))")
    parser.add_argument("--request-timeout", type=float, default=30.0)
    parser.add_argument("--out", type=pathlib.Path, default=ROOT / "bench" / "results" / "load-latest.json")
    parser.add_argument(
        "--server-log", type=pathlib.Path, default=ROOT / "bench" / "results" / "load-server.log"
    )
    args = parser.parse_args(argv)
    args.n = args.n or [50]
    if any(n < 1 or n > 5000 for n in args.n):
        parser.error("--n must be between 1 and 5000")
    if args.owners < 1:
        parser.error("--owners must be at least 1")
    if args.url is None:
        args.start_server = True
    if args.start_server and args.url:
        parser.error("--url and --start-server are exclusive")
    return args


async def amain(args: argparse.Namespace) -> int:
    run_id = uuid.uuid4().hex[:8]
    server: Server | None = None
    if args.start_server:
        try:
            server = await start_server(args.owners, args.server_log)
        except RuntimeError as exc:
            print(exc, file=sys.stderr)
            return 2
        url = server.url
        tokens: list[str | None] = list(server.tokens)
        print(f"started {url} (pid {server.proc.pid}, log {args.server_log}), {args.owners} owners")
    else:
        url = args.url
        tokens = list(args.token) if args.token else [None]
    for n in args.n:
        if -(-n // len(tokens)) > DEFAULT_PER_OWNER_LIMIT:
            print(
                f"warning: N={n} over {len(tokens)} owner(s) may put more than {DEFAULT_PER_OWNER_LIMIT} "
                "tasks per owner in flight; past MAX_ACTIVE_TASKS_PER_OWNER (default 100) the server "
                "answers -32000 and that counts as an error",
                file=sys.stderr,
            )
    watch = ProcWatch(server.proc.pid if server else None)
    client = Client(url, args.request_timeout)
    rounds: list[dict[str, Any]] = []
    exit_code: int | None = None
    try:
        for n in args.n:
            result = await run_round(
                n,
                client=client,
                mix=args.mix,
                tokens=tokens,
                deadline_s=args.deadline or max(60.0, 0.6 * n),
                run_id=run_id,
                watch=watch,
                server=server,
            )
            rounds.append(result)
            print_round(result)
            if server and server.proc.poll() is not None:
                print(f"server exited with {server.proc.returncode} during N={n}", file=sys.stderr)
                break
    finally:
        await client.http.aclose()
        if server:
            exit_code = server.stop()
    ok = (
        bool(rounds)
        and len(rounds) == len(args.n)
        and all(r["errors"] == r["lost"] == r["duplicated"] == r["failed"] == 0 for r in rounds)
    )
    report = {
        "generated_at": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "argv": sys.argv[1:],
        "url": url,
        "started_server": bool(server),
        "server_exit_code": exit_code,
        "server_log": str(args.server_log) if server else None,
        "cpu_count": os.cpu_count(),
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
