"""Strands Agents at its defaults (2026-07-28, no tasks_config) calls a long tool plainly,
then does what its model would with what it got: a result is the answer; a task handle is
driven with the handle tools (status every POLL seconds, then the result). One JSON line per
event. Run with the hosts' venv: .tools/hosts/py-mcp2/bin/python strands_handle.py URL SECONDS"""

from __future__ import annotations

import json
import re
import sys
import time
from importlib.metadata import version
from typing import Any

from strands.tools.mcp import MCPClient

POLL = 30.0


def say(event: str, **fields: Any) -> None:
    print(
        json.dumps({"client": "strands", "event": event, "t": round(time.monotonic() - START, 1), **fields}),
        flush=True,
    )


def text_of(result: Any) -> str:
    return "".join(part.get("text", "") for part in result["content"])


START = time.monotonic()


def main(url: str, seconds: float) -> None:
    progress: list[float] = []
    client = MCPClient(
        url=url,
        progress_callback=lambda p, total, message: progress.append(round(time.monotonic() - START, 1)),
    )
    with client:
        say("open", version=f"strands-agents {version('strands-agents')} (mcp {version('mcp')})")
        first = client.call_tool_sync("call-1", "slow_compute", {"seconds": seconds, "label": "strands"})
        answer = text_of(first)
        say("answered", status=first["status"], text=answer[:160], progress_seen=len(progress))
        match = re.search(r"background task ([0-9a-f-]{36})", answer)
        if match is None:
            return
        handle = match.group(1)
        while True:
            time.sleep(POLL)
            status = client.call_tool_sync("call-s", "taskgate_task_status", {"handle": handle})
            say("handle_status", text=text_of(status)[:160])
            if " is working" not in text_of(status):
                break
        result = client.call_tool_sync("call-r", "taskgate_task_result", {"handle": handle})
        say("handle_result", status=result["status"], text=text_of(result)[:160])


if __name__ == "__main__":
    main(sys.argv[1], float(sys.argv[2]))
