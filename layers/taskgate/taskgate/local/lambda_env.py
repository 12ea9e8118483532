"""One execution environment of the API function in the local server's Lambda mode
(lambda_mode.py): a process of its own, forked from one that has imported the code (as
SnapStart restores one), which initialises ``functions/api/api_handler.py`` as Lambda does
and then runs one invocation at a time. Between invocations the service stops the process
(SIGSTOP), as Lambda freezes an execution environment once its handler has answered; past the
function's timeout it kills it, as Lambda ends the invocation and resets the environment.

After each invocation it reports the threads still running that an invocation started (work
the API process goes on with after its answer, which Lambda freezes there and may never
resume). A pool's worker waiting for work is not running: it is left alone.

This module is what the fork server imports ahead of every environment: it imports the heavy
modules the handler's init needs, and builds nothing (no client, no socket) before the fork.
"""

from __future__ import annotations

import contextlib
import ctypes
import importlib.util
import os
import signal
import sys
import threading
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from multiprocessing.connection import Connection
from pathlib import Path
from types import FrameType, ModuleType
from typing import Any

# Imported here so the fork server holds them: each environment then starts with them loaded.
import boto3  # noqa: F401
import botocore.session  # noqa: F401
import mangum
import pydantic  # noqa: F401
import starlette.applications  # noqa: F401
from aws_lambda_powertools import Logger, Metrics  # noqa: F401

from .. import root as _root  # noqa: F401
from .. import wiring

FUNCTION_NAME = "taskgate-api"
REGION = "us-east-1"
ACCOUNT = "123456789012"
# A pool's loop waiting for its next work item (its innermost frames are the queue's wait):
# the thread is idle, not work left running.
_POOL_LOOPS = (
    ("concurrent/futures/thread.py", "_worker"),
    ("anyio/_backends/_asyncio.py", "run"),
)
_WAITS = ("/queue.py", "/threading.py")


@dataclass(frozen=True)
class Invocation:
    """What the service sends an environment: the event and when the invocation must end."""

    event: dict[str, Any]
    request_id: str
    deadline_ms: int  # epoch milliseconds


@dataclass(frozen=True)
class Answer:
    """What an environment sends back: the handler's response or Lambda's error payload
    (``function_error`` set), and the threads an invocation left running."""

    payload: Any
    function_error: str | None
    left_running: list[dict[str, Any]]
    seconds: float


@dataclass(frozen=True)
class Ready:
    pid: int
    init_seconds: float


class LambdaContext:
    """The handler's context, as Lambda's Python runtime gives it."""

    function_name = FUNCTION_NAME
    function_version = "$LATEST"
    memory_limit_in_mb = 512
    log_group_name = f"/aws/lambda/{FUNCTION_NAME}"
    invoked_function_arn = f"arn:aws:lambda:{REGION}:{ACCOUNT}:function:{FUNCTION_NAME}"

    def __init__(self, request_id: str, deadline_ms: int) -> None:
        self.aws_request_id = request_id
        self.log_stream_name = f"local/{os.getpid()}"
        self._deadline_ms = deadline_ms

    def get_remaining_time_in_millis(self) -> int:
        return max(0, self._deadline_ms - int(time.time() * 1000))


def idle(frame: FrameType | None) -> bool:
    """Whether a thread whose innermost frame is ``frame`` is a pool's worker waiting for work."""
    while frame is not None and frame.f_code.co_filename.endswith(_WAITS):
        frame = frame.f_back
    if frame is None:
        return False
    path = frame.f_code.co_filename.replace(os.sep, "/")
    return any(path.endswith(file) and frame.f_code.co_name == name for file, name in _POOL_LOOPS)


def running_threads(baseline: set[int], grace: float = 0.05) -> list[dict[str, Any]]:
    """The threads alive now that were not at ``baseline`` (after init) and are not idle
    pool workers, each with where it is: given ``grace`` to finish first (a thread that
    has handed back its result may still be on its way out)."""
    frames = sys._current_frames()
    suspects = [
        t
        for t in threading.enumerate()
        if t.ident not in baseline and t.is_alive() and not idle(frames.get(t.ident or 0))
    ]
    deadline = time.monotonic() + grace
    for thread in suspects:
        thread.join(max(0.0, deadline - time.monotonic()))
    frames = sys._current_frames()
    out = []
    for thread in suspects:
        if not thread.is_alive():
            continue
        frame = frames.get(thread.ident or 0)
        if idle(frame):
            continue
        stack = traceback.format_stack(frame)[-4:] if frame is not None else []
        out.append({"thread": thread.name, "daemon": thread.daemon, "stack": [s.rstrip() for s in stack]})
    return out


def _die_with_parent() -> None:
    # If the fork server (and so the local server) goes, this environment goes too, even stopped.
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


def _load(path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location("taskgate_local_api_handler", path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def api_handler(path: Path) -> Callable[[dict[str, Any], Any], Any]:
    """ApiFunction's handler as its init builds it, with the local server's development
    settings applied the way the local server applies them (taskgate/local/__main__.py): its
    test documents' fetch, and its development tokens in front of the app."""
    from . import aws_calls
    from .dev_auth import DevAuthMiddleware, parse_tokens
    from .sign_in import with_test_documents

    aws_calls.install_from_env()  # each environment records its own calls, as ApiFunction
    wiring.reset(to=with_test_documents(wiring.root()))
    module = _load(path)
    tokens = os.environ.get("TASKGATE_DEV_TOKENS")
    if tokens:
        module._mangum = mangum.Mangum(  # type: ignore[attr-defined]
            DevAuthMiddleware(module.app, parse_tokens(tokens)), lifespan="off"
        )
    return module.handler  # type: ignore[no-any-return]


def _error_payload(exc: BaseException) -> dict[str, Any]:
    # Lambda's shape for an unhandled exception.
    return {
        "errorMessage": str(exc),
        "errorType": type(exc).__name__,
        "stackTrace": traceback.format_tb(exc.__traceback__),
    }


def serve(conn: Connection, handler_path: str) -> None:
    """The environment's life: init, then one invocation per message until the service
    closes the connection (or stops or kills the process)."""
    _die_with_parent()
    started = time.monotonic()
    try:
        handler = api_handler(Path(handler_path))
    except BaseException as exc:  # an init error, as Lambda reports it
        conn.send(Answer(_error_payload(exc), "Unhandled", [], time.monotonic() - started))
        raise
    baseline = {t.ident for t in threading.enumerate() if t.ident is not None}
    conn.send(Ready(os.getpid(), time.monotonic() - started))
    while True:
        try:
            invocation: Invocation = conn.recv()
        except EOFError:
            return
        began = time.monotonic()
        context = LambdaContext(invocation.request_id, invocation.deadline_ms)
        error: str | None = None
        try:
            payload = handler(invocation.event, context)
        except Exception as exc:
            payload, error = _error_payload(exc), "Unhandled"
        left = running_threads(baseline)
        conn.send(Answer(payload, error, left, time.monotonic() - began))
