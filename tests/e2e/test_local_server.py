"""`make serve`'s server as a user runs it: a separate process on a loopback port."""

from __future__ import annotations

import contextlib
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


def _connect(server_url: str) -> socket.socket:
    port = int(server_url.split(":")[2].split("/")[0])
    return socket.create_connection(("127.0.0.1", port), timeout=10)


def _head(length: str | None) -> bytes:
    lines = [
        "POST /mcp HTTP/1.1",
        "Host: 127.0.0.1",
        "Content-Type: application/json",
        "Mcp-Method: ping",
        "Mcp-Protocol-Version: 2026-07-28",
        f"Content-Length: {length}" if length else "Transfer-Encoding: chunked",
    ]
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


def _status(reply: bytes) -> int:
    return int(reply.split(b" ", 2)[1])


def test_a_huge_declared_body_is_refused_before_it_is_sent(server_url: str) -> None:
    """Issue 21 (N6): the server read a declared 64 MiB to its end before the 413. Now the
    answer comes at once, with not one byte of the body sent (a server that waited for it
    would time out here)."""
    with _connect(server_url) as sock:
        sock.sendall(_head(str(300 * 1024 * 1024)))
        reply = b""
        while more := sock.recv(65536):  # the server answers, then closes
            reply += more
    assert _status(reply) == 413, reply
    assert b"connection: close" in reply.lower()
    assert b"Request body larger than 1048576 bytes" in reply


def test_a_huge_streamed_body_is_refused_once_it_passes_the_limit(server_url: str) -> None:
    """Sent chunked (no Content-Length), 300 MiB are offered: the answer comes after about
    the limit, and the server closes the connection instead of reading the rest."""
    chunk = b" " * 65536
    frame = f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n"
    sent = 0
    with _connect(server_url) as sock:
        sock.sendall(_head(None))
        sock.settimeout(0.05)
        reply = b""
        while sent < 300 * 1024 * 1024:
            try:
                sock.sendall(frame)
                sent += len(chunk)
            except (BrokenPipeError, ConnectionResetError):
                break
            except TimeoutError:
                pass  # the server stopped reading: its answer is what to look for
            try:
                reply += sock.recv(65536)
            except (TimeoutError, BlockingIOError):
                continue
            if reply:
                break
        sock.settimeout(10)
        while b"\r\n\r\n" not in reply:
            more = sock.recv(65536)
            if not more:
                break
            reply += more
    assert reply and _status(reply) == 413, reply
    # The socket buffers take a few MiB more than the server read; nowhere near 300.
    assert sent < 32 * 1024 * 1024, sent


def _plain_call(token: str, seconds: float) -> bytes:
    from tests.mcp_client import envelope, headers_for

    params = {"name": "slow_compute", "arguments": {"seconds": seconds}}
    body = json.dumps(envelope("tools/call", params, 1, tasks=False)).encode()
    headers = {**headers_for("tools/call", params), "authorization": f"Bearer {token}"}
    head = ["POST /mcp HTTP/1.1", "Host: 127.0.0.1", f"Content-Length: {len(body)}"]
    head += [f"{name}: {value}" for name, value in headers.items()]
    return ("\r\n".join(head) + "\r\n\r\n").encode() + body


def test_an_owner_has_a_share_of_the_slots_and_hanging_up_gives_them_back(
    tmp_path: pathlib.Path,
) -> None:
    """Issue 21 (N7) against the real server: an owner that starts more plain calls than
    its share gets 503 for the rest while another owner is served; when it hangs up, the
    tools stop at their next progress report and its slots are free again at once (not
    when the 20-second calls would have ended).

    The calls must run inline to hold slots: a plain call of a tool expected past
    INLINE_CALL_MAX_SECONDS runs as a hidden task instead (issue 18), so it is raised here."""
    env = {
        "TASKGATE_DEV_TOKENS": "m-token=mallory,a-token=alice",
        "MAX_INLINE_CALLS_PER_OWNER": "2",
        "INLINE_CALL_MAX_SECONDS": "25",
    }
    with running_server(tmp_path / "server.log", **env) as url:
        hung: list[socket.socket] = []
        for _ in range(2):
            sock = _connect(url)
            sock.sendall(_plain_call("m-token", 20))
            hung.append(sock)
        time.sleep(1)  # both calls are running (slow_compute reports progress every 0.25 s)
        with _connect(url) as third:
            third.sendall(_plain_call("m-token", 0))
            assert _status(third.recv(65536)) == 503
        with _connect(url) as other:
            other.sendall(_plain_call("a-token", 0))
            assert _status(other.recv(65536)) == 200
        for sock in hung:
            sock.close()
        # Freed within a progress report or two: well before the 20 s the calls asked for.
        deadline = time.monotonic() + 8
        while True:
            with _connect(url) as again:
                again.sendall(_plain_call("m-token", 0))
                status = _status(again.recv(65536))
            if status == 200 or time.monotonic() > deadline:
                break
            time.sleep(0.2)
        assert status == 200


# A tool module that says when it is imported, and one that cannot be (issue 31, item 7).
LOUD_TOOLS = """
import sys, time
print("loud_tools: importing", flush=True)
time.sleep(0.5)
from pydantic import BaseModel
from taskgate.tools import ToolContext, tool

class Nothing(BaseModel):
    pass

@tool(description="Says hi.")
def hello(args: Nothing, ctx: ToolContext) -> str:
    return "hi"
"""
BROKEN_TOOLS = """
raise RuntimeError("broken_tools: a typo at import")
"""


def _start(tmp_path: pathlib.Path, module: str, source: str) -> tuple[int | None, str]:
    from taskgate.local.process import CHECKOUT_TOOLS, PACKAGE_DIR, start

    (tmp_path / f"{module}.py").write_text(source)
    log = tmp_path / f"{module}.log"
    path = os.pathsep.join(map(str, (PACKAGE_DIR, CHECKOUT_TOOLS, tmp_path)))
    server = start(log, cwd=ROOT, env={"TOOL_MODULES": module, "PYTHONPATH": path})
    try:
        with contextlib.suppress(RuntimeError):
            server.wait(30)
        return server.proc.poll(), log.read_text()
    finally:
        server.stop()


def test_the_start_line_comes_once_the_tools_are_loaded_and_names_them(tmp_path: pathlib.Path) -> None:
    exited, log = _start(tmp_path, "loud_tools", LOUD_TOOLS)
    assert exited is None, log  # serving
    lines = log.splitlines()
    [start] = [n for n, line in enumerate(lines) if line.startswith("taskgate serving http://127.0.0.1:")]
    assert lines[start].endswith("/mcp (1 tools: hello)"), lines[start]
    assert lines.index("loud_tools: importing") < start, log


def test_a_tool_module_that_fails_to_import_ends_the_start_with_no_serving_line(
    tmp_path: pathlib.Path,
) -> None:
    exited, log = _start(tmp_path, "broken_tools", BROKEN_TOOLS)
    assert exited not in (None, 0), log
    assert "RuntimeError: broken_tools: a typo at import" in log
    assert "taskgate serving" not in log, log


CRASHING_TOOLS = """
from taskgate.tools import ToolContext, tool

@tool(description="Divides.", task_support="required")
def divide(a: int, b: int, ctx: ToolContext) -> str:
    return str(a / b)
"""


def test_a_tool_that_raises_prints_a_readable_trace_under_the_task_id(tmp_path: pathlib.Path) -> None:
    """The local log shows the trace as Python prints it (before: escaped inside a JSON line),
    and the client's error names the taskId it is logged under (issue 31, item 7)."""
    from taskgate_cli.protocol import Client2026, meta_2026
    from taskgate_cli.transport import Http

    from taskgate.local.process import CHECKOUT_TOOLS, PACKAGE_DIR, start

    (tmp_path / "crashing_tools.py").write_text(CRASHING_TOOLS)
    log = tmp_path / "server.log"
    path = os.pathsep.join(map(str, (PACKAGE_DIR, CHECKOUT_TOOLS, tmp_path)))
    server = start(log, cwd=ROOT, env={"TOOL_MODULES": "crashing_tools", "PYTHONPATH": path}).wait(30)
    try:
        client = Client2026(Http(server.url, {}), meta=meta_2026(tasks=True))
        task_id = client.request("tools/call", {"name": "divide", "arguments": {"a": 1, "b": 0}})["taskId"]
        deadline = time.monotonic() + 30
        while (task := client.request("tasks/get", {"taskId": task_id}))["status"] == "working":
            assert time.monotonic() < deadline, task
            time.sleep(0.2)
    finally:
        server.stop()
    assert task["status"] == "failed" and task["error"]["data"] == {"taskId": task_id}
    lines = log.read_text().splitlines()
    at = lines.index("Traceback (most recent call last):")
    assert task_id in lines[at - 1] and '"message":"tool divide raised"' in lines[at - 1]
    assert "ZeroDivisionError: division by zero" in lines[at:]
    assert "    return str(a / b)" in lines[at:]
