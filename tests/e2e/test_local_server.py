"""`make serve`'s server as a user runs it: a separate process on a loopback port."""

from __future__ import annotations

import json
import os
import pathlib
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def server_url() -> Iterator[str]:
    port = _free_port()
    env = {**os.environ, "PORT": str(port), "PYTHONPATH": "layers/taskgate:layers/tools"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "taskgate.local"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    url = f"http://127.0.0.1:{port}/mcp"
    deadline = time.monotonic() + 30
    while True:
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=1)
            break
        except OSError:
            if proc.poll() is not None or time.monotonic() > deadline:
                proc.kill()
                raise AssertionError(
                    f"server did not start: {proc.stdout.read() if proc.stdout else ''}"
                ) from None
            time.sleep(0.1)
    yield url
    proc.terminate()
    proc.wait(timeout=10)


def test_serve_answers_server_discover(server_url: str) -> None:
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "server/discover",
        "params": {
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {},
            }
        },
    }
    request = urllib.request.Request(
        server_url,
        json.dumps(body).encode(),
        {
            "content-type": "application/json",
            "mcp-protocol-version": "2026-07-28",
            "mcp-method": "server/discover",
        },
    )
    with urllib.request.urlopen(request, timeout=10) as resp:
        assert resp.headers["content-type"] == "application/json"
        reply = json.loads(resp.read())
    assert reply["result"]["capabilities"]["extensions"] == {"io.modelcontextprotocol/tasks": {}}


def test_walkthrough_script_passes(server_url: str) -> None:
    done = subprocess.run(
        [sys.executable, "scripts/walkthrough.py", "--url", server_url],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "walk-through OK" in done.stdout
    assert "terminal after" in done.stdout
