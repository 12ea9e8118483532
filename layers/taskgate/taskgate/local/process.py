"""The local server as a child process: what the bench, the scripts and the e2e tests start
(``python -m taskgate.local`` on a free loopback port), waited for and stopped in one way.

    with serving(log_path, TOOL_MODULES="tests.fixture_tools") as server:
        ...  # server.url is http://127.0.0.1:<port>/mcp, answering /health
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

from ..config import EXAMPLE_TOOL_MODULES

PACKAGE_DIR = Path(__file__).resolve().parents[2]  # where the taskgate package is
# A checkout's tool packages (the examples and the fixtures), beside the library's layer.
CHECKOUT_TOOLS = PACKAGE_DIR.parent / "tools"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class LocalServer:
    proc: subprocess.Popen[bytes]
    port: int
    log: Path

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/mcp"

    def healthy(self) -> bool:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/health", timeout=2) as resp:
                return bool(resp.status == 200)
        except OSError:
            return False

    def wait(self, timeout: float = 60.0) -> LocalServer:
        """This server once /health answers; RuntimeError with the log's tail otherwise."""
        deadline = time.monotonic() + timeout
        while not self.healthy():
            if self.proc.poll() is not None or time.monotonic() > deadline:
                what = f"exited with {self.proc.returncode}" if self.proc.poll() is not None else "no /health"
                tail = self.log.read_text(errors="replace")[-4000:] if self.log.exists() else ""
                raise RuntimeError(f"the local server on {self.port}: {what} within {timeout:.0f} s\n{tail}")
            time.sleep(0.1)
        return self

    def stop(self, grace: float = 10.0) -> int | None:
        """Stop it and anything it started (it runs in a session of its own)."""
        for sig in (signal.SIGTERM, signal.SIGKILL):
            if self.proc.poll() is not None:
                break
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, sig)
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.proc.wait(timeout=grace)
        return self.proc.returncode


def start(
    log: Path,
    *,
    port: int | None = None,
    python: str = sys.executable,
    cwd: Path | None = None,
    base_env: Mapping[str, str] | None = None,
    env: Mapping[str, str] | None = None,
) -> LocalServer:
    """Start the local server with this checkout's examples and fixtures, AWS emulated in it:
    ``env`` adds or overrides settings (``TOOL_MODULES``, ``TASKGATE_DEV_TOKENS``…) on top of
    ``base_env`` (default: this process's environment)."""
    port = port or free_port()
    path = [str(PACKAGE_DIR), *([str(CHECKOUT_TOOLS)] if CHECKOUT_TOOLS.is_dir() else [])]
    full_env = {
        **(os.environ if base_env is None else base_env),
        "PORT": str(port),
        "HOST": "127.0.0.1",  # probed there, and never a real AWS by way of the caller's environment:
        "TASKGATE_BACKEND": "embedded",
        "PYTHONPATH": os.pathsep.join(path),
        "TOOL_MODULES": EXAMPLE_TOOL_MODULES,
        "PYTHONUNBUFFERED": "1",
        **(env or {}),
    }
    log.parent.mkdir(parents=True, exist_ok=True)
    with log.open("wb") as out:
        # A file, not a pipe: nothing drains a pipe during a long run, and a full one stalls the
        # server. A session of its own: Ctrl-C reaches the caller, who decides how it stops.
        proc = subprocess.Popen(
            [python, "-m", "taskgate.local"],
            cwd=cwd or PACKAGE_DIR.parents[1],
            env=full_env,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    return LocalServer(proc, port, log)


@contextlib.contextmanager
def serving(
    log: Path, *, timeout: float = 60.0, port: int | None = None, cwd: Path | None = None, **env: str
) -> Iterator[LocalServer]:
    """``start``, waited for, and stopped on the way out."""
    server = start(log, port=port, cwd=cwd, env=env)
    try:
        yield server.wait(timeout)
    finally:
        server.stop()
