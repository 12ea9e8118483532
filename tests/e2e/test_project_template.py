"""A deployer's repository holds only its tools (issues 17 and 31), end to end, on a machine with
only Python 3.13 (``_machine``: a PATH with every system program but no other Python, no SAM CLI,
no cfn-lint; an empty HOME):

1. ``make dist`` builds the sdist and the wheel and checks them (scripts/check_dist.py);
2. this checkout is pushed to a local bare repository and tagged ``v<version>``; ``sam init``
   makes a project from the tag's archive URL (as a git host serves it: GitHub's
   ``/archive/refs/tags/v<version>.zip``), and from the repository's git URL;
3. in it, ``make test`` creates a fresh venv, installs taskgate from the wheel (``PIP_FIND_LINKS``:
   the release before it is on PyPI), passes, and imports ToolModules as a cold start does; a
   misspelt ToolModules fails it;
4. ``make serve`` runs the tool as a task through the real state machine; ``make dev`` serves a
   changed tool after a reload;
5. ``make build`` installs the SAM CLI in .venv-sam with Python 3.13, builds the nested stack and
   imports ToolModules from the built layers; cfn-lint passes on the built templates; the built
   ApiFunction, imported with its two layers and nothing else, lists the project's tool;
6. on a machine with only Python 3.12, ``make build`` says what to install, at once;
7. ``make deploy`` runs the tests and the build before ``sam deploy``.

The SAM CLI that runs ``sam init`` is this checkout's (a venv with aws-sam-cli, as the docs
install it); everything else is the project's own. Each step prints its time.
"""

from __future__ import annotations

import functools
import http.server
import json
import os
import pathlib
import re
import shutil
import signal
import subprocess
import threading
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from taskgate_cli.protocol import Client2026, meta_2026
from taskgate_cli.transport import Http

import taskgate
from tests.e2e.local_server import free_port

pytestmark = pytest.mark.slow

ROOT = pathlib.Path(__file__).resolve().parents[2]
SAM = ROOT / ".venv" / "bin" / "sam"
CFN_LINT = ROOT / ".venv" / "bin" / "cfn-lint"
NAME, PACKAGE = "probe-tools", "probe_tools"
VERSION = taskgate.__version__
# What a system has besides its Pythons; the Python tools left out so they cannot stand in.
NOT_ON_THE_MACHINE = re.compile(
    r"^(python|pip|pydoc|idle|2to3|sam$|cfn-lint|cookiecutter|pyenv|virtualenv|pipx|uvx?$)"
)


def _run(
    command: list[str],
    cwd: pathlib.Path,
    timeout: float,
    env: dict[str, str] | None = None,
    *,
    ok: bool = True,
) -> str:
    """Run a command (in ``env``, the whole environment, else this one's), print its time and its
    output's tail, and check it succeeded (or, ``ok=False``, failed)."""
    started = time.monotonic()
    done = subprocess.run(
        command,
        cwd=cwd,
        env=env if env is not None else {**os.environ, "SAM_CLI_TELEMETRY": "0"},
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    output = done.stdout + done.stderr
    print(f"\n$ {' '.join(command)}  ({time.monotonic() - started:.1f}s, exit {done.returncode})")
    print("\n".join(line for line in output.splitlines()[-15:] if not line.startswith("WARNING: Location")))
    assert (done.returncode == 0) == ok, output[-6000:]
    return output


def _real_python(minor: str) -> pathlib.Path:
    """An interpreter of Python 3.<minor> on this machine (on PATH, or one of pyenv's)."""
    pyenv = sorted(pathlib.Path.home().glob(f".pyenv/versions/3.{minor}*/bin/python3.{minor}"))
    for candidate in [f"python3.{minor}", *map(str, pyenv)]:
        found = subprocess.run(
            [
                candidate,
                "-c",
                f"import sys; assert sys.version_info[:2] == (3, {minor}); print(sys.executable)",
            ],
            capture_output=True,
            text=True,
        )
        if found.returncode == 0:
            return pathlib.Path(found.stdout.strip()).resolve()
    raise AssertionError(f"Python 3.{minor} is needed here, to stand in for a machine with only it")


def _machine(root: pathlib.Path, minor: str) -> dict[str, str]:
    """The environment of a machine whose only Python is 3.<minor>: every program of the system's
    bin directories except the Pythons and Python tools, that Python as python3.<minor> and
    python3, and an empty HOME. pip's cache and the machine's pip configuration stay (the
    packages come from where they always do here)."""
    bin_dir = root / "bin"
    bin_dir.mkdir(parents=True)
    for directory in ("/usr/local/bin", "/usr/bin", "/bin", "/usr/sbin", "/sbin"):
        for program in sorted(pathlib.Path(directory).glob("*")):
            if not NOT_ON_THE_MACHINE.match(program.name) and not (bin_dir / program.name).exists():
                (bin_dir / program.name).symlink_to(program)
    python = _real_python(minor)
    for name in (f"python3.{minor}", "python3"):
        (bin_dir / name).symlink_to(python)
    (root / "home").mkdir()
    cache = subprocess.run(
        [str(ROOT / ".venv" / "bin" / "python"), "-m", "pip", "cache", "dir"], capture_output=True, text=True
    ).stdout.strip()
    pip = [k for k in os.environ if k.startswith("PIP_")]
    keep = ["LANG", "LC_ALL", "TERM", "TMPDIR", "SSL_CERT_FILE", "REQUESTS_CA_BUNDLE", *pip]
    return {
        **{k: os.environ[k] for k in keep if k in os.environ},
        "PATH": str(bin_dir),
        "HOME": str(root / "home"),
        "PIP_CACHE_DIR": cache,
        "SAM_CLI_TELEMETRY": "0",
    }


@pytest.fixture(scope="module")
def machine(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    env = _machine(tmp_path_factory.mktemp("python3.13-only"), "13")
    assert (
        shutil.which("python3.12", path=env["PATH"]) is None and shutil.which("sam", path=env["PATH"]) is None
    )
    return env


@pytest.fixture(scope="module")
def release() -> pathlib.Path:
    """The release's artefacts, built and checked as CI and the publishing workflow do."""
    output = _run(["make", "dist"], ROOT, 600)
    assert re.search(r"3 passed, 0 failed", output), output
    return ROOT / "dist"


def _commit_of_this_checkout() -> str:
    """This checkout as a commit: HEAD with its uncommitted changes to tracked files, if any."""
    stash = subprocess.run(["git", "stash", "create"], cwd=ROOT, capture_output=True, text=True, check=True)
    return stash.stdout.strip() or "HEAD"


@pytest.fixture(scope="module")
def bare(tmp_path_factory: pytest.TempPathFactory) -> pathlib.Path:
    """A bare repository holding this checkout at main, tagged v<version>, as a release is."""
    repo = tmp_path_factory.mktemp("origin") / "taskgate.git"
    _run(["git", "init", "-q", "--bare", "-b", "main", str(repo)], ROOT, 60)
    commit = _commit_of_this_checkout()
    _run(["git", "push", "-q", str(repo), f"{commit}:refs/heads/main"], ROOT, 120)
    _run(["git", "-C", str(repo), "tag", f"v{VERSION}", "main"], ROOT, 60)
    return repo


@pytest.fixture(scope="module")
def tag_archive_url(bare: pathlib.Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The tag's archive, served at the address GitHub serves it at."""
    site = tmp_path_factory.mktemp("git-host")
    path = site / "taskgate" / "taskgate" / "archive" / "refs" / "tags" / f"v{VERSION}.zip"
    path.parent.mkdir(parents=True)
    _run(["git", "-C", str(bare), "archive", "--format=zip", f"--prefix=taskgate-{VERSION}/", "-o", str(path), f"v{VERSION}"], ROOT, 60)  # fmt: skip
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(site))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_port}/{path.relative_to(site)}"
    finally:
        server.shutdown()


def _sam_init(location: str, out: pathlib.Path, machine: dict[str, str]) -> pathlib.Path:
    _run([str(SAM), "init", "--location", location, "--no-input", "--name", NAME, "--output-dir", str(out)], out, 180, machine)  # fmt: skip
    return out / NAME


@pytest.fixture(scope="module")
def project(
    release: pathlib.Path,
    tag_archive_url: str,
    machine: dict[str, str],
    tmp_path_factory: pytest.TempPathFactory,
) -> pathlib.Path:
    made = _sam_init(tag_archive_url, tmp_path_factory.mktemp("sam-init"), machine)
    assert (made / "tools" / PACKAGE / "rollout.py").exists() and (
        made / "tests" / "test_rollout.py"
    ).exists()
    assert f"ToolModules: {PACKAGE}" in (made / "template.yaml").read_text()
    assert f"taskgate[local]=={VERSION}\n" in (made / "requirements-dev.txt").read_text()
    return made


def _files(tree: pathlib.Path) -> dict[str, str]:
    return {str(p.relative_to(tree)): p.read_text() for p in sorted(tree.rglob("*")) if p.is_file()}


def test_sam_init_from_the_git_url_makes_the_same_project(
    project: pathlib.Path, bare: pathlib.Path, machine: dict[str, str], tmp_path: pathlib.Path
) -> None:
    from_git = _sam_init(f"git+file://{bare}", tmp_path, machine)
    assert _files(from_git) == _files(project)


def test_make_test_in_the_new_project_installs_the_wheel_and_passes(
    project: pathlib.Path, release: pathlib.Path, machine: dict[str, str]
) -> None:
    output = _run(["make", "test"], project, 900, {**machine, "PIP_FIND_LINKS": str(release)})
    assert re.search(r"\b3 passed\b", output), output
    assert (
        f"ToolModules {PACKAGE}: imported as a cold start does (the layers' packages only): 1 tools" in output
    )
    # Only taskgate.testing: the test imports nothing else of taskgate's.
    imports = {
        line.split()[1]
        for line in (project / "tests" / "test_rollout.py").read_text().splitlines()
        if line.startswith(("from ", "import "))
    }
    assert imports == {"taskgate.testing", f"{PACKAGE}.rollout"}
    venv = project / ".venv" / "bin"
    assert "Python 3.13" in _run([str(venv / "python"), "--version"], project, 30, machine)
    assert f"taskgate-cli {VERSION}" in _run([str(venv / "taskgate"), "--version"], project, 30, machine)
    stack = _run([str(venv / "python"), "-m", "taskgate.local.stack", "source"], project, 60, machine)
    assert stack.strip().endswith("site-packages/taskgate/_stack"), stack
    assert (project / ".taskgate" / "template.yaml").exists()
    assert "ContentUri: ../tools/" in (project / ".taskgate" / "template.yaml").read_text()


def test_a_misspelt_tool_module_fails_make_test(project: pathlib.Path, machine: dict[str, str]) -> None:
    template = project / "template.yaml"
    original = template.read_text()
    template.write_text(original.replace(f"ToolModules: {PACKAGE}", "ToolModules: probe_tool"))
    try:
        output = _run(["make", "test"], project, 300, machine, ok=False)
    finally:
        template.write_text(original)
    assert "FAIL probe_tool: ModuleNotFoundError: No module named 'probe_tool'" in output
    assert f"a deployed function would fail to start. The packages under tools/: {PACKAGE}." in output


@contextmanager
def _serving(
    project: pathlib.Path, target: str, machine: dict[str, str], **env: str
) -> Iterator[tuple[str, pathlib.Path]]:
    port = free_port()
    log = project / f"{target}-{port}.log"
    with log.open("w") as out:
        proc = subprocess.Popen(
            ["make", target, f"PORT={port}"],
            cwd=project,
            env={**machine, **env},
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        _wait_health(port, proc, log)
        yield f"http://127.0.0.1:{port}/mcp", log
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            # A loaded machine can keep the reloader's child in its graceful shutdown past
            # 20 s; what this test is about (serving, reloading) is done by then.
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)


def _wait_health(port: int, proc: subprocess.Popen[bytes], log: pathlib.Path, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while True:
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=1)
            return
        except OSError:
            if proc.poll() is not None or time.monotonic() > deadline:
                raise AssertionError(f"no server on {port}:\n{log.read_text()[-4000:]}") from None
            time.sleep(0.2)


def _client(url: str, *, tasks: bool) -> Client2026:
    return Client2026(Http(url, {}), meta={**meta_2026(tasks=tasks, elicitation=True)})


def _until(client: Client2026, task_id: str, statuses: set[str], timeout: float = 30) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while True:
        task = client.request("tasks/get", {"taskId": task_id})
        if task["status"] in statuses or time.monotonic() > deadline:
            return task
        time.sleep(0.2)


HANDLE_TOOLS = ["taskgate_task_status", "taskgate_task_result", "taskgate_task_cancel"]


def _authored(tools: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [tool for tool in tools if tool["name"] not in HANDLE_TOOLS]


def test_make_serve_runs_the_tool_as_a_task_through_the_state_machine(
    project: pathlib.Path, machine: dict[str, str]
) -> None:
    with _serving(project, "serve", machine) as (url, log):
        assert "/mcp (1 tools: rollout)" in log.read_text()
        client = _client(url, tasks=True)
        # The author's one tool, and the handle tools a long plain call's answer points to
        # (listed whatever the tools declare: issue 27).
        assert [t["name"] for t in client.list_tools()] == ["rollout", *HANDLE_TOOLS]
        created = client.request(
            "tools/call", {"name": "rollout", "arguments": {"service": "web", "waves": 2}}
        )
        task_id = created["taskId"]
        parked = _until(client, task_id, {"input_required"})
        assert parked["inputRequests"]["confirm"]["params"]["message"] == "Roll web out in 2 waves?"
        client.answer(task_id, {"confirm": {"action": "accept", "content": {"ok": True}}})
        done = _until(client, task_id, {"completed", "failed", "cancelled"})
        assert done["status"] == "completed", done
        assert done["result"]["content"][0]["text"] == "web rolled out in 2 waves"


def test_make_dev_serves_a_changed_tool_after_a_reload(
    project: pathlib.Path, machine: dict[str, str]
) -> None:
    tool = project / "tools" / PACKAGE / "rollout.py"
    original = tool.read_text()
    with _serving(project, "dev", machine) as (url, log):
        client = _client(url, tasks=False)
        [before] = _authored(client.list_tools())
        assert before["description"] == "Roll a service out in waves, once a person confirms."
        tool.write_text(original.replace("once a person confirms.", "after a yes."))
        try:
            deadline = time.monotonic() + 60
            while True:
                try:
                    [after] = _authored(client.list_tools())
                except OSError:
                    after = before  # restarting: the port is closed for a moment
                if after["description"] != before["description"] or time.monotonic() > deadline:
                    break
                time.sleep(0.3)
        finally:
            tool.write_text(original)
        assert after["description"] == "Roll a service out in waves, after a yes.", log.read_text()[-3000:]
        assert "the embedded AWS starts empty each time" in log.read_text()


def test_make_smoke_checks_the_project_behind_the_sign_in_of_make_serve_signin(
    project: pathlib.Path, machine: dict[str, str]
) -> None:
    """The project's own smoke test (its SMOKE_TASK: rollout, its question declined, then a
    cancel) against its server behind the whole sign-in, as a deployed stack has it; the
    caller is the development identity provider's machine client (client credentials)."""
    idp = free_port()
    with _serving(project, "serve-signin", machine, IDP_PORT=str(idp)) as (url, _):
        request = urllib.request.Request(
            f"http://127.0.0.1:{idp}/oauth2/token",
            data=b"grant_type=client_credentials&client_id=local-agent&client_secret=local-agent-secret",
            headers={"Content-Type": "application/x-www-form-urlencoded"},
        )
        with urllib.request.urlopen(request, timeout=10) as response:
            token = json.loads(response.read())["access_token"]
        output = _run(
            ["make", "smoke", f"URL={url}", f"SMOKE_ARGS=--token {token}", "STACK="], project, 300, machine
        )
    assert "ok   sign-in metadata" in output
    assert re.search(
        r"ok   task rollout .* completed, 1 question\(s\) declined: isError: smoke-test was not", output
    )
    assert "ok   cancel rollout" in output and "3 passed, 0 failed" in output


# The built ApiFunction with its two layers and nothing else on sys.path, as Lambda starts it:
# its cold start, then a tools/list through Mangum.
BUILT_FUNCTION = r"""
import json, sys
sys.path[:0] = sys.argv[1:4]

class Ctx:
    function_name = "api"; function_version = "$LATEST"; memory_limit_in_mb = 512
    invoked_function_arn = "arn:aws:lambda:us-east-1:123456789012:function:api"; aws_request_id = "r"
    def get_remaining_time_in_millis(self): return 29000

import api_handler
event = json.load(open(sys.argv[4]))
meta = json.loads(event["body"])["params"]["_meta"]
event["body"] = json.dumps({"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {"_meta": meta}})
event["headers"]["mcp-method"] = "tools/list"
response = api_handler.handler(event, Ctx())
print(json.dumps({"status": response["statusCode"], "tools": [t["name"] for t in json.loads(response["body"])["result"]["tools"]],
                  "outside": sorted({m.__file__.split("/site-packages/")[0] for m in list(sys.modules.values()) if "site-packages" in (getattr(m, "__file__", None) or "")})}))
"""


def test_make_build_builds_the_nested_stack_with_the_sam_cli_it_installs(
    project: pathlib.Path, release: pathlib.Path, machine: dict[str, str], tmp_path: pathlib.Path
) -> None:
    # x86_64: this machine's architecture, so that the built layers' compiled wheels load here.
    # The release's wheel too: run alone (-k), no earlier test has made the project's venv.
    found = {**machine, "PIP_FIND_LINKS": str(release)}
    output = _run(["make", "build", "ARCH=x86_64"], project, 1500, found)
    assert "Build Succeeded" in output
    assert f"ToolModules {PACKAGE}: imported as a cold start does (the built layers): 1 tools" in output
    sam_python = project / ".venv-sam" / "bin" / "python"
    assert "Python 3.13" in _run([str(sam_python), "--version"], project, 30, machine)
    assert (project / ".venv-sam" / "bin" / "sam").exists()
    built = project / ".aws-sam" / "build" / "Taskgate"
    site = built / "TaskgateLayer" / "python"
    assert (site / "taskgate" / "root.py").exists() and (site / "pydantic").is_dir()
    assert not (site / "taskgate" / "local").exists() and not (site / "taskgate" / "testing").exists()
    assert not (site / "taskgate_cli").exists()
    assert list((site / "taskgate" / "adapters" / "_botocore_data").iterdir())
    tools = built / "ToolsLayer" / "python"
    assert list((tools / PACKAGE / "__pycache__").glob("rollout.cpython-313.pyc"))
    assert (tools / "tools.architecture").read_text().strip() == "x86_64"
    for function in ("ApiFunction", "WorkerFunction", "SweeperFunction"):
        assert list((built / function).glob("*_handler.py")), function
    parent = (project / ".aws-sam" / "build" / "template.yaml").read_text()
    assert "Location: Taskgate/template.yaml" in parent

    # cfn-lint on what sam build wrote: the project's template and taskgate's nested in it.
    for template in (project / ".aws-sam" / "build" / "template.yaml", built / "template.yaml"):
        _run([str(CFN_LINT), "--", str(template)], project, 300)

    env = {
        "PATH": machine["PATH"],
        "TASK_TABLE": "tasks",
        "STATE_MACHINE_ARN": "arn:aws:states:us-east-1:123456789012:stateMachine:m",
        "AWS_REGION": "us-east-1",
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AUTH_MODE": "NONE",
        "TOOL_MODULES": PACKAGE,
        "POWERTOOLS_TRACE_DISABLED": "true",
        "POWERTOOLS_SERVICE_NAME": "taskgate",
        "POWERTOOLS_METRICS_NAMESPACE": "taskgate",
    }
    paths = [str(built / "ApiFunction"), str(site), str(tools)]
    event = str(ROOT / "events" / "api_server_discover.json")
    out = _run(["python3.13", "-I", "-S", "-c", BUILT_FUNCTION, *paths, event], tmp_path, 120, env)
    [seen] = [json.loads(line) for line in out.splitlines() if line.startswith('{"status"')]
    assert seen["status"] == 200 and seen["tools"] == ["rollout", *HANDLE_TOOLS], seen
    assert seen["outside"] == [], seen  # nothing came from an installed Python's site-packages


def test_make_build_with_only_python_3_12_says_what_to_install(
    project: pathlib.Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    machine = _machine(tmp_path_factory.mktemp("python3.12-only"), "12")
    fresh = tmp_path_factory.mktemp("on-3.12") / NAME
    shutil.copytree(project, fresh, ignore=shutil.ignore_patterns(".venv*", ".aws-sam", ".taskgate", "*.log"))
    output = _run(["make", "build"], fresh, 120, machine, ok=False)
    assert "make build and make deploy need Python 3.13" in output
    assert "uv python install 3.13" in output and "make serve and make test work with Python 3.12" in output
    assert not (fresh / ".venv").exists()  # said before anything was installed


def test_make_deploy_runs_the_tests_and_the_build_before_sam_deploy(
    project: pathlib.Path, machine: dict[str, str]
) -> None:
    planned = _run(["make", "-n", "deploy"], project, 60, machine).splitlines()

    def first(text: str) -> int:
        return next(n for n, line in enumerate(planned) if text in line)

    assert first("-m pytest") < first("cold_import --template") < first("sam build") < first("--built")
    assert first("--built") < first(".taskgate/scripts/deploy.py --template template.yaml")
