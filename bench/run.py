"""taskgate benchmark suite: cold start, warm per-request cost, loopback end to end, memory.

    .venv/bin/python bench/run.py [--quick] [--only cold,warm,e2e,memory] [--no-setup]

Runs bench/setup.sh first (idempotent: it creates the comparison venvs under
.tools/bench/ once). Prints labelled tables and a summary, and writes every figure to
bench/results/latest.json. The machine is small and shared: nothing here passes or
fails on timing. Figures are medians of several runs, and each comparison is a ratio
against a baseline measured in the same run, interleaved with it.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import coldstart
import loopback
from benchlib import (
    BENCH,
    FASTMCP_PY,
    LAYER_PY,
    MCP_PY,
    PROJECT_PY,
    RESULTS,
    ROOT,
    base_env,
    fmt,
    lambda_env,
    median,
    p90,
    progress,
    ratio,
    say,
    table,
)

SECTIONS = ("cold", "warm", "e2e", "memory")


@dataclasses.dataclass(frozen=True)
class Plan:
    cold_runs: int
    nopyc_runs: int
    warm_repeats: int
    warm_batch: int
    adapter_batch: int
    e2e_tasks: int
    e2e_concurrency: int
    e2e_rounds: int
    e2e_discover: int
    memory_requests: int


FULL = Plan(11, 3, 21, 200, 50, 200, 8, 3, 1000, 1000)
QUICK = Plan(3, 1, 7, 100, 20, 60, 8, 1, 300, 1000)


def loadavg() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def run_setup() -> None:
    progress("bench/setup.sh (creates the comparison venvs once)")
    proc = subprocess.run(["bash", str(BENCH / "setup.sh")], capture_output=True, text=True)
    sys.stderr.write(proc.stdout)
    if proc.returncode != 0:
        sys.stderr.write(proc.stderr)
        raise SystemExit("bench/setup.sh failed")


def worker(script: str, out: Path, *args: str) -> dict[str, Any]:
    """Run bench/<script> in a fresh process with the ApiFunction's environment."""
    proc = subprocess.run(
        [str(PROJECT_PY), str(BENCH / script), "--out", str(out), *args],
        cwd=ROOT,
        env=lambda_env(),
        capture_output=True,
        text=True,
        timeout=900,
    )
    if proc.returncode != 0:
        raise RuntimeError(
            f"{script} failed ({proc.returncode}):\n{proc.stdout[-2000:]}\n{proc.stderr[-4000:]}"
        )
    return json.loads(out.read_text())  # type: ignore[no-any-return]


# --- 1. cold start -----------------------------------------------------------------------
COLD_NOTE = """
spawn->ready: parent's perf_counter before spawning to the child's when its body is done (CLOCK_MONOTONIC,
  shared by all processes): interpreter start-up + imports + init. The headline.
in-process: the child's own perf_counter from its first line to ready (imports + init only).
process wall: spawn to exit (adds interpreter shutdown). cpu: the child's process_time() when ready (user + sys,
  start-up included; a busy machine disturbs it less).
ours_get / ours_call = the same init, then one API Gateway HTTP API v2 event through api_handler.handler (Powertools
  decorators, Mangum, Starlette): a 2026-07-28 tasks/get of a finished task (events/api_tasks_get.json), or a
  tools/call that starts a task; AWS answered in-process at botocore's HTTP layer (bench/first_request.py: endpoint
  resolution, serialisation, signing and parsing run for real). floor_get = bench/stack_floor_get.py: the required
  stack a tasks/get uses (DynamoDB client, Logger/Metrics, Starlette, Mangum), given the same event. before_get
  / before_call (with --before REF): ours_get / ours_call of that git revision, in the same rounds.
Sign-in rows (bench/sign_in.py; the event then carries no API Gateway authorizer): ours_401 = the template's
  default AuthMode (USER,CLIENT,IAM), a request without a token (the 401 that starts a client's sign-in);
  ours_get_user = the same with a person's token from the stack's own authorization server (HS256: the key read
  from Secrets Manager, answered by the stub); ours_get_agent = AuthMode JWT (CLIENT), an agent's token of the
  issuer (RS256: the issuer's JWKS fetched over loopback HTTP, as from Cognito). before_401 / before_get_agent:
  the --before revision with the same JWT environment and token, in the same rounds.
ours = `import api_handler` with the ApiFunction's environment: Powertools Logger/Metrics, the DynamoDB client,
  the composition root, the Starlette app, Mangum. floor = bench/stack_floor.py: the same required dependencies
  initialised, no taskgate code. Same CPython for every row; warm disk cache and .pyc.
"""
FLOORS = ("floor", "floor_get", "floor_get_pyd")
BASELINES = ("mcp", "fastmcp", "fastmcp_tasks", *FLOORS)
SIGNED_IN = ("before_401", "before_get_agent", "ours_401", "ours_get_user", "ours_get_agent")


def cold_ratios(by: dict[str, coldstart.Contender]) -> dict[str, dict[str, float]]:
    """``ours/base`` for every pair measured: ratio of medians, median of per-round ratios, cpu."""
    ratios: dict[str, dict[str, float]] = {}
    for ours_key in (
        "before_get",
        "ours_get",
        *SIGNED_IN,
        "before_call",
        "ours_call",
        "ours",
        "ours_layer",
        *FLOORS,
    ):
        for base_key in BASELINES:
            if ours_key == base_key or (ours_key in FLOORS and base_key != "mcp"):
                continue
            if ours_key in by and base_key in by:
                a, b = by[ours_key], by[base_key]
                paired = [x / y for x, y in zip(a.spawn_to_ready_s, b.spawn_to_ready_s, strict=False)]
                ratios[f"{ours_key}/{base_key}"] = {
                    "ratio_of_medians": ratio(median(a.spawn_to_ready_s), median(b.spawn_to_ready_s)),
                    "median_of_paired_ratios": median(paired),
                    "cpu_ratio_of_medians": ratio(median(a.cpu_s), median(b.cpu_s)),
                }
    return ratios


def _over_mcp(ratios: dict[str, dict[str, float]], key: str, which: str = "ratio_of_medians") -> float:
    return ratios.get(f"{key}/mcp", {}).get(which, math.nan)


def _cold_goals(ratios: dict[str, dict[str, float]], by: dict[str, coldstart.Contender]) -> dict[str, Any]:
    layer, floor = by.get("ours_layer"), by.get("floor")
    added = (
        (median(layer.spawn_to_ready_s) - median(floor.spawn_to_ready_s)) * 1000
        if layer and floor
        else math.nan
    )
    return {
        "goal_ours_over_import_mcp": {
            "target": 0.4,
            "venv": _over_mcp(ratios, "ours"),
            "layer_venv": _over_mcp(ratios, "ours_layer"),
            "floor": _over_mcp(ratios, "floor"),
        },
        "goal_tasks_get_over_import_mcp": {
            "target": 0.45,
            "ours_get": _over_mcp(ratios, "ours_get"),
            "ours_get_paired": _over_mcp(ratios, "ours_get", "median_of_paired_ratios"),
            "ours_get_cpu": _over_mcp(ratios, "ours_get", "cpu_ratio_of_medians"),
            **{key: _over_mcp(ratios, key) for key in (*FLOORS, "ours_call", "before_get")},
        },
        "ours_layer_minus_floor_ms": added,
    }


def _cold_goal_note(goals: dict[str, Any], measured_before: bool) -> str:
    get, init = goals["goal_tasks_get_over_import_mcp"], goals["goal_ours_over_import_mcp"]
    before = f", and the --before revision's tasks/get {fmt(get['before_get'], 2)}" if measured_before else ""
    return f"""
Goal: a tasks/get cold start (init + first request, layer-only venv) <= 0.45 x `import mcp`. Measured:
  {fmt(get["ours_get"], 2)} (ratio of medians; {fmt(get["ours_get_paired"], 2)} median of per-round ratios; {fmt(get["ours_get_cpu"], 2)} in CPU time):
  {"met" if get["ours_get"] <= 0.45 else "not met"}. Beside it, same rounds: the required-stack floor {fmt(init["floor"], 2)} (stack_floor.py,
  import and init only), the part of it a tasks/get uses, used once {fmt(get["floor_get"], 2)} (stack_floor_get.py), the
  same with the pydantic a tasks/get needs here {fmt(get["floor_get_pyd"], 2)} (settings + params models), a first
  tools/call {fmt(get["ours_call"], 2)}{before}.
Init alone: ours < 0.40 x `import mcp`. Measured: {fmt(init["venv"], 2)} (.venv), {fmt(init["layer_venv"], 2)} (layer-only venv).
taskgate's init is {fmt(goals["ours_layer_minus_floor_ms"], 0)} ms from the floor (ours_layer - floor, medians).
mcp = mcp 2.3.0; fastmcp = minimal FastMCP 4.1.4 server; fastmcp_tasks = the same plus fastmcp-tasks.
"""


def section_cold(plan: Plan, report: dict[str, Any], before: Path | None = None) -> dict[str, Any]:
    missing = [str(p) for p in (MCP_PY, FASTMCP_PY, LAYER_PY) if not p.exists()]
    res = coldstart.run(plan.cold_runs, plan.nopyc_runs, progress, before=before)
    cs: list[coldstart.Contender] = res["contenders"]
    by = {c.key: c for c in cs}
    columns = [
        "contender",
        "runs",
        "spawn->ready p50",
        "p90",
        "in-process p50",
        "process wall p50",
        "cpu p50",
    ]
    rows = [
        [c.label, len(c.spawn_to_ready_s), *(fmt(f(v) * 1000, 0) for f, v in (
            (median, c.spawn_to_ready_s), (p90, c.spawn_to_ready_s), (median, c.in_process_s),
            (median, c.process_wall_s), (median, c.cpu_s)))]
        for c in cs
    ]  # fmt: skip
    say(table("1. Cold start: fresh process until ready (ms)", columns, rows, note=COLD_NOTE))
    ratios = cold_ratios(by)
    goals = _cold_goals(ratios, by)
    rrows = [[k, *(fmt(v[m], 2) for m in v)] for k, v in ratios.items()]
    headers = ["ours / baseline", "ratio of medians", "median of per-round ratios", "cpu ratio"]
    say(
        table(
            "1b. Cold-start ratios (spawn->ready)",
            headers,
            rrows,
            note=_cold_goal_note(goals, "before_get" in by),
        )
    )
    if missing:
        say(f"  (missing venvs, rows skipped: {', '.join(missing)}; run bench/setup.sh)\n")
    nopyc = res["nopyc"]
    if nopyc is not None:
        say(_nopyc_table(nopyc))
    out = {
        "contenders": {c.key: c.summary() for c in cs},
        "ratios": ratios,
        **goals,
        "nopyc": dataclasses.asdict(nopyc) if nopyc else None,
    }
    report["cold"] = out
    return out


def _nopyc_table(nopyc: coldstart.NoPyc) -> str:
    with_pyc = median(nopyc.with_pyc_same_run)
    row = [nopyc.label, len(nopyc.seconds), fmt(median(nopyc.seconds) * 1000, 0), fmt(with_pyc * 1000, 0)]
    return table(
        "1f. Cold start without shipped bytecode (spawn->ready, ms)",
        ["variant", "runs", "p50", "same rounds with .pyc p50", "x"],
        [[*row, fmt(ratio(median(nopyc.seconds), with_pyc), 2)]],
        note="""
Lambda's /opt (layers) and /var/task are read-only: .pyc that the build did not ship are compiled at every cold
  start. Emulated with -X pycache_prefix holding only the stdlib's .pyc and PYTHONDONTWRITEBYTECODE=1.
  layers/Makefile ships unchecked-hash .pyc for every module, so a deployed cold start is the "with .pyc" one.
""",
    )


# --- 2. warm ----------------------------------------------------------------------------
WARM_NOTE = """
{repeats} timed batches per row, rows interleaved batch by batch, 2 warm-up batches discarded; GC on.
direct: McpServer.handle(body, headers, owner) of the composition root on the in-memory ports
  (taskgate.testing.memory), no audit hook: our protocol and domain code alone. Excludes JSON parse/serialise,
  HTTP, and the DynamoDB item encoding in our adapter.
ASGI: the same through create_app (bytes in, bytes out; Starlette routing, json.loads, run_in_threadpool hop,
  JSONResponse), one persistent event loop. The no-op row times Starlette's run_in_threadpool alone: the
  thread hand-off http_app makes for every POST (costly on a busy 2-core machine).
adapters+botocore: the real DynamoDBTaskStore and boto3 client (validation, serialisation, SigV4, parsing);
  a before-send hook answers instead of the network (tests/fakes.py CannedAws).
"""


def section_warm(plan: Plan, report: dict[str, Any], tmp: Path) -> dict[str, Any]:
    progress(f"warm: {plan.warm_repeats} batches per row (fresh process)")
    args = ("--repeats", str(plan.warm_repeats), "--batch", str(plan.warm_batch))
    data = worker("warm.py", tmp / "warm.json", *args, "--adapter-batch", str(plan.adapter_batch))
    # The same method's direct cost, for the other paths (by the method the row's name starts with).
    direct = {r["name"].split()[0]: r["us_per_op_median"] for r in data["rows"] if r["path"] == "direct"}
    rows = [
        [r["path"], r["name"], r["batch"], *(fmt(r[k], 1) for k in ("us_per_op_median", "us_per_op_min", "us_per_op_p90")),
         fmt(ratio(r["us_per_op_median"], direct[r["name"].split()[0]]), 1) if r["path"] != "direct" and r["name"].split()[0] in direct else ""]
        for r in data["rows"]
    ]  # fmt: skip
    columns = ["path", "request (2026-07-28 wire)", "batch", "p50", "min", "p90", "x direct"]
    title = "2. Warm per-request cost, in-process (µs/op; median of per-batch means)"
    say(table(title, columns, rows, note=WARM_NOTE.format(repeats=data["repeats"])))
    report["warm"] = data
    return data


# --- 3. loopback end to end ---------------------------------------------------------------
def section_e2e(plan: Plan, report: dict[str, Any]) -> dict[str, Any]:
    if not FASTMCP_PY.exists():
        say("3. End to end: skipped (no FastMCP venv; run bench/setup.sh)\n")
        return {}
    logdir = RESULTS / "logs"  # kept: the servers' output, for any error counted below
    logdir.mkdir(parents=True, exist_ok=True)
    res = loopback.run(
        plan.e2e_tasks, plan.e2e_concurrency, plan.e2e_rounds, plan.e2e_discover, logdir, progress
    )
    results: dict[str, loopback.ServerResult] = res["results"]
    rows = []
    for key, r in results.items():
        tps = [x.tasks_per_s for x in r.rounds]
        rows.append(
            [
                r.label,
                fmt(median(tps), 1),
                " / ".join(fmt(x, 1) for x in tps),
                fmt(median([x.latency_p50_ms for x in r.rounds]), 0),
                fmt(median([x.latency_p90_ms for x in r.rounds]), 0),
                fmt(median([x.polls_per_task for x in r.rounds]), 1),
                sum(x.errors for x in r.rounds),
                fmt(median(r.discover_rps), 0),
                fmt(res["startup_s"][key], 1),
            ]
        )
    ours, theirs = results.get("ours"), results.get("fastmcp")
    tps_ratio = dps_ratio = math.nan
    if ours and theirs:
        tps_ratio = ratio(
            median([x.tasks_per_s for x in ours.rounds]), median([x.tasks_per_s for x in theirs.rounds])
        )
        dps_ratio = ratio(median(ours.discover_rps), median(theirs.discover_rps))
    first_errors = [f"{k}: {x.first_error}" for k, r in results.items() for x in r.rounds if x.first_error]
    say(
        table(
            f"3. End to end over loopback HTTP: {plan.e2e_tasks} tasks x {plan.e2e_rounds} round(s), {plan.e2e_concurrency} in flight",
            [
                "server",
                "tasks/s p50",
                "per round",
                "latency p50 ms",
                "p90 ms",
                "polls/task",
                "errors",
                "discover req/s",
                "start s",
            ],
            rows,
            note=f"""
Ratio ours/FastMCP: tasks/s {fmt(tps_ratio, 2)}; server/discover req/s {fmt(dps_ratio, 2)}.
OURS RUNS AGAINST MOTO: `python -m taskgate.local` emulates DynamoDB, Step Functions (the real state machine,
  executed by moto's ASL interpreter on threads) and the worker Lambda in the server process, on the same 2 cores
  as the client and the other server. moto's cost dominates the task lifecycle, so the tasks/s ratio is a floor
  for taskgate, not what Lambda + DynamoDB + Step Functions would see (there, every call is a network round
  trip instead, and the work runs elsewhere). FastMCP runs its task in-process on Docket's memory:// backend.
server/discover touches no AWS on either side: it compares the HTTP + protocol stacks alone.
Client: stdlib http.client, one keep-alive connection per thread; each task is tools/call (as a task) then
  tasks/get at once and every {loopback.POLL_S * 1000:.0f} ms until terminal (the servers' advertised pollIntervalMs, 1 s and
  5 s, are ignored so the figure is throughput, not the advice). The tool returns at once (seconds=0).
"""
            + (
                f"First errors: {'; '.join(first_errors[:3])}\n  (server logs: {logdir.relative_to(ROOT)}/)\n"
                if first_errors
                else ""
            ),
        )
    )
    out = {
        "plan": {"tasks": plan.e2e_tasks, "concurrency": plan.e2e_concurrency, "rounds": plan.e2e_rounds},
        "startup_s": res["startup_s"],
        "servers": {k: r.summary() for k, r in results.items()},
        "ratio_tasks_per_s_ours_over_fastmcp": tps_ratio,
        "ratio_discover_rps_ours_over_fastmcp": dps_ratio,
        "poll_interval_s": loopback.POLL_S,
        "note": "ours runs against moto (in-process AWS emulator) whose cost dominates; the ratio is a floor",
    }
    report["e2e"] = out
    return out


# --- 4. memory ---------------------------------------------------------------------------
def section_memory(plan: Plan, report: dict[str, Any], tmp: Path) -> dict[str, Any]:
    progress(f"memory: {plan.memory_requests} + {plan.memory_requests} handler invocations (fresh process)")
    d = worker("memory.py", tmp / "memory.json", "--requests", str(plan.memory_requests))
    mib = 1024.0
    n = d["requests"]
    say(
        table(
            f"4. Memory: ApiFunction handler, {n:,} invocations (MiB)",
            ["point", "ru_maxrss (peak)", "current RSS"],
            [
                ["interpreter, before any import", fmt(d["maxrss_kib_interpreter"] / mib, 1), ""],
                ["handler module ready (init done)", fmt(d["maxrss_kib_ready"] / mib, 1), fmt(d["rss_kib_ready"] / mib, 1)],
                [f"after {n:,} requests", fmt(d["maxrss_kib_after"] / mib, 1), fmt(d["rss_kib_after"] / mib, 1)],
                [f"after {2 * n:,} requests", fmt(d["maxrss_kib_after_2x"] / mib, 1), fmt(d["rss_kib_after_2x"] / mib, 1)],
                ["growth over the first 1,000", fmt((d["maxrss_kib_after"] - d["maxrss_kib_ready"]) / mib, 2), fmt((d["rss_kib_after"] - d["rss_kib_ready"]) / mib, 2)],
                ["growth over the next 1,000", fmt((d["maxrss_kib_after_2x"] - d["maxrss_kib_after"]) / mib, 2), fmt((d["rss_kib_after_2x"] - d["rss_kib_after"]) / mib, 2)],
            ],
            note=f"""
handler(event, context) with a rotating mix of API Gateway v2 events (events/api_server_discover.json,
  events/api_tools_call_task.json, tasks/get of the task just created): {json.dumps(d["statuses"])}.
wiring is built on the in-memory fakes (no moto, no boto3 clients are created; boto3 is still imported), the fake
  table keeps at most {d["fake_rows_kept"]} rows, so growth is the handler's own. .venv, Linux ru_maxrss (KiB -> MiB).
""",
        )
    )  # fmt: skip
    report["memory"] = d
    return d


# --- summary ------------------------------------------------------------------------------
def _cold_summary(cold: dict[str, Any]) -> list[list[str]]:
    c, r, g = cold["contenders"], cold["ratios"], cold["goal_ours_over_import_mcp"]
    keys = ("before_get", "ours_get", "ours_call", "ours", "ours_layer", "floor", "floor_get", *BASELINES[:3])
    rows = [
        ["cold start", c[k]["label"], fmt(c[k]["spawn_to_ready_s"]["median"] * 1000, 0), "ms p50"]
        for k in keys
        if k in c
    ]
    if cold.get("nopyc"):
        rows.append(
            ["cold start", cold["nopyc"]["label"], fmt(median(cold["nopyc"]["seconds"]) * 1000, 0), "ms p50"]
        )
    pairs = ("before_get", "ours_get", "floor_get", "ours_call", "ours", "ours_layer", "floor")
    ratio_keys = (*(f"{k}/mcp" for k in pairs), "ours/fastmcp", "ours/fastmcp_tasks")
    rows += [["cold ratio", k, fmt(r[k]["ratio_of_medians"], 2), "x"] for k in ratio_keys if k in r]
    rows.append(
        [
            "cold floor",
            "taskgate's own code (ours_layer - floor)",
            fmt(cold["ours_layer_minus_floor_ms"], 0),
            "ms p50",
        ]
    )
    rows.append(
        [
            "cold goal",
            "ours/mcp < 0.40? (.venv / layer venv)",
            f"{fmt(g['venv'], 2)} / {fmt(g['layer_venv'], 2)}",
            "",
        ]
    )
    return rows  # fmt: skip


def _other_summaries(report: dict[str, Any]) -> list[list[str]]:
    rows = [
        ["warm", f"{r['path']}: {r['name']}", fmt(r["us_per_op_median"], 1), "µs/op p50"]
        for r in report.get("warm", {}).get("rows", [])
    ]
    if e2e := report.get("e2e"):
        rows += [
            ["e2e", s["label"], fmt(s["tasks_per_s_median"], 1), "tasks/s"] for s in e2e["servers"].values()
        ]
        rows.append(
            [
                "e2e ratio",
                "ours/FastMCP tasks/s (a floor: ours runs on moto)",
                fmt(e2e["ratio_tasks_per_s_ours_over_fastmcp"], 2),
                "x",
            ]
        )
        rows.append(
            [
                "e2e ratio",
                "ours/FastMCP server/discover req/s (no AWS)",
                fmt(e2e["ratio_discover_rps_ours_over_fastmcp"], 2),
                "x",
            ]
        )
    if mem := report.get("memory"):
        n, ready, after = mem["requests"], mem["maxrss_kib_ready"] / 1024, mem["maxrss_kib_after"] / 1024
        rows += [
            ["memory", "ru_maxrss, handler ready", fmt(ready, 1), "MiB"],
            ["memory", f"ru_maxrss, after {n:,} requests", fmt(after, 1), "MiB"],
            ["memory", f"growth over {n:,} requests", fmt(after - ready, 2), "MiB"],
        ]
    return rows  # fmt: skip


def summary(report: dict[str, Any]) -> None:
    rows = (_cold_summary(report["cold"]) if report.get("cold") else []) + _other_summaries(report)
    say(table("Summary", ["section", "figure", "value", "unit"], rows))


def git_head() -> str | None:
    try:
        out = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True, timeout=10
        )
    except OSError:
        return None
    return out.stdout.strip() or None


def checkout(ref: str, tmp: Path) -> Path:
    """``ref``'s source tree (git archive), for section 1's before_get contender."""
    tree = tmp / f"before-{ref.replace('/', '-')}"
    tree.mkdir()
    archive = subprocess.run(["git", "archive", ref], cwd=ROOT, capture_output=True, check=True)
    subprocess.run(["tar", "-x", "-C", str(tree)], input=archive.stdout, check=True)
    # The trimmed botocore data is built, not committed (bootstrap and layers/Makefile make it):
    # without it that revision's clients would load botocore's whole data, and every before row
    # would be slower for a reason no deployment has.
    if (tree / "layers" / "taskgate" / "taskgate" / "adapters" / "botocore_trim.py").exists():
        subprocess.run(
            [str(LAYER_PY), "-m", "taskgate.adapters.botocore_trim"],
            cwd=tree,
            env={**base_env(), "PYTHONPATH": str(tree / "layers" / "taskgate")},
            capture_output=True,
            check=True,
        )
    return tree


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true", help="fewer repetitions (about 2 minutes)")
    parser.add_argument(
        "--only", default=",".join(SECTIONS), help=f"comma-separated subset of {','.join(SECTIONS)}"
    )
    parser.add_argument("--no-setup", action="store_true", help="do not run bench/setup.sh first")
    parser.add_argument(
        "--before",
        metavar="REF",
        help="also time a tasks/get cold start of this git revision (e.g. main) in section 1's rounds",
    )
    parser.add_argument("--out", type=Path, default=RESULTS / "latest.json")
    args = parser.parse_args()
    only = [s.strip() for s in args.only.split(",") if s.strip()]
    unknown = sorted(set(only) - set(SECTIONS))
    if unknown:
        parser.error(f"unknown sections: {', '.join(unknown)}")
    plan = QUICK if args.quick else FULL
    if not args.no_setup:
        run_setup()
    started = time.time()
    report: dict[str, Any] = {
        "started": time.strftime("%Y-%m-%dT%H:%M:%S%z", time.localtime(started)),
        "mode": "quick" if args.quick else "full",
        "plan": dataclasses.asdict(plan),
        "machine": {
            "python": platform.python_version(),
            "implementation": platform.python_implementation(),
            "cpus": os.cpu_count(),
            "platform": platform.platform(),
        },
        "git_head": git_head(),
        "loadavg": {"start": loadavg()},
    }
    say(
        f"taskgate bench ({report['mode']}) {report['started']}  git {report['git_head']}  "
        f"Python {report['machine']['python']}  {report['machine']['cpus']} CPUs  loadavg {report['loadavg']['start']}"
    )
    say(
        "Shared, noisy machine: figures are medians; compare ratios measured in the same run, not absolute times.\n"
    )
    with tempfile.TemporaryDirectory(prefix="taskgate-bench-") as tmpdir:
        tmp = Path(tmpdir)
        for name in only:
            t0 = time.time()
            if name == "cold":
                section_cold(plan, report, checkout(args.before, tmp) if args.before else None)
            elif name == "warm":
                section_warm(plan, report, tmp)
            elif name == "e2e":
                section_e2e(plan, report)
            elif name == "memory":
                section_memory(plan, report, tmp)
            report["loadavg"][f"after_{name}"] = loadavg()
            report.setdefault("section_seconds", {})[name] = round(time.time() - t0, 1)
    report["seconds"] = round(time.time() - started, 1)
    summary(report)
    say(
        f"loadavg {report['loadavg']}; sections took {report.get('section_seconds')} s; total {report['seconds']} s"
    )
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(_clean(report), indent=1, default=str) + "\n")
    say(f"wrote {args.out.relative_to(ROOT) if args.out.is_relative_to(ROOT) else args.out}")


def _clean(value: Any) -> Any:
    """Strict JSON: NaN becomes null."""
    if isinstance(value, float):
        return None if math.isnan(value) else value
    if isinstance(value, dict):
        return {str(k): _clean(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_clean(v) for v in value]
    return value


if __name__ == "__main__":
    main()
