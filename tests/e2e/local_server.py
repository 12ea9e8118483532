"""Start `python -m taskgate.local` as a user would, on a free loopback port, for e2e tests."""

from __future__ import annotations

import os
import pathlib
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager

from taskgate.config import EXAMPLE_TOOL_MODULES

ROOT = pathlib.Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def running_server(log_path: pathlib.Path, port: int | None = None, **env: str) -> Iterator[str]:
    """Yield the server's /mcp URL; ``env`` adds settings (tokens, stream limits…). Give
    ``port`` when a setting must name the server's own URL (OAUTH_RESOURCE)."""
    port = port or free_port()
    full_env = {
        **os.environ,
        "PORT": str(port),
        "PYTHONPATH": "layers/taskgate:layers/tools",
        # The examples and the fixtures the tests drive (a deployment serves taskgate_tools).
        "TOOL_MODULES": EXAMPLE_TOOL_MODULES,
        **env,
    }
    log_path.parent.mkdir(parents=True, exist_ok=True)
    with log_path.open("w") as log:
        proc = subprocess.Popen(
            [sys.executable, "-m", "taskgate.local"],
            cwd=ROOT,
            env=full_env,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=1)
                break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise AssertionError(f"server did not start:\n{log_path.read_text()}") from None
                time.sleep(0.1)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)


def run_setup(script: pathlib.Path, label: str, timeout: float = 600) -> None:
    """Run an e2e setup.sh (installs the clients a test drives), showing its output."""
    started = time.monotonic()
    done = subprocess.run(["bash", str(script)], cwd=ROOT, capture_output=True, text=True, timeout=timeout)
    took = time.monotonic() - started
    print(f"\n[{label}] setup.sh exit {done.returncode} in {took:.1f}s\n{done.stdout}{done.stderr}")
    assert done.returncode == 0, f"setup.sh failed:\n{done.stdout}\n{done.stderr}"
