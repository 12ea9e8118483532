"""A job handed off, end to end: `run_pipeline` (the example that ships with `make serve`)
called as a task from the released Python SDK (mcp 1.30.0, 2025-11-25) and from the
`taskgate` CLI in a real pseudo-terminal. While the pipeline (another state machine) runs,
the task's status says which stage it is in; at the end its output is the result; a cancel
midway stops the pipeline's execution (read back through a test-only tool, the server's AWS
being moto inside the server). Called plainly (no task asked for), the SDK gets the output
too, and abandoning the call stops the pipeline.
"""

from __future__ import annotations

import json
import os
import pathlib
import subprocess
import time
from collections.abc import Iterator
from typing import Any

import pytest

from taskgate.config import EXAMPLE_TOOL_MODULES
from tests.e2e.local_server import run_setup, running_server
from tests.e2e.test_cli import TASK_ID, TOKEN, run

pytestmark = pytest.mark.slow

ROOT = pathlib.Path(__file__).resolve().parents[2]
CLIENTS = ROOT / "tests" / "e2e" / "clients2025"
PYTHON = ROOT / ".tools" / "clients2025" / "py" / "bin" / "python"
STAGES = ("Extract", "Transform", "Load")


@pytest.fixture(scope="module")
def server_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    run_setup(CLIENTS / "setup.sh", "clients2025")
    tokens = f"alice-token=alice,{TOKEN}=cli-user"
    with running_server(
        tmp_path_factory.mktemp("jobs-server") / "server.log",
        TASKGATE_DEV_TOKENS=tokens,
        TOOL_MODULES=f"{EXAMPLE_TOOL_MODULES},tests.fixture_tools",
        # Each read may look at the pipeline once a second: every stage shows.
        JOB_STATUS_INTERVAL_MS="1000",
    ) as url:
        yield url


def _py(url: str, scenario: str) -> dict[str, Any]:
    done = subprocess.run(
        [str(PYTHON), str(CLIENTS / "mcp_python_jobs.py"), url, scenario],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert done.returncode == 0, done.stderr
    out: dict[str, Any] = json.loads(done.stdout.splitlines()[-1])
    print(f"\n[mcp-python:{scenario}] {json.dumps(out)}")
    assert "error" not in out, out.get("traceback")
    assert out["version"] == "1.30.0"
    return out


def _stages(messages: list[str | None]) -> list[str]:
    shown = [s for s in STAGES if any(f"in state {s}" in (m or "") for m in messages)]
    return shown


def test_the_sdk_sees_the_pipeline_run_its_stages_and_gets_its_output(server_url: str) -> None:
    out = _py(server_url, "pipeline")
    messages = [e["statusMessage"] for e in out["seen"] if e["status"] == "working"]
    assert any(m.startswith("Waiting for the state machine taskgate-pipeline: ") for m in messages), messages
    # The stages follow one another, as the pipeline enters them (reads are a second apart).
    assert len(_stages(messages)) >= 2, messages
    assert out["seen"][-1]["status"] == "completed"
    assert out["isError"] is False
    assert out["structured"] == {
        "source": "s3://e2e/",
        "rows_loaded": 1000,
        "stages": ["extract", "transform", "load"],
    }


def test_the_sdks_cancel_stops_the_pipeline(server_url: str) -> None:
    out = _py(server_url, "pipeline_cancel")
    assert out["cancelled"] == "cancelled" and out["status"] == "cancelled"
    (child,) = out["child"]
    assert child["status"] == "ABORTED", out


def test_a_plain_call_of_the_pipeline_gets_its_output(server_url: str) -> None:
    # No task asked for, as most hosts call tools: run_pipeline hands its pipeline off, which
    # only a task can wait for, so the call becomes a hidden task on the call's own stream.
    out = _py(server_url, "pipeline_plain")
    assert out["isError"] is False
    # While it ran, the pipeline's stages came on the call's stream as log lines.
    assert len(_stages(out["logged"])) >= 2, out["logged"]
    assert out["structured"] == {
        "source": "s3://plain/",
        "rows_loaded": 1000,
        "stages": ["extract", "transform", "load"],
    }


def test_abandoning_a_plain_call_stops_the_pipeline(server_url: str) -> None:
    out = _py(server_url, "pipeline_plain_cancel")
    (child,) = out["started"]
    assert out["child"] == {child: "ABORTED"}, out


def test_the_cli_draws_the_pipelines_stages_and_prints_its_result(server_url: str) -> None:
    with run("pipeline", ["call", "run_pipeline", "stage_seconds=2", "source=s3://cli/"], server_url) as pty:
        pty.expect(TASK_ID + r"run_pipeline\) created")
        pty.expect(r"working .*Waiting for the state machine taskgate-pipeline")
        pty.expect(r"in state (Extract|Transform)")
        pty.expect(r"completed in")
        pty.expect(r'"rows_loaded": ?1000')
        assert pty.finish() == 0
    shown = pty.log.getvalue()
    assert len(_stages([shown])) >= 2, shown


def test_ctrl_c_in_the_cli_stops_the_pipeline(server_url: str) -> None:
    with run("pipeline-cancel", ["call", "run_pipeline", "stage_seconds=60"], server_url) as pty:
        task_id = pty.expect(TASK_ID).group(1)
        pty.expect(r"in state Extract")
        pty.child.sendintr()
        pty.expect("cancel requested")
        pty.expect(r"cancelled, as asked: the task ran")
        assert pty.finish() == 130
    env = {**os.environ, "TASKGATE_URL": server_url, "TASKGATE_TOKEN": TOKEN}
    deadline = time.monotonic() + 20
    while True:
        done = subprocess.run(
            [str(pathlib.Path(os.sys.executable).parent / "taskgate"), "--json", "call", "pipeline_runs"],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert done.returncode == 0, done.stderr
        runs = json.loads(done.stdout)["result"]["structuredContent"]["runs"]
        (child,) = [r for r in runs if task_id in r["name"]]
        if child["status"] != "RUNNING" or time.monotonic() > deadline:
            break
        time.sleep(0.5)
    assert child["status"] == "ABORTED"
