"""Section 4 worker: peak RSS of the ApiFunction handler over many invocations.

Run by bench/run.py in a fresh process with the ApiFunction's environment. The
handler module is loaded as Lambda loads it, on a composition root built on the
in-memory ports (``taskgate.testing.memory``; no moto, no boto3 calls): the fake table keeps at most 256 rows
and its workflow completes each task at once, so what grows is the server, not the
fake. Invokes ``handler(event, context)`` with a rotating mix of API Gateway v2
events (server/discover, tools/call, tasks/get of the task just created) and writes
ru_maxrss and current RSS before and after as JSON to ``--out``.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import resource
import sys
from pathlib import Path
from typing import Any

from benchlib import ROOT

from taskgate import wiring
from taskgate.clock import now_ms
from taskgate.config import Settings
from taskgate.root import Taskgate
from taskgate.testing.memory import Memory, MemoryTaskStore, MemoryWorkflow

RSS_START_KIB = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def maxrss_kib() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux


def current_rss_kib() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * (os.sysconf("SC_PAGE_SIZE") // 1024)


class LambdaContext:
    function_name = "taskgate-bench-api"
    function_version = "$LATEST"
    memory_limit_in_mb = 512
    invoked_function_arn = "arn:aws:lambda:us-east-1:123456789012:function:taskgate-bench-api"
    aws_request_id = "bench-request"
    log_group_name = "/aws/lambda/taskgate-bench-api"
    log_stream_name = "bench"

    def get_remaining_time_in_millis(self) -> int:
        return 29_000


def event(name: str) -> dict[str, Any]:
    return json.loads((ROOT / "events" / name).read_text())  # type: ignore[no-any-return]


def get_event(template: dict[str, Any], task_id: str, msg_id: int) -> dict[str, Any]:
    ev: dict[str, Any] = json.loads(json.dumps(template))
    ev["headers"]["mcp-name"] = task_id
    body = json.loads(ev["body"])
    body["id"] = msg_id
    body["params"]["taskId"] = task_id
    ev["body"] = json.dumps(body)
    return ev


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--requests", type=int, default=1000)
    args = parser.parse_args()

    store = MemoryTaskStore(capacity=256)
    memory = Memory(clock=now_ms, store=store, workflow=MemoryWorkflow(complete_into=store))
    wiring.reset(to=Taskgate(Settings.from_env(), memory.ports(with_bucket=False)))
    real_stdout = sys.stdout
    sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - Powertools' log lines and EMF metrics
    api = importlib.import_module("api_handler")
    ctx = LambdaContext()
    discover = event("api_server_discover.json")
    create = event("api_tools_call_task.json")
    get_template = event("api_tasks_get.json")

    statuses: dict[str, int] = {}
    last_task = ""

    def invoke(i: int) -> None:
        nonlocal last_task
        kind = ("discover", "tools/call", "tasks/get")[i % 3]
        if kind == "discover":
            ev = discover
        elif kind == "tools/call":
            ev = create
        else:
            ev = get_event(get_template, last_task, i)
        resp = api.handler(ev, ctx)
        key = f"{kind} {resp['statusCode']}"
        statuses[key] = statuses.get(key, 0) + 1
        if kind == "tools/call":
            last_task = json.loads(resp["body"])["result"]["taskId"]

    ready_max, ready_cur = maxrss_kib(), current_rss_kib()
    for i in range(args.requests):
        invoke(i)
    after_max, after_cur = maxrss_kib(), current_rss_kib()
    for i in range(args.requests, 2 * args.requests):
        invoke(i)
    again_max, again_cur = maxrss_kib(), current_rss_kib()
    sys.stdout = real_stdout
    args.out.write_text(
        json.dumps(
            {
                "requests": args.requests,
                "maxrss_kib_interpreter": RSS_START_KIB,
                "maxrss_kib_ready": ready_max,
                "maxrss_kib_after": after_max,
                "maxrss_kib_after_2x": again_max,
                "rss_kib_ready": ready_cur,
                "rss_kib_after": after_cur,
                "rss_kib_after_2x": again_cur,
                "fake_rows_kept": len(store.records),
                "statuses": statuses,
            },
            indent=1,
        )
    )


if __name__ == "__main__":
    main()
