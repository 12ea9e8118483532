"""``make inspect`` (issue 17, item 4): one command opens the MCP Inspector 2.12 on the local
server. It starts ``make serve`` when nothing answers on PORT, then the Inspector's web UI
configured with that server (the install under .tools/inspector that test_inspector.py drives
in Chromium), and stops the server with the Inspector."""

from __future__ import annotations

import json
import os
import pathlib
import re
import signal
import subprocess
import time
import urllib.request

import pytest

from tests.e2e.local_server import free_port

pytestmark = pytest.mark.slow

ROOT = pathlib.Path(__file__).resolve().parents[2]


def _get(url: str, **headers: str) -> dict[str, object]:
    with urllib.request.urlopen(urllib.request.Request(url, headers=headers), timeout=5) as resp:
        return json.loads(resp.read())  # type: ignore[no-any-return]


def test_make_inspect_serves_and_opens_the_inspector_on_it(tmp_path: pathlib.Path) -> None:
    port, ui = free_port(), free_port()
    log = tmp_path / "inspect.log"
    env = {**os.environ, "MCP_AUTO_OPEN_ENABLED": "false", "MCP_INSPECTOR_SECRET_STORE": "memory"}
    with log.open("w") as out:
        proc = subprocess.Popen(
            ["make", "inspect", f"PORT={port}", f"INSPECTOR_PORT={ui}"],
            cwd=ROOT,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        deadline = time.monotonic() + 600  # the first run installs Node and the Inspector
        while not (token := re.search(r"Auth token: ([0-9a-f]+)", log.read_text())):
            assert proc.poll() is None and time.monotonic() < deadline, log.read_text()[-4000:]
            time.sleep(0.5)
        assert _get(f"http://127.0.0.1:{port}/health") == {"status": "ok"}
        auth = {"x-mcp-remote-auth": f"Bearer {token[1]}"}
        config = _get(f"http://127.0.0.1:{ui}/api/config", **auth)
        assert config["version"] == "2.12.0"
        assert config["defaultServerUrl"] == f"http://127.0.0.1:{port}/mcp"
        assert config["defaultTransport"] == "streamable-http"
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=30)
    time.sleep(1)
    with pytest.raises(OSError):
        urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2)
