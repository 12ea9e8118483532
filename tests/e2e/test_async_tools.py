"""An ``async def`` tool through a released client (issue 17, item 3): ``mcp==1.30.0`` calls
tests/fixture_tools.py ``async_rollout`` against ``python -m taskgate.local``, plainly and as a
task, and gets its question (``elicitation_callback``), its progress and its result. On the old
main the same tool failed every call with "Internal error while running the tool".

As a task, its progress reaches a 2025-11-25 client as the task's ``statusMessage``
(``tasks/get``) and, with a progressToken, as the tool's numbers on tasks/result's stream.
"""

from __future__ import annotations

import json
import os
import pathlib
import subprocess
from collections.abc import Iterator
from typing import Any

import pytest

from tests.e2e.local_server import run_setup, running_server

pytestmark = pytest.mark.slow

ROOT = pathlib.Path(__file__).resolve().parents[2]
CLIENTS2025 = ROOT / "tests" / "e2e" / "clients2025"
PY2025 = ROOT / ".tools" / "clients2025" / "py" / "bin" / "python"


@pytest.fixture(scope="module")
def server_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    run_setup(CLIENTS2025 / "setup.sh", "clients2025")
    log = tmp_path_factory.mktemp("async-tools") / "server.log"
    with running_server(log, TOOL_MODULES="tests.fixture_tools") as url:
        yield url


def _drive(url: str, scenario: str) -> dict[str, Any]:
    done = subprocess.run(
        [str(PY2025), str(CLIENTS2025 / "mcp_async_tool.py"), url, scenario],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        env=dict(os.environ),
    )
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    assert done.returncode == 0 and lines, f"{done.stdout}\n{done.stderr}"
    out: dict[str, Any] = json.loads(lines[-1])
    print(f"\n[mcp 1.30.0, {scenario}] {json.dumps(out)}")
    assert "error" not in out, out.get("traceback")
    return out


def test_mcp_1_30_calls_an_async_tool_plainly(server_url: str) -> None:
    out = _drive(server_url, "plain")
    assert out["version"] == "1.30.0"
    assert out["isError"] is False and out["texts"] == ["api rolled out in 3 waves"]
    # Its first call, as the tool has never run, is a hidden task (issue 27): the waves' numbers
    # reach the call's stream as the task keeps them, at most one a pollInterval, so reports made
    # 0.2 s apart may come as fewer, each later than the last, the last one always.
    waves = [p["progress"] for p in out["progress"]]
    assert waves and waves == sorted(set(waves)) and set(waves) <= {1, 2, 3}, out["progress"]
    assert out["progress"][-1] == {"progress": 3, "total": 3, "message": "wave 3 of 3"}
    assert out["logs"][-1] == {"message": "wave 3 done", "data": {"service": "api"}}


def test_mcp_1_30_answers_an_async_tools_question_in_a_plain_call(server_url: str) -> None:
    # A plain 2025 call that asks runs as a hidden task: the question comes on the call's own
    # stream, then the result; the progress on it is the task's (issue 18 brings the numbers).
    out = _drive(server_url, "plain_ask")
    assert out["asked"] == ["Roll out api in 3 waves?"]
    assert out["isError"] is False and out["texts"] == ["api rolled out in 3 waves"]
    assert out["progress"] and out["notifications"].count("notifications/progress") == len(out["progress"])


def test_mcp_1_30_runs_an_async_tool_as_a_task(server_url: str) -> None:
    out = _drive(server_url, "task")
    assert out["asked"] == ["Roll out jobs in 3 waves?"]
    assert out["isError"] is False and out["texts"] == ["jobs rolled out in 3 waves"]
    statuses = [tuple(s) for s in out["statuses"]]
    told = [tuple(s) for s in out["told"]]
    # What tasks/get showed while the client polled, and what the server told on tasks/result's
    # stream: a loaded machine's poll can miss the moment between a question and its answer
    # (the callback answers at once), the notifications cannot.
    assert ("input_required", "Waiting for input from the client.") in told
    # The waves' progress, as the task's statusMessage, while it worked (a wave takes 1 s)…
    working = {message for status, message in statuses + told if status == "working"}
    assert {"wave 1 of 3", "wave 2 of 3"} & working
    assert statuses[-1][0] == "completed" and told[-1][0] == "completed"
    # …and as the tool reported it, numbers and all, on tasks/result's stream (the task was
    # created with a progressToken); the last report is never dropped.
    assert out["progress"] and out["progress"][-1] == {"progress": 3, "total": 3, "message": "wave 3 of 3"}
    assert [p["progress"] for p in out["progress"]] == sorted({p["progress"] for p in out["progress"]})
    # The tool's log lines too, at the level the session set (info).
    assert out["logs"][-1] == {"message": "wave 3 done", "data": {"service": "jobs"}}
