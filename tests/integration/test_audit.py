"""Audit trail and metrics, as CloudWatch would receive them from the Lambda handlers:
structured lines with owner and task id for each event, a metric per outcome, and
never a task's arguments or result in a log line."""

from __future__ import annotations

import json
import time
from typing import Any

import pytest

from taskgate import wiring
from taskgate.local.runtime import EmbeddedAws
from tests.integration.test_events import Context, _load

META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {
        "extensions": {"io.modelcontextprotocol/tasks": {}},
        "elicitation": {"form": {}},
    },
}
SECRET = "s3cr3t-argument-value"


# API Gateway's own domain: the Host of every request it forwards.
DOMAIN = "abc123.execute-api.us-east-1.amazonaws.com"


def _event(method: str, params: dict[str, Any], sub: str) -> dict[str, Any]:
    name = params.get("name") if method == "tools/call" else params.get("taskId")
    headers = {
        "content-type": "application/json",
        "host": DOMAIN,
        "mcp-protocol-version": "2026-07-28",
        "mcp-method": method,
    }
    if name:
        headers["mcp-name"] = name
    return {
        "version": "2.0",
        "routeKey": "POST /mcp",
        "rawPath": "/mcp",
        "rawQueryString": "",
        "headers": headers,
        "requestContext": {
            "http": {
                "method": "POST",
                "path": "/mcp",
                "protocol": "HTTP/1.1",
                "sourceIp": "192.0.2.1",
                "userAgent": "t",
            },
            "requestId": "r",
            "domainName": DOMAIN,
            "routeKey": "POST /mcp",
            "stage": "$default",
            "authorizer": {"jwt": {"claims": {"sub": sub}, "scopes": None}},
        },
        "body": json.dumps(
            {"jsonrpc": "2.0", "id": 1, "method": method, "params": {**params, "_meta": META}}
        ),
        "isBase64Encoded": False,
    }


def _lines(text: str) -> list[dict[str, Any]]:
    out = []
    for line in text.splitlines():
        try:
            value = json.loads(line)
        except ValueError:
            continue
        if isinstance(value, dict):
            out.append(value)
    return out


def test_audit_lines_and_metrics_per_outcome(
    aws: EmbeddedAws, capsys: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level("INFO")
    import io
    import logging

    # A second handler on the Powertools logger, with its formatter: the JSON lines
    # exactly as Lambda would print them, appended keys included.
    formatted = io.StringIO()
    powertools = logging.getLogger("taskgate")
    mirror = logging.StreamHandler(formatted)
    mirror.setFormatter(powertools.handlers[0].formatter)
    powertools.addHandler(mirror)
    api = _load("functions/api/api_handler.py")

    def call(method: str, params: dict[str, Any], sub: str = "alice") -> dict[str, Any]:
        reply = api.handler(_event(method, params, sub), Context())
        return json.loads(reply["body"])  # type: ignore[no-any-return]

    done_id = call("tools/call", {"name": "slow_compute", "arguments": {"seconds": 0, "label": SECRET}})[
        "result"
    ]["taskId"]
    long_id = call("tools/call", {"name": "slow_compute", "arguments": {"seconds": 30}})["result"]["taskId"]
    ask_id = call("tools/call", {"name": "confirm_delete", "arguments": {"filename": SECRET}})["result"][
        "taskId"
    ]
    deadline = time.monotonic() + 10
    while wiring.root().store.get(ask_id).status.value != "input_required":  # type: ignore[union-attr]
        assert time.monotonic() < deadline
        time.sleep(0.05)
    call(
        "tasks/update",
        {
            "taskId": ask_id,
            "inputResponses": {"confirm_delete": {"action": "accept", "content": {"confirm": True}}},
        },
    )
    call("tasks/cancel", {"taskId": long_id})
    assert "error" in call("tasks/get", {"taskId": done_id}, sub="mallory")
    call("tools/call", {"name": "failing_job", "arguments": {}})
    failed_id = call("tools/call", {"name": "protocol_error_job", "arguments": {}})["result"]["taskId"]
    while any(not (wiring.root().store.get(t) or None).status.terminal for t in (done_id, ask_id, failed_id)):  # type: ignore[union-attr]
        assert time.monotonic() < deadline + 10
        time.sleep(0.05)
    time.sleep(0.3)

    # Metrics are EMF lines printed to stdout; log records carry their extra keys.
    text = capsys.readouterr().out
    lines = _lines(text)
    audit = [
        {k: v for k, v in vars(r).items() if k in {"audit", "taskId", "owner", "status", "reason", "method"}}
        for r in caplog.records
        if hasattr(r, "audit")
    ]
    logged = "\n".join(f"{r.getMessage()} {vars(r)}" for r in caplog.records)
    kinds = {line["audit"] for line in audit}
    assert {"task_created", "input_submitted", "cancel_requested", "denied", "step_finished"} <= kinds
    for line in audit:
        assert line.get("taskId") or line["audit"] == "denied"
        if line["audit"] != "step_finished":
            assert line["owner"] in {"alice", "mallory"}
    denied = next(line for line in audit if line["audit"] == "denied")
    assert denied["owner"] == "mallory" and denied["taskId"] == done_id
    statuses = {line.get("status") for line in audit if line["audit"] == "step_finished"}
    assert {"completed", "input_required"} <= statuses

    metrics = set()
    for line in lines:
        for directive in line.get("_aws", {}).get("CloudWatchMetrics", []):
            metrics |= {m["Name"] for m in directive["Metrics"]}
    assert {
        "TasksCreated",
        "CancelRequested",
        "InputSubmitted",
        "TaskAccessDenied",
        "TasksCompleted",
        "InputRequested",
    } <= metrics

    powertools.removeHandler(mirror)
    # Task ids may be logged; what callers sent and got back may not.
    assert SECRET not in text and SECRET not in logged and SECRET not in formatted.getvalue()
    assert "finished after" not in logged
