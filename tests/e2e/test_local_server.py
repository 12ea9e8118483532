"""`make serve`'s server as a user runs it: a separate process on a loopback port."""

from __future__ import annotations

import json
import pathlib
import subprocess
import sys
import urllib.request
from collections.abc import Iterator

import pytest

from tests.e2e.local_server import running_server

ROOT = pathlib.Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def server_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with running_server(tmp_path_factory.mktemp("server") / "server.log") as url:
        yield url


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
