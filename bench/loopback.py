"""Section 3: end to end over loopback HTTP. Stdlib only (runs inside bench/run.py).

Starts taskgate's local server (``python -m taskgate.local``: the real app on
uvicorn, AWS emulated in-process by moto, the real state machine and worker) and
the FastMCP 4.1.4 + fastmcp-tasks server (``fastmcp_server.py``: Docket on
``memory://``), each on a free 127.0.0.1 port, and drives both with the same
client (the CLI's ``Client2026``): threads with one keep-alive ``http.client``
connection each, a bounded number of tasks in flight, every task ``tools/call``
(as a task) then ``tasks/get`` until terminal. Every count and wait is bounded; nothing leaves loopback.
"""

from __future__ import annotations

import http.client
import itertools
import json
import subprocess
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchlib import BENCH, FASTMCP_PY, PROJECT_PY, base_env, median, p90
from taskgate_cli.protocol import Client2026, meta_2026
from taskgate_cli.transport import ConnectionTrouble, Reply, RpcError, reply_of

from taskgate.local import process

TERMINAL = {"completed", "failed", "cancelled"}
FIRST_POLL_S = 0.0
POLL_S = 0.010
TASK_TIMEOUT_S = 30.0
META = meta_2026(elicitation=False, client_info={"name": "taskgate-bench", "version": "0"})


class KeepAlive:
    """One keep-alive ``http.client`` connection as a transport for the CLI's client;
    reconnects once on a dropped connection."""

    def __init__(self, port: int) -> None:
        self._port = port
        self._conn = http.client.HTTPConnection("127.0.0.1", port, timeout=15)

    def send(
        self, method: str, headers: dict[str, str], body: Any = None, *, timeout: float | None = None
    ) -> Reply:
        data = None if body is None else json.dumps(body).encode()
        for attempt in (1, 2):
            try:
                self._conn.request(method, "/mcp", data, headers)
                resp = self._conn.getresponse()
                raw = resp.read()
                break
            except (http.client.HTTPException, ConnectionError):
                self._conn.close()
                self._conn = http.client.HTTPConnection("127.0.0.1", self._port, timeout=15)
                if attempt == 2:
                    raise
        return reply_of(resp.status, dict(resp.getheaders()), raw, f"127.0.0.1:{self._port}")

    def close(self) -> None:
        self._conn.close()


class Client:
    """The CLI's 2026 client over one keep-alive connection."""

    def __init__(self, port: int) -> None:
        self._http = KeepAlive(port)
        self._mcp = Client2026(self._http, meta=META)

    def post(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """The result; ``RpcError`` or ``ConnectionTrouble`` otherwise."""
        return self._mcp.request(method, params)

    def close(self) -> None:
        self._http.close()


@dataclass
class Server:
    key: str
    label: str
    process: process.LocalServer
    spawned_at: float = field(default_factory=time.monotonic)

    @property
    def port(self) -> int:
        return self.process.port


@dataclass
class Round:
    tasks: int
    completed: int
    errors: int
    wall_s: float
    tasks_per_s: float
    latency_p50_ms: float
    latency_p90_ms: float
    polls_per_task: float
    first_error: str | None = None


@dataclass
class ServerResult:
    label: str
    rounds: list[Round] = field(default_factory=list)
    discover_rps: list[float] = field(default_factory=list)

    def summary(self) -> dict[str, Any]:
        return {
            "label": self.label,
            "tasks_per_s_median": median([r.tasks_per_s for r in self.rounds]),
            "discover_rps_median": median(self.discover_rps),
            "rounds": [r.__dict__ for r in self.rounds],
            "discover_rps": self.discover_rps,
        }


def start_ours(logdir: Path) -> Server:
    # The fixture tools it calls (slow_compute) are the local server's defaults.
    local = process.start(logdir / "taskgate-local.log", python=str(PROJECT_PY), base_env=base_env())
    return Server("ours", "taskgate local (uvicorn + moto)", local)


def start_fastmcp(logdir: Path) -> Server:
    port = process.free_port()
    log = logdir / "fastmcp.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [str(FASTMCP_PY), str(BENCH / "fastmcp_server.py"), str(port)],
            cwd=logdir,
            env=base_env(),
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # stopped as a group, as the local server is
        )
    return Server(
        "fastmcp", "FastMCP 4.1.4 + fastmcp-tasks (memory://)", process.LocalServer(proc, port, log)
    )


def wait_ready(server: Server, timeout_s: float = 90.0) -> float:
    """Seconds from spawn until server/discover answers (start-up, for the record)."""
    start = server.spawned_at
    while time.monotonic() - start < timeout_s:
        if server.process.proc.poll() is not None:
            raise RuntimeError(f"{server.label} exited early:\n{server.process.log.read_text()[-3000:]}")
        try:
            c = Client(server.port)
            c.post("server/discover", {})
            c.close()
            return time.monotonic() - start
        except (OSError, ConnectionTrouble, RpcError, http.client.HTTPException):
            time.sleep(0.1)
    raise RuntimeError(
        f"{server.label} not ready after {timeout_s}s:\n{server.process.log.read_text()[-3000:]}"
    )


def _lifecycle(client: Client) -> tuple[float, int]:
    """tools/call as a task, then tasks/get until terminal: (seconds, polls)."""
    start = time.perf_counter()
    created = client.post(
        "tools/call", {"name": "slow_compute", "arguments": {"seconds": 0, "label": "bench"}}
    )
    if created.get("resultType") != "task":
        raise RuntimeError(f"tools/call did not create a task: {created}")
    task_id = created["taskId"]
    polls = 0
    delay = FIRST_POLL_S
    while True:
        if delay:
            time.sleep(delay)
        delay = POLL_S
        task = client.post("tasks/get", {"taskId": task_id})
        polls += 1
        if task["status"] in TERMINAL:
            if task["status"] != "completed":
                raise RuntimeError(f"task ended {task['status']}: {task}")
            return time.perf_counter() - start, polls
        if time.perf_counter() - start > TASK_TIMEOUT_S:
            raise RuntimeError(f"task {task_id} still {task['status']} after {TASK_TIMEOUT_S}s")


def _parallel(
    port: int, count: int, concurrency: int, one: Callable[[Client], Any]
) -> tuple[float, list[Any], list[str]]:
    counter = itertools.count()
    lock = threading.Lock()
    results: list[Any] = []
    errors: list[str] = []

    def worker() -> None:
        client = Client(port)
        try:
            while True:
                with lock:
                    i = next(counter)
                if i >= count:
                    return
                try:
                    value = one(client)
                except Exception as exc:  # counted and reported, never fatal
                    with lock:
                        errors.append(f"{type(exc).__name__}: {exc}")
                    client.close()
                    client = Client(port)
                    continue
                with lock:
                    results.append(value)
        finally:
            client.close()

    threads = [threading.Thread(target=worker, daemon=True) for _ in range(concurrency)]
    start = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=TASK_TIMEOUT_S * count)
    return time.perf_counter() - start, results, errors


def run_tasks(server: Server, count: int, concurrency: int) -> Round:
    wall, results, errors = _parallel(server.port, count, concurrency, _lifecycle)
    latencies = [r[0] * 1000 for r in results]
    polls = [r[1] for r in results]
    return Round(
        tasks=count,
        completed=len(results),
        errors=len(errors),
        wall_s=wall,
        tasks_per_s=len(results) / wall if wall else 0.0,
        latency_p50_ms=median(latencies),
        latency_p90_ms=p90(latencies),
        polls_per_task=sum(polls) / len(polls) if polls else float("nan"),
        first_error=errors[0] if errors else None,
    )


def run_discover(server: Server, count: int, concurrency: int) -> float:
    wall, results, _ = _parallel(server.port, count, concurrency, lambda c: c.post("server/discover", {}))
    return len(results) / wall if wall else 0.0


def run(
    tasks: int, concurrency: int, rounds: int, discover: int, logdir: Path, log: Callable[[str], None]
) -> dict[str, Any]:
    servers: list[Server] = []
    out: dict[str, Any] = {"startup_s": {}, "results": {}}
    try:
        servers = [start_ours(logdir), start_fastmcp(logdir)]
        for s in servers:
            log(f"waiting for {s.label} on 127.0.0.1:{s.port}")
            out["startup_s"][s.key] = wait_ready(s)
        results = {s.key: ServerResult(s.label) for s in servers}
        for s in servers:
            log(f"warm-up: 10 tasks on {s.label}")
            warm = run_tasks(s, 10, min(concurrency, 4))
            if warm.errors:
                raise RuntimeError(f"{s.label} warm-up failed: {warm.first_error}")
        for r in range(rounds):
            order = servers if r % 2 == 0 else servers[::-1]
            for s in order:
                log(f"round {r + 1}/{rounds}: {tasks} tasks, {concurrency} in flight, on {s.label}")
                results[s.key].rounds.append(run_tasks(s, tasks, concurrency))
                log(f"round {r + 1}/{rounds}: {discover} server/discover on {s.label}")
                results[s.key].discover_rps.append(run_discover(s, discover, concurrency))
        out["results"] = results
    finally:
        for s in servers:
            s.process.stop()
    return out
