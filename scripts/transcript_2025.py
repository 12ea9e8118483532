#!/usr/bin/env python3
"""A 2025-11-25 session against a taskgate server, printed as a transcript (stdlib only).

initialize → a task created → tasks/list shows it → tasks/result returns the tool's
result with the related-task _meta → a cancel of the finished task is refused (-32602).
With --long SECONDS, also a tasks/result wait of that length, carried over resumed
SSE streams (each shorter than the server's STREAM_MAX_SECONDS).

    TASKGATE_DEV_TOKENS="demo-token=demo" make serve            # in one terminal
    python scripts/transcript_2025.py --token demo-token --long 45
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

_ids = itertools.count(1)


class Session:
    def __init__(self, url: str, token: str | None) -> None:
        self.url = url
        self.token = token
        self.session_id: str | None = None

    def _headers(self, **extra: str) -> dict[str, str]:
        h = {"content-type": "application/json", "accept": "application/json, text/event-stream"}
        if self.session_id:
            h["mcp-session-id"] = self.session_id
            h["mcp-protocol-version"] = "2025-11-25"
        if self.token:
            h["authorization"] = f"Bearer {self.token}"
        h.update(extra)
        return h

    def _open(self, request: urllib.request.Request) -> tuple[int, dict[str, str], str]:
        try:
            with urllib.request.urlopen(request, timeout=60) as resp:
                return resp.status, {k.lower(): v for k, v in resp.headers.items()}, resp.read().decode()
        except urllib.error.HTTPError as err:
            return err.code, {k.lower(): v for k, v in err.headers.items()}, err.read().decode()

    def post(self, message: dict[str, Any]) -> tuple[int, dict[str, str], str]:
        print(f"→ POST {json.dumps(message)}")
        req = urllib.request.Request(self.url, json.dumps(message).encode(), self._headers(), method="POST")
        return self._open(req)

    def get(self, last_event_id: str) -> tuple[int, dict[str, str], str]:
        print(f"→ GET  Last-Event-ID: {last_event_id}")
        req = urllib.request.Request(
            self.url, headers=self._headers(**{"last-event-id": last_event_id}), method="GET"
        )
        return self._open(req)

    def call(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        status, headers, body = self.post(
            {"jsonrpc": "2.0", "id": next(_ids), "method": method, "params": params}
        )
        if method == "initialize":
            self.session_id = headers.get("mcp-session-id")
            print(f"← {status} Mcp-Session-Id: {self.session_id}")
        reply: dict[str, Any] = json.loads(body)
        print(f"← {status} {json.dumps(reply)}\n")
        return reply


def sse_messages(text: str) -> tuple[list[dict[str, Any]], str | None]:
    messages, last_id = [], None
    for block in text.split("\n\n"):
        data = [line[5:].strip() for line in block.split("\n") if line.startswith("data:")]
        ids = [line[3:].strip() for line in block.split("\n") if line.startswith("id:")]
        if ids:
            last_id = ids[-1]
        if data and data[0]:
            messages.append(json.loads("\n".join(data)))
    return messages, last_id


def result_over_streams(s: Session, task_id: str) -> dict[str, Any]:
    status, headers, body = s.post(
        {"jsonrpc": "2.0", "id": next(_ids), "method": "tasks/result", "params": {"taskId": task_id}}
    )
    stream = 1
    opened = time.monotonic()
    resume_from: str | None = None
    while True:
        if headers.get("content-type", "").startswith("application/json"):
            reply: dict[str, Any] = json.loads(body)
            print(f"← {status} {json.dumps(reply)}\n")
            return reply
        messages, last_id = sse_messages(body)
        print(
            f"← {status} text/event-stream #{stream}: {time.monotonic() - opened:.1f}s, "
            f"{len(messages)} message(s), last event id {last_id}"
        )
        for message in messages:
            print(f"     {json.dumps(message)[:160]}")
            if "result" in message or "error" in message:
                print()
                return message
        # Notifications carry no id: resume after the last logged event of any stream.
        resume_from = last_id or resume_from
        if resume_from is None:
            raise SystemExit("stream ended with no event id to resume from")
        stream += 1
        opened = time.monotonic()
        status, headers, body = s.get(resume_from)


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--url", default="http://127.0.0.1:3000/mcp")
    parser.add_argument("--token", help="bearer token of an identified caller (tasks/list needs one)")
    parser.add_argument("--long", type=float, default=0, help="also wait this many seconds on tasks/result")
    args = parser.parse_args()
    s = Session(args.url, args.token)

    init = s.call(
        "initialize",
        {
            "protocolVersion": "2025-11-25",
            "capabilities": {"tasks": {}},
            "clientInfo": {"name": "transcript", "version": "1"},
        },
    )
    assert init["result"]["protocolVersion"] == "2025-11-25"
    created = s.call(
        "tools/call",
        {"name": "slow_compute", "arguments": {"seconds": 2, "label": "transcript"}, "task": {"ttl": 600000}},
    )
    task_id = created["result"]["task"]["taskId"]
    if args.token:
        listed = s.call("tasks/list", {})
        assert task_id in [t["taskId"] for t in listed["result"]["tasks"]]
    result = result_over_streams(s, task_id)
    assert result["result"]["_meta"]["io.modelcontextprotocol/related-task"] == {"taskId": task_id}
    refused = s.call("tasks/cancel", {"taskId": task_id})
    assert refused["error"]["code"] == -32602

    if args.long:
        created = s.call(
            "tools/call",
            {"name": "slow_compute", "arguments": {"seconds": args.long, "label": "long"}, "task": {}},
        )
        started = time.monotonic()
        result = result_over_streams(s, created["result"]["task"]["taskId"])
        print(
            f"tasks/result answered after {time.monotonic() - started:.1f}s: "
            f"{result['result']['content'][0]['text']}"
        )
    print("transcript OK")
    return 0


if __name__ == "__main__":
    sys.exit(main())
