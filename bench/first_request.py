"""Cold start to the first answered request, in fresh processes. Stdlib only.

    .venv/bin/python bench/first_request.py [--runs 11] [--importtime-runs 3]
        [--tree before=.tools/before] [--tree after=.] [--only get,call,init]
        [--variants eager-pydantic,no-trim,...] [--python PATH] [--json out.json]

Each ``ours`` contender is a fresh ``python -c`` (the layer-only venv: what `sam build`
ships) with the ApiFunction's environment that imports ``api_handler`` (Lambda's init)
and then calls ``api_handler.handler`` once with an API Gateway HTTP API v2 event: a
2026-07-28 ``tasks/get`` of a completed task (``get``) or a ``tools/call`` that creates
a task (``call``). AWS is stubbed at botocore's HTTP layer: ``URLLib3Session.send``
answers from memory after botocore has resolved the endpoint, validated, serialised
and signed the request (the patch is put in place when ``botocore.httpsession`` is
first imported, so it moves nothing earlier). Ready = the handler has returned.

Baselines in the same rounds: ``import mcp`` (mcp 2.3.0 venv, as bench/setup.sh makes
it), bench/stack_floor.py (today's floor: the required stack imported and initialised)
and bench/stack_floor_get.py (the part of it a tasks/get uses, sent the same event).
Rounds are round-robin; figures are medians; spawn->ready as in coldstart.py
(CLOCK_MONOTONIC is shared between processes), and the child's own CPU time at ready,
which a busy machine disturbs less. ``--variants`` adds leave-one-out rows: the last
tree's tasks/get with one deferral undone or one cut switched off (VARIANTS).
coldstart.py reuses ``request_body`` and ``floor_get_body`` for bench/run.py section 1.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from benchlib import BENCH, LAYER_PY, MCP_PY, ROOT, base_env, lambda_env

MARK = "BENCH-BODY-STARTS"
_IMPORTTIME = re.compile(r"^import time:\s+(\d+) \|\s+(\d+) \| (\s*)(\S+)\s*$")
TASK_ID = "00000000-0000-4000-8000-000000000000"
OWNER = "https://cognito-idp.us-east-1.amazonaws.com/us-east-1_example#user-1234"

_CHILD = """\
import time as _bench_time
_bench_t0 = _bench_time.perf_counter()
import sys as _bench_sys
_bench_sys.stderr.write("{mark}\\n")
_bench_t_init = None
{body}
_bench_t1 = _bench_time.perf_counter()
_bench_cpu = _bench_time.process_time()
print("BENCH-READY", repr(_bench_t0), repr(_bench_t1), repr(_bench_t_init), repr(_bench_cpu), flush=True)
"""

# A completed task owned by the event's JWT caller, as DynamoDB's GetItem returns it.
_ITEM = {
    "taskId": {"S": TASK_ID},
    "ownerId": {"S": OWNER},
    "tool": {"S": "slow_compute"},
    "arguments": {"S": '{"seconds":0.2}'},
    "status": {"S": "completed"},
    "outcome": {"S": "success"},
    "statusMessage": {"S": "The operation completed."},
    "createdAt": {"S": "2026-11-29T10:00:00.000Z"},
    "lastUpdatedAt": {"S": "2026-11-29T10:00:01.000Z"},
    "ttlMs": {"N": "3600000"},
    "retentionMs": {"N": "3600000"},
    "pollIntervalMs": {"N": "1000"},
    "expiresAt": {"N": "4102444800"},
    "inputResponses": {"M": {}},
    "result": {"S": '{"content":[{"type":"text","text":"compute finished"}],"isError":false}'},
}

# Installs the HTTP-layer stub when (and only when) the product imports botocore.httpsession.
_STUB = """\
_bench_canned = {canned!r}
class _BenchHook:
    @staticmethod
    def find_spec(name, path=None, target=None):
        if name != "botocore.httpsession":
            return None
        _bench_sys.meta_path.remove(_BenchHook)
        for finder in _bench_sys.meta_path:
            spec = finder.find_spec(name, path, target)
            if spec is not None:
                break
        real_exec = spec.loader.exec_module
        def exec_module(module):
            real_exec(module)
            from botocore.awsrequest import AWSResponse
            from botocore.compat import HTTPHeaders
            class _Raw:
                def __init__(self, data):
                    self._data = data
                def stream(self, **kwargs):
                    yield self._data
            def send(self, request):
                target = request.headers.get("X-Amz-Target", b"")
                target = target.decode() if isinstance(target, bytes) else str(target)
                data = _bench_canned[target.rpartition(".")[2]].encode()
                headers = HTTPHeaders()
                headers["content-type"] = "application/x-amz-json-1.0"
                headers["content-length"] = str(len(data))
                return AWSResponse(request.url, 200, headers, _Raw(data))
            module.URLLib3Session.send = send
        spec.loader.exec_module = exec_module
        return spec
_bench_sys.meta_path.insert(0, _BenchHook)
"""

_CANNED = {
    "GetItem": json.dumps({"Item": _ITEM}),
    # The stack's sign-in key (SignInKeySecret), for the sign-in rows (bench/sign_in.py).
    "GetSecretValue": json.dumps(
        {
            "ARN": "arn:aws:secretsmanager:us-east-1:123456789012:secret:taskgate-sign-in-key",
            "Name": "taskgate-sign-in-key",
            "VersionId": "00000000-0000-4000-8000-000000000001",
            "SecretString": "bench-sign-in-key-0123456789abcdef0123456789abcdef",
            "VersionStages": ["AWSCURRENT"],
        }
    ),
    "Query": json.dumps({"Count": 0, "ScannedCount": 0}),
    "PutItem": "{}",
    "UpdateItem": "{}",
    "StartExecution": json.dumps(
        {
            "executionArn": "arn:aws:states:us-east-1:123456789012:execution:taskgate-task:x",
            "startDate": 1.8e9,
        }
    ),
}

_REQUEST = """\
{load}
{extra}
_bench_t_init = _bench_time.perf_counter()
class _BenchCtx:
    function_name = "taskgate-bench-api"
    function_version = "$LATEST"
    memory_limit_in_mb = 512
    invoked_function_arn = "arn:aws:lambda:us-east-1:123456789012:function:taskgate-bench-api"
    aws_request_id = "bench-request"
    log_group_name = "/aws/lambda/taskgate-bench-api"
    log_stream_name = "bench"
    def get_remaining_time_in_millis(self):
        return 29000
_bench_resp = api_handler.handler({event!r}, _BenchCtx())
if _bench_resp["statusCode"] != {status!r} or {expect!r} not in _bench_resp["body"]:
    raise SystemExit("unexpected response: " + repr(_bench_resp))
"""


def event(name: str) -> dict[str, Any]:
    ev: dict[str, Any] = json.loads((ROOT / "events" / name).read_text())
    return ev


def get_event() -> dict[str, Any]:
    return event("api_tasks_get.json")  # the task id above; the stub has it completed


def call_event() -> dict[str, Any]:
    return event("api_tools_call_task.json")


@dataclass
class Contender:
    key: str
    label: str
    python: Path
    env: dict[str, str]
    body: str
    spawn_to_ready: list[float] = field(default_factory=list)
    in_process: list[float] = field(default_factory=list)
    init: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)
    request: list[float] = field(default_factory=list)
    it_total: list[float] = field(default_factory=list)
    it_cum: dict[str, list[int]] = field(default_factory=dict)
    it_self: dict[str, list[int]] = field(default_factory=dict)
    it_depth: dict[str, int] = field(default_factory=dict)


def tree_env(tree: Path, python: Path) -> dict[str, str]:
    env = lambda_env()
    env["PYTHONPATH"] = os.pathsep.join(
        str(tree / p) for p in ("layers/taskgate", "layers/tools", "functions/api")
    )
    return env


# Leave-one-out variants of the ``get`` contender: undo one deferral at init (code run
# right after ``import api_handler``) or switch one cut off (environment).
VARIANTS: dict[str, tuple[str, dict[str, str]]] = {
    "eager-sfn": ("from taskgate.adapters import aws_clients; aws_clients.client('stepfunctions')", {}),
    "eager-s3": ("from taskgate.adapters import aws_clients; aws_clients.client('s3')", {}),
    "eager-2025": ("api_handler._root.era2025", {}),
    "eager-pydantic": ("import pydantic\nclass _M(pydantic.BaseModel):\n    a: int = 0", {}),
    "eager-tools": ("from taskgate import wiring; wiring.root().tools", {}),
    "eager-schemas": ("from taskgate import wiring; [t.input_schema() for t in wiring.root().tools]", {}),
    "no-trim": ("", {"TASKGATE_BOTOCORE_TRIM": "0"}),
    "no-plugins": ("", {"PYDANTIC_DISABLE_PLUGINS": "__all__"}),
}


def request_body(kind: str, extra: str = "", *, token: str | None = None, status: int = 200) -> str:
    """A child body (for coldstart.py's template too): ``import api_handler`` (Lambda's
    init), then one ``tasks/get`` (kind "get") or ``tools/call`` (kind "call") through
    ``api_handler.handler``, AWS answered by the HTTP-layer stub. With ``token`` (or
    ``status`` 401) the event is a signed-in deployment's: no API Gateway authorizer, the
    caller's bearer token (or none) checked by the function itself."""
    event, expect = (
        (get_event(), '"status":"completed"') if kind == "get" else (call_event(), '"status":"working"')
    )
    if token is not None or status != 200:
        event["requestContext"].pop("authorizer", None)
        if token is not None:
            event["headers"]["authorization"] = f"Bearer {token}"
        if status == 401:
            expect = "Unauthorized"
    return _STUB.format(canned=_CANNED) + _REQUEST.format(
        load="import api_handler", event=event, expect=expect, extra=extra, status=status
    )


def floor_get_body() -> str:
    """bench/stack_floor_get.py imported and sent the same tasks/get event."""
    load = f"_bench_sys.path.insert(0, {str(BENCH)!r})\nimport stack_floor_get as api_handler"
    return _STUB.format(canned=_CANNED) + _REQUEST.format(
        load=load, event=get_event(), expect='"status":"completed"', extra="", status=200
    )


def contenders(
    trees: dict[str, Path], kinds: list[str], python: Path, variants: list[str] | None = None
) -> list[Contender]:
    found = [
        Contender("mcp", "import mcp (mcp 2.3.0)", MCP_PY, base_env(), "import mcp"),
        Contender(
            "floor",
            "floor: bench/stack_floor.py (layer venv)",
            LAYER_PY,
            tree_env(ROOT, LAYER_PY),
            f"_bench_sys.path.insert(0, {str(BENCH)!r})\nimport stack_floor",
        ),
        Contender(
            "floor_get",
            "floor for tasks/get: stack_floor_get + request",
            LAYER_PY,
            tree_env(ROOT, LAYER_PY),
            floor_get_body(),
        ),
    ]
    for name, tree in trees.items():
        env = tree_env(tree, python)
        if "init" in kinds:
            found.append(
                Contender(f"{name}_init", f"{name}: import api_handler", python, env, "import api_handler")
            )
        if "get" in kinds:
            found.append(
                Contender(f"{name}_get", f"{name}: init + tasks/get", python, env, request_body("get"))
            )
        for v in (variants or []) if name == list(trees)[-1] else []:
            code, env_extra = VARIANTS[v]
            body = request_body("get", code)
            found.append(
                Contender(f"{name}_get_{v}", f"{name}: tasks/get, {v}", python, {**env, **env_extra}, body)
            )
        if "call" in kinds:
            found.append(
                Contender(
                    f"{name}_call", f"{name}: init + tools/call (task)", python, env, request_body("call")
                )
            )
    return found


def _run(c: Contender, cwd: str, extra: list[str]) -> tuple[float, str, str]:
    code = _CHILD.format(mark=MARK, body=c.body)
    t_spawn = time.perf_counter()
    proc = subprocess.run(
        [str(c.python), *extra, "-c", code], cwd=cwd, env=c.env, capture_output=True, text=True, timeout=120
    )
    if proc.returncode != 0 or "BENCH-READY" not in proc.stdout:
        raise RuntimeError(
            f"{c.label} failed ({proc.returncode}):\n{proc.stdout[-2000:]}\n{proc.stderr[-3000:]}"
        )
    return t_spawn, proc.stdout, proc.stderr


def time_once(c: Contender, cwd: str) -> None:
    t_spawn, out, _ = _run(c, cwd, [])
    line = next(x for x in out.splitlines() if x.startswith("BENCH-READY"))
    _, t0, t1, ti, cpu = line.split()
    c.spawn_to_ready.append(float(t1) - t_spawn)
    c.cpu.append(float(cpu))
    c.in_process.append(float(t1) - float(t0))
    if ti != "None":
        c.init.append(float(ti) - t_spawn)
        c.request.append(float(t1) - float(ti))


def importtime_once(c: Contender, cwd: str) -> None:
    _, _, err = _run(c, cwd, ["-X", "importtime"])
    body = err.split(MARK + "\n", 1)[1] if MARK in err else err
    total = 0
    for raw in body.splitlines():
        m = _IMPORTTIME.match(raw)
        if not m:
            continue
        self_us, cum_us, depth, mod = int(m[1]), int(m[2]), len(m[3]) // 2, m[4]
        if depth == 0:
            total += cum_us
        c.it_cum.setdefault(mod, []).append(cum_us)
        c.it_self.setdefault(mod, []).append(self_us)
        c.it_depth.setdefault(mod, depth)
    c.it_total.append(total / 1e6)


def med(xs: list[float]) -> float:
    return statistics.median(xs) if xs else float("nan")


def top(c: Contender, n: int = 10) -> list[tuple[str, int, float, float]]:
    rows = [(m, c.it_depth[m], med(v) / 1000, med(c.it_self[m]) / 1000) for m, v in c.it_cum.items()]
    rows.sort(key=lambda r: r[2], reverse=True)
    return rows[:n]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=11)
    ap.add_argument("--importtime-runs", type=int, default=3)
    ap.add_argument("--tree", action="append", default=[], help="name=path of a source tree")
    ap.add_argument("--only", default="init,get,call")
    ap.add_argument("--python", default=str(LAYER_PY), help="interpreter for ours (default: layer venv)")
    ap.add_argument(
        "--variants", default="", help=f"comma-separated, of: {', '.join(VARIANTS)} (on the last --tree)"
    )
    ap.add_argument("--json")
    ap.add_argument("--top", type=int, default=10)
    args = ap.parse_args()
    trees = {k: (ROOT / v).resolve() for k, v in (t.split("=", 1) for t in args.tree or ["ours=."])}
    cs = contenders(
        trees, args.only.split(","), Path(args.python), [v for v in args.variants.split(",") if v]
    )
    with tempfile.TemporaryDirectory(prefix="taskgate-fr-") as cwd:
        for c in cs:
            _run(c, cwd, [])  # warm-up: disk cache, .pyc
        for i in range(args.runs):
            print(f"  .. round {i + 1}/{args.runs}", file=sys.stderr, flush=True)
            for c in cs:
                time_once(c, cwd)
        for i in range(args.importtime_runs):
            print(f"  .. importtime round {i + 1}/{args.importtime_runs}", file=sys.stderr, flush=True)
            for c in cs:
                if c.key != "mcp" or i == 0:
                    importtime_once(c, cwd)
    mcp = med(next(c for c in cs if c.key == "mcp").spawn_to_ready)
    mcp_cpu = med(next(c for c in cs if c.key == "mcp").cpu)
    mcp_min = min(next(c for c in cs if c.key == "mcp").spawn_to_ready)
    by = {c.key: c for c in cs}
    print(f"load average now: {os.getloadavg()}")
    print("wall = spawn->ready (the bench's headline); cpu = the child's process_time() at ready (user+sys,")
    print(
        "  interpreter start-up included: steadier than wall on a busy machine); init = spawn->api_handler imported"
    )
    print(
        f"{'contender':44} {'runs':>4} {'wall p50':>8} {'x mcp':>6} {'paired':>6} {'min':>6} {'x min':>6}"
        f" {'cpu p50':>7} {'x mcp':>6} {'init':>6} {'req':>6} {'it-total':>8}"
    )
    for c in cs:
        paired = med([a / b for a, b in zip(c.spawn_to_ready, by["mcp"].spawn_to_ready, strict=False)])
        print(
            f"{c.label:44} {len(c.spawn_to_ready):4} {med(c.spawn_to_ready) * 1000:8.1f}"
            f" {med(c.spawn_to_ready) / mcp:6.3f} {paired:6.3f} {min(c.spawn_to_ready) * 1000:6.1f}"
            f" {min(c.spawn_to_ready) / mcp_min:6.3f} {med(c.cpu) * 1000:7.1f} {med(c.cpu) / mcp_cpu:6.3f}"
            f" {med(c.init) * 1000:6.1f} {med(c.request) * 1000:6.1f} {med(c.it_total) * 1000:8.1f}"
        )
    for c in cs:
        if c.key in ("mcp",) or not c.it_cum:
            continue
        print(f"\n-X importtime top {args.top} by cumulative, {c.label} (median over runs; ms)")
        for m, d, cum, slf in top(c, args.top):
            print(f"  {'  ' * d + m:60} {cum:8.1f} {slf:8.1f}")
    if args.json:
        Path(args.json).write_text(
            json.dumps(
                {
                    c.key: {
                        "label": c.label,
                        "spawn_to_ready": c.spawn_to_ready,
                        "cpu": c.cpu,
                        "init": c.init,
                        "request": c.request,
                        "importtime_total": c.it_total,
                        "top": top(c, 30),
                    }
                    for c in cs
                },
                indent=1,
            )
        )


if __name__ == "__main__":
    main()
