"""A deployer's repository holds only its tools (issue 17, items 4 and 6), end to end:

1. ``make dist`` writes dist/taskgate-<version>-py3-none-any.whl;
2. ``sam init --location templates/taskgate-project --no-input`` makes a new project in a temp
   folder (its tool, its test written only against ``taskgate.testing``, its template.yaml
   nesting taskgate's stack);
3. in it, ``make test`` creates a fresh venv, installs taskgate from that wheel
   (``PIP_FIND_LINKS``: taskgate is not on PyPI) and passes, and the venv has the ``taskgate``
   command;
4. ``make serve`` runs the tool as a task through the real state machine (from the wheel's
   copy), asking its question; ``make dev`` serves a changed tool after a reload;
5. ``sam build`` builds the nested stack: taskgate's layer from the installed package (without
   its local/ and testing/), the tools layer from the project's tools/.
"""

from __future__ import annotations

import os
import pathlib
import re
import signal
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from taskgate_cli.protocol import Client2026, meta_2026
from taskgate_cli.transport import Http

from tests.e2e.local_server import free_port

pytestmark = pytest.mark.slow

ROOT = pathlib.Path(__file__).resolve().parents[2]
SAM = ROOT / ".venv" / "bin" / "sam"
NAME, PACKAGE = "probe-tools", "probe_tools"


def _run(command: list[str], cwd: pathlib.Path, timeout: float, **env: str) -> str:
    started = time.monotonic()
    done = subprocess.run(
        command,
        cwd=cwd,
        env={**os.environ, "SAM_CLI_TELEMETRY": "0", **env},
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    output = done.stdout + done.stderr
    print(f"\n$ {' '.join(command)}  ({time.monotonic() - started:.1f}s, exit {done.returncode})")
    print("\n".join(line for line in output.splitlines()[-15:] if not line.startswith("WARNING: Location")))
    assert done.returncode == 0, output[-6000:]
    return output


@pytest.fixture(scope="module")
def wheel() -> pathlib.Path:
    _run(["make", "dist"], ROOT, 300)
    [built] = (ROOT / "dist").glob("taskgate-*-py3-none-any.whl")
    return built


@pytest.fixture(scope="module")
def project(wheel: pathlib.Path, tmp_path_factory: pytest.TempPathFactory) -> pathlib.Path:
    out = tmp_path_factory.mktemp("sam-init")
    _run(
        [str(SAM), "init", "--location", str(ROOT / "templates" / "taskgate-project"), "--no-input",
         "--name", NAME, "--output-dir", str(out)],
        ROOT,
        120,
    )  # fmt: skip
    made = out / NAME
    assert (made / "tools" / PACKAGE / "rollout.py").exists() and (
        made / "tests" / "test_rollout.py"
    ).exists()
    assert "ToolModules: probe_tools" in (made / "template.yaml").read_text()
    return made


def test_make_test_in_the_new_project_installs_the_wheel_and_passes(
    project: pathlib.Path, wheel: pathlib.Path
) -> None:
    output = _run(["make", "test"], project, 900, PIP_FIND_LINKS=str(wheel.parent))
    assert re.search(r"\b3 passed\b", output), output
    # Only taskgate.testing: the test imports nothing else of taskgate's.
    imports = {
        line.split()[1]
        for line in (project / "tests" / "test_rollout.py").read_text().splitlines()
        if line.startswith(("from ", "import "))
    }
    assert imports == {"taskgate.testing", f"{PACKAGE}.rollout"}
    venv = project / ".venv" / "bin"
    assert "taskgate-cli 0.1.0" in _run([str(venv / "taskgate"), "--version"], project, 30)
    stack = _run([str(venv / "python"), "-m", "taskgate.local.stack", "source"], project, 60)
    assert stack.strip().endswith("site-packages/taskgate/_stack"), stack
    assert (project / ".taskgate" / "template.yaml").exists()
    assert "ContentUri: ../tools/" in (project / ".taskgate" / "template.yaml").read_text()


@contextmanager
def _serving(project: pathlib.Path, target: str) -> Iterator[tuple[str, pathlib.Path]]:
    port = free_port()
    log = project / f"{target}-{port}.log"
    with log.open("w") as out:
        proc = subprocess.Popen(
            ["make", target, f"PORT={port}"],
            cwd=project,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        _wait_health(port, proc, log)
        yield f"http://127.0.0.1:{port}/mcp", log
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            # A loaded machine can keep the reloader's child in its graceful shutdown past
            # 20 s; what this test is about (serving, reloading) is done by then.
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)


def _wait_health(port: int, proc: subprocess.Popen[bytes], log: pathlib.Path, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while True:
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=1)
            return
        except OSError:
            if proc.poll() is not None or time.monotonic() > deadline:
                raise AssertionError(f"no server on {port}:\n{log.read_text()[-4000:]}") from None
            time.sleep(0.2)


def _client(url: str, *, tasks: bool) -> Client2026:
    return Client2026(Http(url, {}), meta={**meta_2026(tasks=tasks, elicitation=True)})


def _until(client: Client2026, task_id: str, statuses: set[str], timeout: float = 30) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while True:
        task = client.request("tasks/get", {"taskId": task_id})
        if task["status"] in statuses or time.monotonic() > deadline:
            return task
        time.sleep(0.2)


def test_make_serve_runs_the_tool_as_a_task_through_the_state_machine(project: pathlib.Path) -> None:
    with _serving(project, "serve") as (url, _):
        client = _client(url, tasks=True)
        assert [t["name"] for t in client.list_tools()] == ["rollout"]
        created = client.request(
            "tools/call", {"name": "rollout", "arguments": {"service": "web", "waves": 2}}
        )
        task_id = created["taskId"]
        parked = _until(client, task_id, {"input_required"})
        assert parked["inputRequests"]["confirm"]["params"]["message"] == "Roll web out in 2 waves?"
        client.answer(task_id, {"confirm": {"action": "accept", "content": {"ok": True}}})
        done = _until(client, task_id, {"completed", "failed", "cancelled"})
        assert done["status"] == "completed", done
        assert done["result"]["content"][0]["text"] == "web rolled out in 2 waves"


def test_make_dev_serves_a_changed_tool_after_a_reload(project: pathlib.Path) -> None:
    tool = project / "tools" / PACKAGE / "rollout.py"
    original = tool.read_text()
    with _serving(project, "dev") as (url, log):
        client = _client(url, tasks=False)
        [before] = client.list_tools()
        assert before["description"] == "Roll a service out in waves, once a person confirms."
        tool.write_text(original.replace("once a person confirms.", "after a yes."))
        try:
            deadline = time.monotonic() + 60
            while True:
                try:
                    [after] = client.list_tools()
                except OSError:
                    after = before  # restarting: the port is closed for a moment
                if after["description"] != before["description"] or time.monotonic() > deadline:
                    break
                time.sleep(0.3)
        finally:
            tool.write_text(original)
        assert after["description"] == "Roll a service out in waves, after a yes.", log.read_text()[-3000:]
        assert "the embedded AWS starts empty each time" in log.read_text()


def test_sam_build_builds_the_nested_stack_from_the_installed_package(project: pathlib.Path) -> None:
    valid = _run([str(SAM), "validate", "--lint"], project, 120, AWS_DEFAULT_REGION="us-east-1")
    assert "is a valid SAM Template" in valid
    output = _run(["make", "build", f"SAM={SAM}"], project, 900)
    assert "Build Succeeded" in output
    built = project / ".aws-sam" / "build" / "Taskgate"
    site = built / "TaskgateLayer" / "python"
    assert (site / "taskgate" / "root.py").exists() and (site / "pydantic").is_dir()
    assert not (site / "taskgate" / "local").exists() and not (site / "taskgate" / "testing").exists()
    assert not (site / "taskgate_cli").exists()
    assert list((site / "taskgate" / "adapters" / "_botocore_data").iterdir())
    tools = built / "ToolsLayer" / "python" / PACKAGE
    assert (tools / "rollout.py").exists() and list((tools / "__pycache__").glob("rollout.cpython-313.pyc"))
    for function in ("ApiFunction", "WorkerFunction", "SweeperFunction"):
        assert list((built / function).glob("*_handler.py")), function
    parent = (project / ".aws-sam" / "build" / "template.yaml").read_text()
    assert "Location: Taskgate/template.yaml" in parent
