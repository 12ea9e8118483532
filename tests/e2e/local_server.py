"""Start `python -m taskgate.local` as a user would, on a free loopback port, for e2e tests
(taskgate.local.process: the one way the tests, the bench and the scripts start it).

In its Lambda mode unless a test says otherwise (``TASKGATE_LAMBDA=""``): ApiFunction in
execution environments frozen once they have answered (taskgate/local/lambda_mode.py), and a
test whose requests left a thread running after their answer fails when the server stops.
"""

from __future__ import annotations

import json
import pathlib
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from taskgate.local import lambda_mode
from taskgate.local.process import free_port, serving

ROOT = pathlib.Path(__file__).resolve().parents[2]

__all__ = ["ROOT", "free_port", "left_running", "run_setup", "running_server"]


@contextmanager
def running_server(
    log_path: pathlib.Path, port: int | None = None, *, check_left_running: bool = True, **env: str
) -> Iterator[str]:
    """Yield the server's /mcp URL; ``env`` adds settings (tokens, stream limits…). Give
    ``port`` when a setting must name the server's own URL (OAUTH_RESOURCE)."""
    settings = {lambda_mode.ENABLED: "1", **env}
    with serving(log_path, port=port, cwd=ROOT, timeout=30, **settings) as server:
        yield server.url
        if check_left_running and lambda_mode.enabled(settings):
            left = left_running(server.url.removesuffix("/mcp"))
            assert left == [], (
                f"requests left threads running in an API environment after their answer: {left}"
            )


def left_running(server: str) -> list[dict[str, Any]]:
    """What the Lambda mode at ``server`` (base URL) reports left running after an answer."""
    with urllib.request.urlopen(f"{server}{lambda_mode.REPORT_PATH}", timeout=10) as resp:
        return json.loads(resp.read())["left_running"]  # type: ignore[no-any-return]


def run_setup(script: pathlib.Path, label: str, timeout: float = 600) -> None:
    """Run an e2e setup.sh (installs the clients a test drives), showing its output."""
    started = time.monotonic()
    done = subprocess.run(["bash", str(script)], cwd=ROOT, capture_output=True, text=True, timeout=timeout)
    took = time.monotonic() - started
    print(f"\n[{label}] setup.sh exit {done.returncode} in {took:.1f}s\n{done.stdout}{done.stderr}")
    assert done.returncode == 0, f"setup.sh failed:\n{done.stdout}\n{done.stderr}"
