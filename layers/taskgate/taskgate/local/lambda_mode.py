"""The local server's Lambda mode (``TASKGATE_LAMBDA=1``, ``make serve LAMBDA=1``): the API
function runs as Lambda runs it, so that a design which only works because the local server
keeps one process busy passes nothing here that fails deployed.

- **One invocation per environment at a time.** Each request becomes an API Gateway HTTP API
  event (payload 2.0) handed to ``functions/api/api_handler.py``'s handler in an execution
  environment of its own: a process (lambda_env.py) that ran the function's init and serves
  one invocation at a time. A request that finds every environment busy gets a new one (a cold
  start), up to ``max_environments``; past that, Lambda's throttle (429).
- **Frozen once it has answered.** The moment the handler returns, the environment is stopped
  (SIGSTOP, with any process it started), as Lambda freezes it: nothing of that request runs
  until the next invocation of that environment thaws it (SIGCONT), maybe never. Any thread an
  invocation started that is still running then (a pool's idle worker aside) is reported:
  logged as an error and listed at ``GET /_lambda``, which the e2e tests check is empty.
- **Cut at the function's timeout** (``FRONT_TIMEOUT_SECONDS``: the template sets it to
  ApiFunction's Timeout, 29 s; tests scale it down): the environment is killed and the caller
  gets Lambda's error (502 with ``X-Amz-Function-Error``, which API Gateway turns into its own
  500/502); the next request starts a fresh one. Nothing at all of that request runs on.
- **Nothing shared but AWS.** The environments reach the emulated AWS over HTTP (the local
  AWS endpoint, taskgate.local.endpoint, in this process with the worker run in it): no
  memory, no module state, no thread is shared between the API and the worker, as deployed.

Not modelled: the client's hang-up (API Gateway does not tell the function either), Lambda's
concurrency quota and init timeout, response streaming (the streaming endpoint, STREAM_PORT,
still runs in this process), and the worker's own freeze (its steps run in this process).
"""

from __future__ import annotations

import asyncio
import atexit
import base64
import contextlib
import json
import logging
import multiprocessing
import os
import secrets
import signal
import threading
import time
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from starlette.types import ASGIApp

from .lambda_env import Answer, Invocation, Ready, serve

logger = logging.getLogger(__name__)

ENABLED = "TASKGATE_LAMBDA"
MAX_ENVIRONMENTS = "TASKGATE_LAMBDA_MAX_ENVIRONMENTS"
# The function's own Timeout, when it is not FRONT_TIMEOUT_SECONDS (which the template sets to
# it): a function cut before the app expects is how a misconfigured stack fails.
TIMEOUT = "TASKGATE_LAMBDA_TIMEOUT_SECONDS"
REPORT_PATH = "/_lambda"
INIT_SECONDS = 60.0  # how long a cold start may take before it counts as failed (a loaded machine)
FUNCTION_ERROR = "x-amz-function-error"
THROTTLED = (
    b'{"Reason":"ReservedFunctionConcurrentInvocationLimitExceeded","Type":"User","message":"Rate Exceeded."}'
)


def enabled(environ: Mapping[str, str]) -> bool:
    return environ.get(ENABLED, "").strip().lower() in {"1", "true", "yes", "on"}


@dataclass
class LeftRunning:
    """A thread an invocation left running after its answer."""

    request_id: str
    method: str
    rpc: str | None
    thread: str
    stack: list[str]


@dataclass
class Report:
    """What the service saw: ``GET /_lambda``."""

    timeout_seconds: float
    invocations: int = 0
    cold_starts: int = 0
    timeouts: int = 0
    errors: int = 0
    throttles: int = 0
    environments: int = 0
    # The longest a cold start took, from the environment's fork to its init's end: on a loaded
    # machine, what a client's connect timeout was up against.
    slowest_cold_start_seconds: float = 0.0
    left_running: list[LeftRunning] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        out = dict(self.__dict__)
        out["left_running"] = [r.__dict__ for r in self.left_running]
        return out


def _descendants(pid: int) -> list[int]:
    """The processes ``pid`` started, and theirs (Linux /proc)."""
    out: list[int] = []
    stack = [pid]
    while stack:
        parent = stack.pop()
        try:
            tasks = os.listdir(f"/proc/{parent}/task")
        except OSError:
            continue
        for tid in tasks:
            try:
                children = Path(f"/proc/{parent}/task/{tid}/children").read_text().split()
            except OSError:
                continue
            for child in map(int, children):
                out.append(child)
                stack.append(child)
    return out


def _signal_all(pids: list[int], sig: int) -> None:
    for pid in pids:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, sig)


class Environment:
    """One execution environment: its process and the connection the service invokes it on."""

    def __init__(self, context: Any, handler_path: Path) -> None:
        parent, child = context.Pipe()
        self.process = context.Process(
            target=serve, args=(child, str(handler_path)), daemon=True, name="api-environment"
        )
        self.process.start()
        child.close()
        self.conn = parent
        self.frozen = False
        self.invocations = 0

    @property
    def pid(self) -> int:
        return int(self.process.pid)

    def ready(self, timeout: float) -> Ready | Answer | None:
        """The init's outcome: Ready, the init error, or None (it died or took too long)."""
        try:
            if not self.conn.poll(timeout):
                return None
            message = self.conn.recv()
        except (EOFError, OSError):
            return None
        return message if isinstance(message, (Ready, Answer)) else None

    def freeze(self) -> None:
        # The environment first, so it starts nothing new while its children are stopped.
        _signal_all([self.pid], signal.SIGSTOP)
        _signal_all(_descendants(self.pid), signal.SIGSTOP)
        self.frozen = True

    def thaw(self) -> None:
        if self.frozen:
            _signal_all([*_descendants(self.pid), self.pid], signal.SIGCONT)
            self.frozen = False

    def kill(self) -> None:
        _signal_all([*_descendants(self.pid), self.pid], signal.SIGKILL)
        with contextlib.suppress(Exception):
            self.conn.close()
        self.process.join(10)


class Throttled(Exception):
    pass


@dataclass(frozen=True)
class HttpAnswer:
    status: int
    headers: list[tuple[bytes, bytes]]
    body: bytes


class LambdaService:
    """An ASGI app that serves each request by invoking the API function in an environment."""

    def __init__(self, handler_path: Path, *, timeout_seconds: float, max_environments: int = 64) -> None:
        self.handler_path = handler_path
        self.timeout_seconds = timeout_seconds
        self.max_environments = max_environments
        self.report = Report(timeout_seconds)
        self._context = multiprocessing.get_context("forkserver")
        # The fork server imports the code once; every environment is forked from it.
        self._context.set_forkserver_preload(["taskgate.local.lambda_env"])
        self._lock = threading.Lock()
        self._idle: list[Environment] = []
        self._all: set[Environment] = set()
        self._pool = ThreadPoolExecutor(max_environments + 4, thread_name_prefix="lambda-invoke")
        self._started = False
        atexit.register(self.stop)

    # -- environments ---------------------------------------------------------------------
    def start(self) -> LambdaService:
        """Start one environment and wait for its init (the first request is then warm);
        raise with the init's error if it fails."""
        env = self._cold()
        with self._lock:
            self._idle.append(env)
        self._started = True
        return self

    def stop(self) -> None:
        """Kill every environment, frozen or not (a stopped process never acts on a SIGTERM,
        and multiprocessing's exit would wait for it)."""
        with self._lock:
            every, self._all, self._idle = list(self._all), set(), []
        for env in every:
            env.kill()
        self._pool.shutdown(wait=False, cancel_futures=True)

    def _cold(self) -> Environment:
        with self._lock:
            if len(self._all) >= self.max_environments:
                self.report.throttles += 1
                raise Throttled()
            began = time.monotonic()
            env = Environment(self._context, self.handler_path)
            self._all.add(env)
            self.report.cold_starts += 1
            self.report.environments = len(self._all)
        outcome = env.ready(INIT_SECONDS)
        if isinstance(outcome, Ready):
            with self._lock:
                took = round(time.monotonic() - began, 2)
                self.report.slowest_cold_start_seconds = max(self.report.slowest_cold_start_seconds, took)
            return env
        self._discard(env)
        detail = outcome.payload if isinstance(outcome, Answer) else "no answer"
        raise RuntimeError(f"the API function's init failed: {detail}")

    def _take(self) -> Environment:
        with self._lock:
            if self._idle:
                # The most recently used first, as Lambda tends to route to a warm environment.
                return self._idle.pop()
        return self._cold()

    def _release(self, env: Environment) -> None:
        with self._lock:
            self._idle.append(env)

    def _discard(self, env: Environment) -> None:
        env.kill()
        with self._lock:
            self._all.discard(env)
            self.report.environments = len(self._all)

    # -- one invocation -------------------------------------------------------------------
    def invoke(self, event: dict[str, Any], rpc: str | None = None) -> tuple[Any, str | None]:
        """Invoke the function with ``event``: (its response or Lambda's error payload, the
        function error or None). Raises Throttled when no environment can be had."""
        request_id = event["requestContext"]["requestId"]
        try:
            env = self._take()
        except RuntimeError as exc:
            self.report.errors += 1
            return {"errorType": "Runtime.InitError", "errorMessage": str(exc)}, "Unhandled"
        with self._lock:
            self.report.invocations += 1
        deadline = time.time() + self.timeout_seconds
        env.thaw()
        try:
            env.conn.send(Invocation(event, request_id, int(deadline * 1000)))
            finished = env.conn.poll(max(0.0, deadline - time.time()))
            answer = env.conn.recv() if finished else None
        except (EOFError, OSError):
            answer, finished = None, True
        if answer is None:
            self._discard(env)
            if finished:  # the process went away mid-invocation
                with self._lock:
                    self.report.errors += 1
                return {"errorType": "Runtime.ExitError", "errorMessage": "the runtime exited"}, "Unhandled"
            with self._lock:
                self.report.timeouts += 1
            message = (
                f"RequestId: {request_id} Error: Task timed out after {self.timeout_seconds:.2f} seconds"
            )
            return {"errorType": "Sandbox.Timedout", "errorMessage": message}, "Unhandled"
        env.freeze()
        env.invocations += 1
        self._release(env)
        if answer.left_running:
            self._left_running(request_id, event, rpc, answer.left_running)
        if answer.function_error:
            with self._lock:
                self.report.errors += 1
        return answer.payload, answer.function_error

    def _left_running(
        self, request_id: str, event: dict[str, Any], rpc: str | None, threads: list[dict[str, Any]]
    ) -> None:
        method = event["requestContext"]["http"]["method"]
        for thread in threads:
            entry = LeftRunning(request_id, method, rpc, thread["thread"], thread["stack"])
            with self._lock:
                self.report.left_running.append(entry)
            logger.error(
                "Lambda mode: invocation %s (%s %s) left thread %r running after its answer; Lambda "
                "freezes it there and may never resume it:\n%s",
                request_id,
                method,
                rpc or "",
                thread["thread"],
                "\n".join(thread["stack"]),
            )

    def answer(self, event: dict[str, Any], rpc: str | None) -> HttpAnswer:
        try:
            payload, error = self.invoke(event, rpc)
        except Throttled:
            return HttpAnswer(
                429,
                [(b"content-type", b"application/json"), (b"x-amzn-errortype", b"TooManyRequestsException")],
                THROTTLED,
            )
        if error is not None:
            body = json.dumps(payload).encode()
            headers = [(b"content-type", b"application/json"), (FUNCTION_ERROR.encode(), error.encode())]
            return HttpAnswer(502, headers, body)
        return http_response(payload)

    # -- ASGI -----------------------------------------------------------------------------
    @property
    def app(self) -> ASGIApp:
        # A function (not a bound method), so that servers see an ASGI 3 app.
        async def app(scope: Any, receive: Any, send: Any) -> None:
            await self._serve(scope, receive, send)

        return app

    async def _serve(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            while (await receive())["type"] != "lifespan.shutdown":
                await send({"type": "lifespan.startup.complete"})
            self.stop()
            await send({"type": "lifespan.shutdown.complete"})
            return
        if scope["type"] != "http":
            return
        body = bytearray()
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        if scope["path"] == REPORT_PATH and scope["method"] == "GET":
            with self._lock:
                data = json.dumps(self.report.as_dict()).encode()
            answer = HttpAnswer(200, [(b"content-type", b"application/json")], data)
        elif scope["path"] == "/health" and scope["method"] == "GET":
            ok = self._started
            answer = HttpAnswer(
                200 if ok else 503, [(b"content-type", b"application/json")], b'{"status":"ok"}'
            )
        else:
            event = http_api_event(scope, bytes(body))
            loop = asyncio.get_running_loop()
            answer = await loop.run_in_executor(self._pool, self.answer, event, _rpc_method(bytes(body)))
        await send({"type": "http.response.start", "status": answer.status, "headers": answer.headers})
        await send({"type": "http.response.body", "body": answer.body})


def http_api_event(scope: Mapping[str, Any], body: bytes) -> dict[str, Any]:
    """The event API Gateway's HTTP API (payload format 2.0) hands the function for this request."""
    headers: dict[str, list[str]] = {}
    cookies: list[str] = []
    for raw_name, raw_value in scope.get("headers", []):
        name, value = raw_name.decode("latin-1").lower(), raw_value.decode("latin-1")
        if name == "cookie":
            cookies += [c.strip() for c in value.split(";") if c.strip()]
            continue
        headers.setdefault(name, []).append(value)
    now = time.time()
    request_id = base64.b32encode(secrets.token_bytes(10)).decode().rstrip("=")
    try:
        text, encoded = body.decode("utf-8"), False
    except UnicodeDecodeError:
        text, encoded = base64.b64encode(body).decode(), True
    event: dict[str, Any] = {
        "version": "2.0",
        "routeKey": "$default",
        "rawPath": scope["path"],
        "rawQueryString": scope.get("query_string", b"").decode("latin-1"),
        "headers": {name: ",".join(values) for name, values in headers.items()},
        "requestContext": {
            "accountId": "123456789012",
            "apiId": "local",
            "http": {
                "method": scope["method"],
                "path": scope["path"],
                "protocol": f"HTTP/{scope.get('http_version', '1.1')}",
                "sourceIp": (scope.get("client") or ("127.0.0.1", 0))[0],
                "userAgent": ",".join(headers.get("user-agent", [])),
            },
            "requestId": request_id,
            "routeKey": "$default",
            "stage": "$default",
            "time": time.strftime("%d/%b/%Y:%H:%M:%S +0000", time.gmtime(now)),
            "timeEpoch": int(now * 1000),
        },
        "isBase64Encoded": encoded,
    }
    if cookies:
        event["cookies"] = cookies
    if body:
        event["body"] = text
    return event


def http_response(payload: Any) -> HttpAnswer:
    """What API Gateway makes of the function's (payload 2.0) response."""
    if not isinstance(payload, dict) or "statusCode" not in payload:
        # A bare value is API Gateway's 200 with that value as JSON.
        return HttpAnswer(200, [(b"content-type", b"application/json")], json.dumps(payload).encode())
    headers = [(str(k).lower().encode(), str(v).encode()) for k, v in (payload.get("headers") or {}).items()]
    headers += [(b"set-cookie", str(c).encode()) for c in payload.get("cookies") or []]
    raw = payload.get("body") or ""
    body = base64.b64decode(raw) if payload.get("isBase64Encoded") else str(raw).encode()
    return HttpAnswer(int(payload["statusCode"]), headers, body)


def _rpc_method(body: bytes) -> str | None:
    try:
        message = json.loads(body)
    except ValueError:
        return None
    if isinstance(message, dict) and isinstance(message.get("method"), str):
        return str(message["method"])
    return None


def service(environ: Mapping[str, str], timeout_seconds: float) -> LambdaService:
    """The service for the local server, its first environment warm: ApiFunction's handler
    from this checkout (or the installed stack), cut at ``timeout_seconds`` (FRONT_TIMEOUT_SECONDS,
    the template's ApiFunction Timeout), or at TASKGATE_LAMBDA_TIMEOUT_SECONDS when set."""
    from .runtime import repo_root

    handler = repo_root() / "functions" / "api" / "api_handler.py"
    limit = int(environ.get(MAX_ENVIRONMENTS, "64"))
    timeout = float(environ.get(TIMEOUT) or timeout_seconds)
    return LambdaService(handler, timeout_seconds=timeout, max_environments=limit).start()


def describe(service: LambdaService) -> str:
    return (
        f"ApiFunction in execution environments (one request each at a time, frozen once answered), "
        f"cut at {service.timeout_seconds:g} s, at most {service.max_environments}; "
        f"report at {REPORT_PATH}"
    )
