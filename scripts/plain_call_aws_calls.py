#!/usr/bin/env python3
"""The AWS calls a plain tools/call makes, counted with the IAM check's recorder
(taskgate/local/aws_calls.py), on the local runtime (moto, the real state machine, the worker
in-process). Written to run on any revision since issue 18, so a known-quick tool's calls can be
compared before and after issue 27:

    python scripts/plain_call_aws_calls.py                       # this checkout
    git worktree add /tmp/before <ref> && cd /tmp/before && \\
      PYTHONPATH=layers/taskgate:layers/tools:cli:. path/to/.venv/bin/python path/to/scripts/plain_call_aws_calls.py

Each line is one call, then the AWS calls it made by function (ApiFunction: on the request;
TaskStateMachine and WorkerFunction: off it). The tool is ``unicode_result`` (tests/fixture_tools.py:
optional, declares no ``expected_seconds``, a pause of ``seconds``), against ``greet``, which can never
be a task and always runs inline. A "new API environment" is a fresh composition root over the same
table: what a cold Lambda environment knows.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
for path in ("layers/taskgate", "layers/tools", "cli", "."):
    if str(ROOT / path) not in sys.path:
        sys.path.insert(0, str(ROOT / path))

PROTOCOL_2026 = "2026-07-28"


def _headers_2026(name: str) -> dict[str, str]:
    return {
        "content-type": "application/json",
        "accept": "application/json, text/event-stream",
        "mcp-protocol-version": PROTOCOL_2026,
        "mcp-method": "tools/call",
        "mcp-name": name,
    }


def _body_2026(name: str, arguments: dict[str, Any], msg_id: int) -> dict[str, Any]:
    meta = {
        "io.modelcontextprotocol/protocolVersion": PROTOCOL_2026,
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "aws-calls", "version": "1"},
    }
    params = {"name": name, "arguments": arguments, "_meta": meta}
    return {"jsonrpc": "2.0", "id": msg_id, "method": "tools/call", "params": params}


def _answer(text: str) -> str:
    """The text of the call's answer, from a JSON body or the last message of an SSE one."""
    messages = [
        json.loads(line[5:]) for line in text.splitlines() if line.startswith("data:") and line[5:].strip()
    ]
    body = messages[-1] if messages else json.loads(text)
    if "error" in body:
        return f"error {body['error']['code']}"
    content = body["result"].get("content") or [{}]
    return str(content[0].get("text", ""))[:40]


def measure() -> list[tuple[str, str, dict[str, Counter[str]]]]:
    """(what, the answer, AWS calls by function and operation) for each call."""
    os.environ["TOOL_MODULES"] = "taskgate_conformance,taskgate_tools,tests.fixture_tools"
    os.environ.setdefault("POWERTOOLS_LOG_LEVEL", "WARNING")  # the worker's step lines
    os.environ.setdefault("POWERTOOLS_METRICS_DISABLED", "true")
    from starlette.testclient import TestClient

    from taskgate import wiring
    from taskgate.http_app import create_app
    from taskgate.local import aws_calls
    from taskgate.local.runtime import EmbeddedAws

    directory = Path(tempfile.mkdtemp(prefix="aws-calls-"))
    aws_calls.install(directory)
    aws_calls.active = True
    aws = EmbeddedAws().start()
    rows: list[tuple[str, str, dict[str, Counter[str]]]] = []
    try:
        ids = iter(range(1, 1000))

        def call(what: str, name: str, arguments: dict[str, Any]) -> None:
            settings = wiring.root().settings
            owner = getattr(settings, "anonymous_owner", "anonymous")
            app = create_app(lambda: wiring.root().server, anonymous_owner=owner, max_body_bytes=1_048_576)
            seen = len(aws_calls.read(directory))
            with TestClient(app, base_url="http://localhost") as http:
                resp = http.post(
                    "/mcp", json=_body_2026(name, arguments, next(ids)), headers=_headers_2026(name)
                )
            made = aws_calls.read(directory)[seen:]
            by: dict[str, Counter[str]] = {}
            for line in made:
                by.setdefault(line["function"], Counter())[line["operation"]] += 1
            rows.append((what, _answer(resp.text), by))

        quick = {"kilobytes": 1, "seconds": 0}
        call("greet (never a task: always inline)", "greet", {"name": "a"})
        call("unicode_result, 1st call", "unicode_result", quick)
        call("unicode_result, 2nd call", "unicode_result", quick)
        call("unicode_result, 3rd call", "unicode_result", quick)
        wiring.reset()  # a new API environment: nothing cached
        call("unicode_result, 1st call in a new API environment", "unicode_result", quick)
        call("unicode_result, 2nd call there", "unicode_result", quick)
    finally:
        aws.stop()
    return rows


def main() -> None:
    for what, answer, by in measure():
        api = sum(by.get("ApiFunction", Counter()).values())
        print(f"{what:55} {answer!r:24} ApiFunction {api:2}")
        for function in sorted(by):
            ops = ", ".join(f"{op} x{n}" for op, n in sorted(by[function].items()))
            print(f"    {function}: {ops}")


if __name__ == "__main__":
    main()
