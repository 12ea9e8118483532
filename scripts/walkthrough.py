#!/usr/bin/env python3
"""Raw HTTP walk-through of a taskgate server (2026-07-28 tasks extension), stdlib only.

1. slow_compute as a task, polled to completed
2. confirm_delete parked in input_required, answered with tasks/update, completed
3. a 60-second slow_compute cancelled, terminal within 2 s

    python scripts/walkthrough.py --url http://127.0.0.1:3000/mcp
Exits non-zero if any step does not behave.
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
import time
import urllib.error
import urllib.request
from typing import Any

PROTOCOL = "2026-07-28"
META = {
    "io.modelcontextprotocol/protocolVersion": PROTOCOL,
    "io.modelcontextprotocol/clientCapabilities": {"extensions": {"io.modelcontextprotocol/tasks": {}}},
}
_ids = itertools.count(1)


def rpc(url: str, method: str, params: dict[str, Any], token: str | None = None) -> dict[str, Any]:
    name = params.get("name") if method == "tools/call" else params.get("taskId")
    headers = {"content-type": "application/json", "mcp-protocol-version": PROTOCOL, "mcp-method": method}
    if isinstance(name, str):
        headers["mcp-name"] = name
    if token:
        headers["authorization"] = f"Bearer {token}"
    body = {"jsonrpc": "2.0", "id": next(_ids), "method": method, "params": {**params, "_meta": META}}
    request = urllib.request.Request(url, json.dumps(body).encode(), headers, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=30) as resp:
            reply = json.loads(resp.read())
    except urllib.error.HTTPError as err:
        reply = json.loads(err.read())
    if "error" in reply:
        raise SystemExit(f"{method} failed: {reply['error']}")
    return reply["result"]  # type: ignore[no-any-return]


def show(label: str, task: dict[str, Any]) -> None:
    extra = task.get("statusMessage", "")
    print(f"  {label:<10} {task['status']:<15} {extra}")


def poll(url: str, task_id: str, until: set[str], timeout: float) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    last = None
    while True:
        task = rpc(url, "tasks/get", {"taskId": task_id})
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
    url = args.url
    terminal = {"completed", "failed", "cancelled"}

    discover = rpc(url, "server/discover", {}, args.token)
    print(
        f"server/discover: {discover['_meta']['io.modelcontextprotocol/serverInfo']}, "
        f"extensions={list(discover['capabilities']['extensions'])}"
    )

    print("\n1. slow_compute(seconds=3) as a task")
    created = rpc(
        url, "tools/call", {"name": "slow_compute", "arguments": {"seconds": 3, "label": "demo"}}, args.token
    )
    print(
        f"  tools/call  resultType={created['resultType']} taskId={created['taskId']} "
        f"ttlMs={created['ttlMs']} pollIntervalMs={created['pollIntervalMs']}"
    )
    done = poll(url, created["taskId"], terminal, 30)
    assert done["status"] == "completed", done
    print(f"  result      {done['result']['content'][0]['text']}")

    print("\n2. confirm_delete(filename=report.csv): a question, then an answer")
    created = rpc(
        url, "tools/call", {"name": "confirm_delete", "arguments": {"filename": "report.csv"}}, args.token
    )
    parked = poll(url, created["taskId"], {"input_required"} | terminal, 30)
    assert parked["status"] == "input_required", parked
    for key, request in parked["inputRequests"].items():
        print(f"  asks        [{key}] {request['params']['message']}")
    ack = rpc(
        url,
        "tasks/update",
        {
            "taskId": created["taskId"],
            "inputResponses": {"confirm_delete": {"action": "accept", "content": {"confirm": True}}},
        },
        args.token,
    )
    print(f"  tasks/update {ack}")
    done = poll(url, created["taskId"], terminal, 30)
    assert done["status"] == "completed", done
    print(f"  result      {done['result']['content'][0]['text']}")

    print("\n3. slow_compute(seconds=60), cancelled")
    created = rpc(
        url, "tools/call", {"name": "slow_compute", "arguments": {"seconds": 60, "label": "long"}}, args.token
    )
    poll(url, created["taskId"], {"working"}, 10)
    started = time.monotonic()
    print(f"  tasks/cancel {rpc(url, 'tasks/cancel', {'taskId': created['taskId']}, args.token)}")
    done = poll(url, created["taskId"], terminal, 10)
    elapsed = time.monotonic() - started
    print(f"  terminal after {elapsed:.2f}s: {done['status']}")
    assert done["status"] == "cancelled" and elapsed < 2, (done, elapsed)
    print("\nwalk-through OK")
    return 0


if __name__ == "__main__":
    sys.exit(main())
