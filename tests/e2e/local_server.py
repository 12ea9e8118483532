"""Start `python -m taskgate.local` as a user would, on a free loopback port, for e2e tests
(taskgate.local.process: the one way the tests, the bench and the scripts start it)."""

from __future__ import annotations

import pathlib
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager

from taskgate.local.process import free_port, serving

ROOT = pathlib.Path(__file__).resolve().parents[2]

__all__ = ["ROOT", "free_port", "run_setup", "running_server"]


@contextmanager
def running_server(log_path: pathlib.Path, port: int | None = None, **env: str) -> Iterator[str]:
    """Yield the server's /mcp URL; ``env`` adds settings (tokens, stream limits…). Give
    ``port`` when a setting must name the server's own URL (OAUTH_RESOURCE)."""
    with serving(log_path, port=port, cwd=ROOT, timeout=30, **env) as server:
        yield server.url


def run_setup(script: pathlib.Path, label: str, timeout: float = 600) -> None:
    """Run an e2e setup.sh (installs the clients a test drives), showing its output."""
    started = time.monotonic()
    done = subprocess.run(["bash", str(script)], cwd=ROOT, capture_output=True, text=True, timeout=timeout)
    took = time.monotonic() - started
    print(f"\n[{label}] setup.sh exit {done.returncode} in {took:.1f}s\n{done.stdout}{done.stderr}")
    assert done.returncode == 0, f"setup.sh failed:\n{done.stdout}\n{done.stderr}"
