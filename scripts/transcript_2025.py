#!/usr/bin/env python3
"""A 2025-11-25 session against a taskgate server, printed as a transcript of the wire.

initialize → a task created → tasks/list shows it → tasks/result returns the tool's
result with the related-task _meta → a cancel of the finished task is refused (-32602).
With --long SECONDS, also a tasks/result wait of that length, carried over resumed
SSE streams (by default one read each, the client reconnecting every pollInterval;
a server with STREAM_MAX_SECONDS set holds each up to that long).

The session is the CLI's client (taskgate_cli.protocol.Client2025: initialize, the
session header, resuming streams with Last-Event-ID); a tracing transport prints what
goes over the wire. Needs only the standard library and this checkout.

    TASKGATE_DEV_TOKENS="demo-token=demo" make serve            # in one terminal
    python scripts/transcript_2025.py --token demo-token --long 45
"""

from __future__ import annotations

import argparse
import json
import pathlib
import sys
import time
from typing import Any

sys.path.append(str(pathlib.Path(__file__).resolve().parents[1] / "cli"))
from taskgate_cli.protocol import RELATED_TASK, Client2025
from taskgate_cli.transport import Http, Reply, RpcError, Transport, iter_sse


class Traced:
    """A transport that prints each request and what came back (an event stream is
    read to its end, summarised, then handed on)."""

    def __init__(self, inner: Transport) -> None:
        self.inner = inner
        self.stream = 0

    def send(
        self, method: str, headers: dict[str, str], body: Any = None, *, timeout: float | None = None
    ) -> Reply:
        if method == "GET":
            print(f"→ GET  Last-Event-ID: {headers.get('last-event-id')}")
        else:
            print(f"→ {method} {json.dumps(body) if body is not None else ''}".rstrip())
            self.stream = 0
        opened = time.monotonic()
        reply = self.inner.send(method, headers, body, timeout=timeout)
        if isinstance(body, dict) and body.get("method") == "initialize":
            print(f"← {reply.status} Mcp-Session-Id: {reply.headers.get('mcp-session-id')}")
        if reply.lines is None:
            print(
                f"← {reply.status} {json.dumps(reply.body) if reply.body is not None else ''}".rstrip() + "\n"
            )
            return reply
        with reply:
            lines = list(reply.lines)
        events = list(iter_sse(lines))
        messages = [m for e in events if (m := e.message())]
        last_id = next((e.id for e in reversed(events) if e.id), None)
        self.stream += 1
        print(
            f"← {reply.status} text/event-stream #{self.stream}: {time.monotonic() - opened:.1f}s, "
            f"{len(messages)} message(s), last event id {last_id}"
        )
        for message in messages:
            print(f"     {json.dumps(message)[:160]}")
        if any("result" in m or "error" in m for m in messages):
            print()
        return Reply(reply.status, reply.headers, lines=iter(lines))


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--url", default="http://127.0.0.1:3000/mcp")
    parser.add_argument("--token", help="bearer token of an identified caller (tasks/list needs one)")
    parser.add_argument("--long", type=float, default=0, help="also wait this many seconds on tasks/result")
    args = parser.parse_args()
    auth = {"authorization": f"Bearer {args.token}"} if args.token else {}
    s = Client2025(
        Traced(Http(args.url, auth, timeout=60)),
        capabilities={"tasks": {}},
        client_info={"name": "transcript", "version": "1"},
    )

    s.open()
    try:
        created = s.request(
            "tools/call",
            {
                "name": "slow_compute",
                "arguments": {"seconds": 2, "label": "transcript"},
                "task": {"ttl": 600000},
            },
        )
        task_id = created["task"]["taskId"]
        if args.token:
            listed = s.request("tasks/list", {})
            assert task_id in [t["taskId"] for t in listed["tasks"]]
        result = s.request("tasks/result", {"taskId": task_id})
        assert result["_meta"][RELATED_TASK] == {"taskId": task_id}
        try:
            s.request("tasks/cancel", {"taskId": task_id})
            raise SystemExit("the cancel of a finished task was not refused")
        except RpcError as refused:
            assert refused.code == -32602, refused

        if args.long:
            created = s.request(
                "tools/call",
                {"name": "slow_compute", "arguments": {"seconds": args.long, "label": "long"}, "task": {}},
            )
            started = time.monotonic()
            result = s.request("tasks/result", {"taskId": created["task"]["taskId"]})
            print(
                f"tasks/result answered after {time.monotonic() - started:.1f}s: "
                f"{result['content'][0]['text']}"
            )
    finally:
        s.close()
    print("transcript OK")
    return 0


if __name__ == "__main__":
    sys.exit(main())
