#!/usr/bin/env python3
"""Walk-through of a taskgate server over the 2026-07-28 tasks extension, printing the raw
results: the CLI's client (taskgate_cli.protocol.Client2026) builds and reads every request.

1. slow_compute as a task, polled to completed
2. confirm_delete parked in input_required, answered with tasks/update, completed
3. a 60-second slow_compute cancelled, terminal within 2 s

    python scripts/walkthrough.py --url http://127.0.0.1:3000/mcp
Exits non-zero if any step does not behave. Needs only the standard library and this
checkout (the CLI package is taken from cli/ when it is not installed).
"""

from __future__ import annotations

import argparse
import pathlib
import sys
import time
from typing import Any

sys.path.append(str(pathlib.Path(__file__).resolve().parents[1] / "cli"))
from taskgate_cli.protocol import Client2026
from taskgate_cli.transport import ConnectionTrouble, Http, RpcError


def rpc(client: Client2026, method: str, params: dict[str, Any]) -> dict[str, Any]:
    try:
        return client.request(method, params)
    except RpcError as exc:
        raise SystemExit(f"{method} failed: {exc}") from None
    except ConnectionTrouble as exc:
        raise SystemExit(f"{method} failed: {exc.message}") from None


def show(label: str, task: dict[str, Any]) -> None:
    extra = task.get("statusMessage", "")
    print(f"  {label:<10} {task['status']:<15} {extra}")


def poll(client: Client2026, task_id: str, until: set[str], timeout: float) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    last = None
    while True:
        task = rpc(client, "tasks/get", {"taskId": task_id})
        if (task["status"], task.get("statusMessage")) != last:
            show("tasks/get", task)
            last = (task["status"], task.get("statusMessage"))
        if task["status"] in until:
            return task
        if time.monotonic() > deadline:
            raise SystemExit(f"task {task_id} still {task['status']} after {timeout}s")
        time.sleep(min(task.get("pollIntervalMs", 1000), 250) / 1000)


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--url", default="http://127.0.0.1:3000/mcp")
    parser.add_argument("--token", help="bearer token, for a deployment behind an authorizer")
    args = parser.parse_args()
    client = Client2026(Http(args.url, {"authorization": f"Bearer {args.token}"} if args.token else {}, 30))
    terminal = {"completed", "failed", "cancelled"}

    discover = rpc(client, "server/discover", {})
    print(
        f"server/discover: {discover['_meta']['io.modelcontextprotocol/serverInfo']}, "
        f"extensions={list(discover['capabilities']['extensions'])}"
    )

    print("\n1. slow_compute(seconds=3) as a task")
    created = rpc(
        client, "tools/call", {"name": "slow_compute", "arguments": {"seconds": 3, "label": "demo"}}
    )
    print(
        f"  tools/call  resultType={created['resultType']} taskId={created['taskId']} "
        f"ttlMs={created['ttlMs']} pollIntervalMs={created['pollIntervalMs']}"
    )
    done = poll(client, created["taskId"], terminal, 30)
    assert done["status"] == "completed", done
    print(f"  result      {done['result']['content'][0]['text']}")

    print("\n2. confirm_delete(filename=report.csv): a question, then an answer")
    created = rpc(client, "tools/call", {"name": "confirm_delete", "arguments": {"filename": "report.csv"}})
    parked = poll(client, created["taskId"], {"input_required"} | terminal, 30)
    assert parked["status"] == "input_required", parked
    for key, request in parked["inputRequests"].items():
        print(f"  asks        [{key}] {request['params']['message']}")
    ack = rpc(
        client,
        "tasks/update",
        {
            "taskId": created["taskId"],
            "inputResponses": {"confirm_delete": {"action": "accept", "content": {"confirm": True}}},
        },
    )
    print(f"  tasks/update {ack}")
    done = poll(client, created["taskId"], terminal, 30)
    assert done["status"] == "completed", done
    print(f"  result      {done['result']['content'][0]['text']}")

    print("\n3. slow_compute(seconds=60), cancelled")
    created = rpc(
        client, "tools/call", {"name": "slow_compute", "arguments": {"seconds": 60, "label": "long"}}
    )
    poll(client, created["taskId"], {"working"}, 10)
    started = time.monotonic()
    print(f"  tasks/cancel {rpc(client, 'tasks/cancel', {'taskId': created['taskId']})}")
    done = poll(client, created["taskId"], terminal, 10)
    elapsed = time.monotonic() - started
    print(f"  terminal after {elapsed:.2f}s: {done['status']}")
    assert done["status"] == "cancelled" and elapsed < 2, (done, elapsed)
    print("\nwalk-through OK")
    return 0


if __name__ == "__main__":
    sys.exit(main())
