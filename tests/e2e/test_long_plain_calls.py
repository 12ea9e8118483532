"""Plain calls of long tools (issue 18) with the released SDKs, against
`python -m taskgate.local` at its defaults (a front that buffers and cuts at 29 s), in its
Lambda mode (each request's work frozen once answered; none may leave a thread running):

- Python ``mcp==1.30.0`` and ``@modelcontextprotocol/sdk`` 1.32.2 (2025-11-25) call a tool
  declared to take 14 s plainly, as hosts do: a hidden task answered on the call's own
  stream, which each SDK resumes with Last-Event-ID; the tool's progress numbers reach
  the progress callback before the result.
- The TypeScript SDK calls a 10-minute one (past its own 60 s timeout) and ``mcp==2.3.0``
  (2026-07-28) a 2-minute one: each gets a task handle at once and drives it with the handle tools.
"""

from __future__ import annotations

import pathlib
from collections.abc import Iterator
from typing import Any

import pytest

from tests.e2e.local_server import run_setup, running_server
from tests.e2e.test_tool_features import CLIENTS2025, CLIENTS2026, NODE, PY2025, PY2026, _run

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def server_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    run_setup(CLIENTS2025 / "setup.sh", "clients2025")
    run_setup(CLIENTS2026 / "setup.sh", "clients")
    log: pathlib.Path = tmp_path_factory.mktemp("long-plain") / "server.log"
    # Short pieces: a 14 s tool takes several, as a 45 s one does at the default 20 s.
    # In Lambda mode (issue 27): nothing of a request runs on after its answer, as deployed.
    with running_server(log, CALL_PIECE_SECONDS="4", HANG_UP_SECONDS="30") as url:
        yield url


def _early_progress(out: dict[str, Any]) -> None:
    times = [t for t, _, _ in out["progress"]]
    assert times, out
    assert all(total == 14 for _, _, total in out["progress"])
    values = [v for _, v, _ in out["progress"]]
    assert values == sorted(set(values))  # each once, never backwards
    # Progress arrived piece by piece while the tool ran, not all at once with the answer.
    assert times[0] < out["answeredAt"] - 5, out


def test_mcp_1_30_gets_a_long_plain_calls_progress_then_its_result(server_url: str) -> None:
    out = _run([str(PY2025), str(CLIENTS2025 / "mcp_python_tools.py"), server_url, "long_plain"], "mcp 1.30")
    assert out["warnings"] == [] and out["exceptions"] == []
    assert out["texts"] == ["py finished after 14 seconds"] and out["isError"] is False
    _early_progress(out)


def test_ts_sdk_gets_a_long_plain_calls_progress_then_its_result(server_url: str) -> None:
    out = _run([str(NODE), str(CLIENTS2025 / "ts_sdk_tools.mjs"), server_url, "long_plain"], "ts-sdk")
    assert out["transportErrors"] == []
    assert out["texts"] == ["ts finished after 14 seconds"]
    _early_progress(out)


def test_ts_sdk_past_its_timeout_gets_a_task_handle_it_can_drive(server_url: str) -> None:
    out = _run([str(NODE), str(CLIENTS2025 / "ts_sdk_tools.mjs"), server_url, "long_handle"], "ts-sdk")
    assert out["transportErrors"] == [] and out["answeredAt"] < 5
    assert out["handed"]["structured"]["status"] == "working"
    assert "taskgate_task_status" in out["handed"]["texts"][0]
    assert set(out["handleTools"]) == {"taskgate_task_status", "taskgate_task_result", "taskgate_task_cancel"}
    assert out["status"]["status"] == "working" and out["cancel"]["status"] == "cancelled"
    assert out["afterCancel"]["isError"] is True


def test_mcp_2_3_gets_a_task_handle_never_a_task(server_url: str) -> None:
    out = _run([str(PY2026), str(CLIENTS2026 / "mcp2_client.py"), server_url, "long_handle"], "mcp 2.3")
    assert out["ok"] and out["protocolVersion"] == "2026-07-28" and out["answeredAt"] < 5
    assert out["handed"]["structured"]["status"] == "working"
    assert out["status"]["status"] == "working" and out["cancel"]["status"] == "cancelled"
