"""Section 1: cold start in fresh processes. Stdlib only (runs inside bench/run.py).

Each contender is a fresh ``python -c`` that notes ``time.perf_counter()`` on its first
line, runs its body, and prints ``perf_counter()`` again when ready. On Linux
perf_counter is CLOCK_MONOTONIC, one clock for every process, so the parent can
also take it just before spawning: that gives spawn -> ready (interpreter start-up
included), the headline. Runs go round-robin over the contenders, so a noisy moment
hits all of them. bench/first_request.py runs the same contenders from its command line.
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchlib import (
    BENCH,
    FASTMCP_PY,
    LAYER_PY,
    MCP_PY,
    PROJECT_PY,
    ROOT,
    base_env,
    lambda_env,
    median,
    p90,
)

_CHILD = """\
import time as _bench_time
_bench_t0 = _bench_time.perf_counter()
import sys as _bench_sys
{body}
_bench_t1 = _bench_time.perf_counter()
_bench_cpu = _bench_time.process_time()
print("BENCH-READY", repr(_bench_t0), repr(_bench_t1), repr(_bench_cpu), flush=True)
"""


@dataclass
class Contender:
    key: str
    label: str
    python: Path
    env: dict[str, str]
    body: str
    spawn_to_ready_s: list[float] = field(default_factory=list)
    in_process_s: list[float] = field(default_factory=list)
    process_wall_s: list[float] = field(default_factory=list)
    # The child's CPU time (user + sys, start-up included) when ready: steadier than wall
    # time on a busy machine.
    cpu_s: list[float] = field(default_factory=list)

    def summary(self) -> dict[str, Any]:
        return {
            "label": self.label,
            "python": str(self.python),
            "runs": len(self.spawn_to_ready_s),
            "spawn_to_ready_s": {"median": median(self.spawn_to_ready_s), "p90": p90(self.spawn_to_ready_s)},
            "in_process_s": {"median": median(self.in_process_s), "p90": p90(self.in_process_s)},
            "process_wall_s": {"median": median(self.process_wall_s), "p90": p90(self.process_wall_s)},
            "cpu_s": {"median": median(self.cpu_s), "p90": p90(self.cpu_s)},
            "samples": {
                "spawn_to_ready_s": self.spawn_to_ready_s,
                "in_process_s": self.in_process_s,
                "process_wall_s": self.process_wall_s,
                "cpu_s": self.cpu_s,
            },
        }


def contenders(before: Path | None = None) -> list[Contender]:
    """``before``: another source tree (e.g. ``git archive main``) whose init + first
    tasks/get runs in the same rounds, as ``before_get``."""
    from first_request import floor_get_body, request_body, tree_env
    from sign_in import sign_in_bench

    signed = sign_in_bench()

    handler = "import api_handler  # builds the DynamoDB client, the MCP server and the app at import"
    found = [
        Contender("ours", "taskgate ApiFunction init (.venv)", PROJECT_PY, lambda_env(), handler),
        Contender(
            "ours_layer", "taskgate ApiFunction init (layer-only venv)", LAYER_PY, lambda_env(), handler
        ),
        # A cold start as the user meets it: Lambda's init, then the first request.
        Contender(
            "ours_get",
            "taskgate init + first tasks/get (layer-only venv)",
            LAYER_PY,
            lambda_env(),
            request_body("get"),
        ),
        Contender(
            "ours_call",
            "taskgate init + first tools/call (layer-only venv)",
            LAYER_PY,
            lambda_env(),
            request_body("call"),
        ),
        # Sign-in on (the template's default): a request without a token (the 401 that sends a
        # client to sign in: no JOSE or OAuth library loaded), a signed-in person's token (the
        # stack's own, HS256: the signing key read from Secrets Manager), an agent's token (the
        # issuer's own, RS256: its keys fetched from the issuer's JWKS).
        Contender(
            "ours_401",
            "taskgate init + first request, no token: 401 (sign-in on)",
            LAYER_PY,
            {**lambda_env(), **signed.user_env()},
            request_body("get", status=401),
        ),
        Contender(
            "ours_get_user",
            "taskgate init + first tasks/get, a person's token (USER)",
            LAYER_PY,
            {**lambda_env(), **signed.user_env()},
            request_body("get", token=signed.person_token),
        ),
        Contender(
            "ours_get_agent",
            "taskgate init + first tasks/get, an agent's token (CLIENT, JWKS)",
            LAYER_PY,
            {**lambda_env(), **signed.client_env()},
            request_body("get", token=signed.agent_token),
        ),
        Contender(
            "floor",
            "required stack alone, no taskgate code (layer-only venv)",
            LAYER_PY,
            lambda_env(),
            f"_bench_sys.path.insert(0, {str(BENCH)!r})\nimport stack_floor",
        ),
        Contender(
            "floor_get",
            "required stack a tasks/get uses, used once (stack_floor_get.py)",
            LAYER_PY,
            lambda_env(),
            floor_get_body(),
        ),
        Contender(
            "floor_get_pyd",
            "the same + pydantic settings and params models (FLOOR_PYDANTIC=1)",
            LAYER_PY,
            {**lambda_env(), "FLOOR_PYDANTIC": "1"},
            floor_get_body(),
        ),
        Contender("mcp", "import mcp (mcp 2.3.0)", MCP_PY, base_env(), "import mcp"),
        Contender(
            "fastmcp",
            "FastMCP 4.1.4 minimal server (1 tool, stateless http_app)",
            FASTMCP_PY,
            base_env(),
            f"_bench_sys.path.insert(0, {str(BENCH)!r})\nimport fastmcp_minimal",
        ),
        Contender(
            "fastmcp_tasks",
            "FastMCP 4.1.4 + fastmcp-tasks server (the e2e one)",
            FASTMCP_PY,
            base_env(),
            f"_bench_sys.path.insert(0, {str(BENCH)!r})\nimport fastmcp_server",
        ),
    ]
    if before is not None:
        found[3:3] = [
            Contender(
                "before_get",
                f"before ({before.name}): init + first tasks/get (layer-only venv)",
                LAYER_PY,
                tree_env(before, LAYER_PY),
                request_body("get"),
            ),
            Contender(
                "before_call",
                f"before ({before.name}): init + first tools/call (layer-only venv)",
                LAYER_PY,
                tree_env(before, LAYER_PY),
                request_body("call"),
            ),
            Contender(
                "before_401",
                f"before ({before.name}): init + first request, no token: 401",
                LAYER_PY,
                {**tree_env(before, LAYER_PY), **signed.client_env()},
                request_body("get", status=401),
            ),
            Contender(
                "before_get_agent",
                f"before ({before.name}): init + first tasks/get, a token (JWT, JWKS)",
                LAYER_PY,
                {**tree_env(before, LAYER_PY), **signed.client_env()},
                request_body("get", token=signed.agent_token),
            ),
        ]
    return [c for c in found if c.python.exists()]


def _run(
    c: Contender, cwd: str, extra_args: list[str], env_extra: dict[str, str] | None = None
) -> tuple[float, float, str, str]:
    code = _CHILD.format(body=c.body)
    env = {**c.env, **(env_extra or {})}
    t_spawn = time.perf_counter()
    proc = subprocess.run(
        [str(c.python), *extra_args, "-c", code],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    t_exit = time.perf_counter()
    if proc.returncode != 0 or "BENCH-READY" not in proc.stdout:
        raise RuntimeError(f"cold start of {c.label} failed ({proc.returncode}):\n{proc.stderr[-3000:]}")
    return t_spawn, t_exit, proc.stdout, proc.stderr


def time_once(c: Contender, cwd: str) -> None:
    t_spawn, t_exit, out, _ = _run(c, cwd, [])
    line = next(x for x in out.splitlines() if x.startswith("BENCH-READY"))
    _, t0, t1, cpu = line.split()
    c.cpu_s.append(float(cpu))
    c.spawn_to_ready_s.append(float(t1) - t_spawn)
    c.in_process_s.append(float(t1) - float(t0))
    c.process_wall_s.append(t_exit - t_spawn)


@dataclass
class NoPyc:
    label: str
    seconds: list[float] = field(default_factory=list)
    with_pyc_same_run: list[float] = field(default_factory=list)


def no_pyc(c: Contender, runs: int, cwd: str, log: Callable[[str], None]) -> NoPyc:
    """ApiFunction init with no .pyc for anything outside the interpreter's stdlib.

    A Lambda layer or function zip carries only what the build put in it, and
    /opt and /var/task are read-only, so bytecode the build did not ship is
    compiled at every cold start. Emulated with a pycache prefix that holds only
    the stdlib's .pyc (everything under the repo, venvs included, is removed)
    and PYTHONDONTWRITEBYTECODE.
    """
    result = NoPyc(f"{c.label.replace('taskgate ApiFunction init', 'ApiFunction init')}, no .pyc")
    prefix = Path(tempfile.mkdtemp(prefix="taskgate-bench-pyc-"))
    try:
        _run(c, cwd, ["-X", f"pycache_prefix={prefix}"])  # writes the stdlib's (and our) .pyc
        ours = prefix / ROOT.relative_to(ROOT.anchor)
        shutil.rmtree(ours, ignore_errors=True)
        for i in range(runs):
            log(f"cold start without .pyc {i + 1}/{runs}")
            t_spawn, _, out, _ = _run(
                c, cwd, ["-X", f"pycache_prefix={prefix}"], {"PYTHONDONTWRITEBYTECODE": "1"}
            )
            line = next(x for x in out.splitlines() if x.startswith("BENCH-READY"))
            result.seconds.append(float(line.split()[2]) - t_spawn)
            t_spawn, _, out, _ = _run(c, cwd, [])
            line = next(x for x in out.splitlines() if x.startswith("BENCH-READY"))
            result.with_pyc_same_run.append(float(line.split()[2]) - t_spawn)
    finally:
        shutil.rmtree(prefix, ignore_errors=True)
    return result


def rounds(found: list[Contender], runs: int, cwd: str, log: Callable[[str], None]) -> None:
    """A warm-up run of each (disk cache, any missing .pyc; not counted), then ``runs``
    rounds, every contender once per round."""
    for c in found:
        log(f"warm-up: {c.label}")
        _run(c, cwd, [])
    for i in range(runs):
        log(f"cold start round {i + 1}/{runs}")
        for c in found:
            time_once(c, cwd)


def run(runs: int, nopyc_runs: int, log: Callable[[str], None], before: Path | None = None) -> dict[str, Any]:
    found = contenders(before)
    with tempfile.TemporaryDirectory(prefix="taskgate-bench-cwd-") as cwd:
        rounds(found, runs, cwd, log)
        nopyc = None
        target = next((c for c in found if c.key == "ours_layer"), None) or found[0]
        if nopyc_runs:
            nopyc = no_pyc(target, nopyc_runs, cwd, log)
    return {"contenders": found, "nopyc": nopyc}
