"""Cold start to the first answered request, in fresh processes: the bodies bench/run.py's
section 1 (coldstart.py) runs, and a command line to compare source trees with them. Stdlib only.

    .venv/bin/python bench/first_request.py [--runs 11] [--tree before=.tools/before]
        [--tree after=.] [--only init,get,call] [--json out.json]

Each contender is a fresh ``python -c`` (the layer-only venv: what `sam build` ships) with the
ApiFunction's environment that imports ``api_handler`` (Lambda's init) and then calls
``api_handler.handler`` once with an API Gateway HTTP API v2 event: a 2026-07-28
``tasks/get`` of a completed task (``get``) or a ``tools/call`` that creates a task (``call``).
AWS is stubbed at botocore's HTTP layer: ``URLLib3Session.send`` answers from memory after
botocore has resolved the endpoint, validated, serialised and signed the request (the patch is
put in place when ``botocore.httpsession`` is first imported, so it moves nothing earlier).
Ready = the handler has returned. ``import mcp`` (mcp 2.3.0) runs in the same rounds as the
baseline; figures are medians of spawn->ready and of the child's CPU time (coldstart.py).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from benchlib import BENCH, LAYER_PY, MCP_PY, ROOT, base_env, lambda_env, median, progress
from coldstart import Contender, rounds

TASK_ID = "00000000-0000-4000-8000-000000000000"
OWNER = "https://cognito-idp.us-east-1.amazonaws.com/us-east-1_example#user-1234"

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
                operation = target.rpartition(".")[2]
                data = _bench_canned[operation]
                if operation == "StartExecution":
                    # The API checks that the execution started is the one it named.
                    import json
                    body = request.body.decode() if isinstance(request.body, bytes) else str(request.body)
                    data = data.replace("{{name}}", json.loads(body)["name"])
                data = data.encode()
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
            "executionArn": "arn:aws:states:us-east-1:123456789012:execution:taskgate-task:{name}",
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


def tree_env(tree: Path, python: Path) -> dict[str, str]:
    env = lambda_env()
    env["PYTHONPATH"] = os.pathsep.join(
        str(tree / p) for p in ("layers/taskgate", "layers/tools", "functions/api")
    )
    return env


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


def contenders(trees: dict[str, Path], kinds: list[str], python: Path) -> list[Contender]:
    found = [Contender("mcp", "import mcp (mcp 2.3.0)", MCP_PY, base_env(), "import mcp")]
    bodies = {"init": "import api_handler", "get": request_body("get"), "call": request_body("call")}
    labels = {"init": "import api_handler", "get": "init + tasks/get", "call": "init + tools/call (task)"}
    for name, tree in trees.items():
        env = tree_env(tree, python)
        found += [
            Contender(f"{name}_{kind}", f"{name}: {labels[kind]}", python, env, bodies[kind])
            for kind in ("init", "get", "call")
            if kind in kinds
        ]
    return found


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=11)
    ap.add_argument("--tree", action="append", default=[], help="name=path of a source tree")
    ap.add_argument("--only", default="init,get,call")
    ap.add_argument("--python", default=str(LAYER_PY), help="interpreter for ours (default: layer venv)")
    ap.add_argument("--json")
    args = ap.parse_args()
    trees = {k: (ROOT / v).resolve() for k, v in (t.split("=", 1) for t in args.tree or ["ours=."])}
    found = contenders(trees, args.only.split(","), Path(args.python))
    with tempfile.TemporaryDirectory(prefix="taskgate-fr-") as cwd:
        rounds(found, args.runs, cwd, progress)
    mcp = next(c for c in found if c.key == "mcp")
    print(f"load average now: {os.getloadavg()}")
    print("wall = spawn->ready (the headline); cpu = the child's process_time() at ready (user+sys)")
    print(
        f"{'contender':44} {'runs':>4} {'wall p50':>8} {'x mcp':>6} {'paired':>6} {'cpu p50':>7} {'x mcp':>6}"
    )
    for c in found:
        wall, cpu = median(c.spawn_to_ready_s), median(c.cpu_s)
        paired = median([a / b for a, b in zip(c.spawn_to_ready_s, mcp.spawn_to_ready_s, strict=False)])
        print(
            f"{c.label:44} {len(c.spawn_to_ready_s):4} {wall * 1000:8.1f} {wall / median(mcp.spawn_to_ready_s):6.3f}"
            f" {paired:6.3f} {cpu * 1000:7.1f} {cpu / median(mcp.cpu_s):6.3f}"
        )
    if args.json:
        Path(args.json).write_text(json.dumps({c.key: c.summary() for c in found}, indent=1))


if __name__ == "__main__":
    main()
