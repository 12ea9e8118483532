"""The `taskgate` command in a real pseudo-terminal, against `make serve`'s server.

Each test drives the installed console script with pexpect as a person would
(progress drawn, a question answered, Ctrl-C turned into a cancel) and saves
what the terminal showed to test-artifacts/cli/NAME.txt (readable: each
distinct redraw of the live line on its own line, marked "[live]") and
NAME.raw.txt (the bytes, escape sequences and all). Run with -s to see them.
"""

from __future__ import annotations

import os
import pathlib
import re
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from io import StringIO
from typing import Any

import pexpect  # drives the CLI in a real pseudo-terminal
import pytest

from tests.e2e.local_server import running_server

pytestmark = pytest.mark.slow

ROOT = pathlib.Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "test-artifacts" / "cli"
TOKEN = "cli-token"
OTHER_TOKEN = "other-token"
TASK_ID = r"task ([0-9a-f-]{36}) \("
TIMEOUT = 60  # generous: nothing here asserts timing


@pytest.fixture(scope="module")
def server_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    # Bearer tokens through the same path as API Gateway's authorizer: proves --token is sent.
    tokens = f"{TOKEN}=cli-user,{OTHER_TOKEN}=someone-else"
    with running_server(
        tmp_path_factory.mktemp("cli-server") / "server.log", TASKGATE_DEV_TOKENS=tokens
    ) as url:
        yield url


def _taskgate() -> str:
    script = pathlib.Path(sys.executable).parent / "taskgate"
    if not script.exists():
        pytest.fail(f"{script} is missing: the project's environment installs it (make setup)")
    return str(script)


def readable(raw: str) -> str:
    """The transcript as lines: permanent output as printed, and each distinct state
    of the redrawn status line (spinner frame and elapsed time aside) once."""
    lines: list[str] = []
    last_live: str | None = None
    for chunk in raw.replace("\r\n", "\n").split("\r\x1b[2K"):
        *complete, tail = chunk.split("\n")
        for line in complete:
            lines.append(line)
            last_live = None
        if tail:
            key = re.sub(r"^\S+\s+\S+\s+", "", tail)
            if key != last_live:
                lines.append(f"[live] {tail}")
                last_live = key
    return "\n".join(lines).rstrip() + "\n"


class Pty:
    """One `taskgate …` run in a pseudo-terminal, recorded for the artefacts."""

    def __init__(self, name: str, args: list[str], url: str, token: str = TOKEN) -> None:
        self.name = name
        self.log = StringIO()
        env = {**os.environ, "TASKGATE_URL": url, "TASKGATE_TOKEN": token, "TERM": "xterm"}
        env.pop("TASKGATE_ERA", None)
        self.command = "taskgate " + " ".join(args)
        self.child: Any = pexpect.spawn(
            _taskgate(),
            args,
            cwd=str(ROOT),
            env=env,
            encoding="utf-8",
            timeout=TIMEOUT,
            dimensions=(24, 120),
            # As a terminal starts it: a run launched in the background (CI's `make test &`)
            # would otherwise pass on an ignored SIGINT, and Ctrl-C would never arrive.
            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
        )
        self.child.logfile_read = self.log

    def expect(self, pattern: str) -> Any:
        self.child.expect(pattern)
        return self.child.match

    def finish(self) -> int:
        self.child.expect(pexpect.EOF)
        self.child.close()
        status: int = self.child.exitstatus
        return status

    def save(self) -> str:
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        raw = self.log.getvalue()
        (ARTIFACTS / f"{self.name}.raw.txt").write_text(raw)
        text = f"$ {self.command}\n{readable(raw)}"
        (ARTIFACTS / f"{self.name}.txt").write_text(text)
        print(f"\n----- test-artifacts/cli/{self.name}.txt -----\n{text}", end="")
        return text


@contextmanager
def run(name: str, args: list[str], url: str, **kw: Any) -> Iterator[Pty]:
    pty = Pty(name, args, url, **kw)
    try:
        yield pty
    finally:
        if pty.child.isalive():
            pty.child.terminate(force=True)
        pty.save()


def test_call_draws_progress_and_prints_the_result(server_url: str) -> None:
    with run("progress", ["call", "slow_compute", "seconds=5"], server_url) as pty:
        pty.expect(TASK_ID + r"slow_compute\) created")
        # The live line: spinner, elapsed time, status, a bar read from the statusMessage.
        pty.expect(r"working  \S+ +\d+%  compute: \d+\.\ds of 5s")
        pty.expect(r"completed in")
        pty.expect(r"compute finished after 5 seconds")
        assert pty.finish() == 0
    raw = pty.log.getvalue()
    assert "\r\x1b[2K" in raw  # redrawn in place, not scrolled


def test_call_prompts_validates_and_answers(server_url: str) -> None:
    with run("prompt", ["call", "confirm_delete", "filename=report.csv"], server_url) as pty:
        pty.expect(r"Delete report\.csv\?")
        pty.expect(r"confirm \(yes/no, required\) \S+ Delete the file: ")
        pty.child.sendline("")
        pty.expect("confirm is required")
        pty.expect(r"Delete the file: ")
        pty.child.sendline("maybe")
        pty.expect(r"answer yes or no")
        pty.expect(r"Delete the file: ")
        pty.child.sendline("y")
        pty.expect("answer sent")
        pty.expect("completed in")
        pty.expect(r"Deleted report\.csv")
        assert pty.finish() == 0


def test_ctrl_c_cancels_and_waits_for_the_server(server_url: str) -> None:
    with run("cancel", ["call", "slow_compute", "seconds=60"], server_url) as pty:
        task_id = pty.expect(TASK_ID).group(1)
        pty.expect(r"compute: \d+\.\ds of 60s")
        pty.child.sendintr()
        pty.expect("cancel requested")
        pty.expect(r"waiting for the server")
        pty.expect(r"cancelled, as asked: the task ran")
        assert pty.finish() == 130

    with run("cancel-get", ["get", task_id], server_url) as pty:
        pty.expect(r"status\s+cancelled")
        assert pty.finish() == 0

    # The token is what owns the task: another caller's token finds nothing.
    with run("cancel-get-other", ["get", task_id], server_url, token=OTHER_TOKEN) as pty:
        pty.expect("not found|Failed to retrieve task")
        assert pty.finish() == 2


def test_2025_era_answers_the_elicitation_on_the_result_stream(server_url: str) -> None:
    args = ["--era", "2025", "call", "confirm_delete", "filename=report.csv"]
    with run("prompt-2025", args, server_url) as pty:
        pty.expect(TASK_ID + r"confirm_delete\) created")
        pty.expect(r"Delete report\.csv\?")
        pty.expect(r"Delete the file: ")
        pty.child.sendline("nope")
        pty.expect(r"answer yes or no")
        pty.expect(r"Delete the file: ")
        pty.child.sendline("true")
        pty.expect("completed in")
        pty.expect(r"Deleted report\.csv")
        assert pty.finish() == 0


def test_tools_lists_the_server_tools(server_url: str) -> None:
    with run("tools", ["tools"], server_url) as pty:
        pty.expect(r"greet\s+forbidden")
        pty.expect(r"slow_compute\s+optional")
        assert pty.finish() == 0


def test_python_dash_m_runs_the_same_cli(server_url: str) -> None:
    env = {**os.environ, "TASKGATE_URL": server_url, "TASKGATE_TOKEN": TOKEN}
    done = subprocess.run(
        [sys.executable, "-m", "taskgate_cli", "--json", "call", "greet", "name=Ada"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
    )
    assert done.returncode == 0, done.stderr
    assert '"Hello, Ada!"' in done.stdout
