"""SnapStart: every environment restored from one snapshot gets its own credentials, clients
and random state, through the runtime's hook library as the managed runtime drives it
(awslambdaric's lambda_runtime_hooks_runner), or through the first-invocation fallback."""

from __future__ import annotations

import importlib.util
import random
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from types import FrameType, ModuleType
from typing import Any

import botocore.httpsession
import pytest
import snapshot_restore_py
from botocore.awsrequest import AWSResponse
from botocore.compat import HTTPHeaders

from taskgate import snapstart, wiring
from taskgate.adapters import aws_clients

ROOT = Path(__file__).resolve().parents[2]
OUR_CODE = tuple(str(ROOT / p) for p in ("layers/taskgate/taskgate", "layers/tools", "functions"))


def run_after_restore() -> None:
    """What the Python runtime does after restoring a snapshot (awslambdaric 4.x)."""
    for func, args, kwargs in snapshot_restore_py.get_after_restore():
        func(*args, **kwargs)


@pytest.fixture
def lambda_env(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """The function's environment at snapshot time; yields the access keys requests were signed with."""
    monkeypatch.setenv("TASK_TABLE", "tasks")
    monkeypatch.setenv("STATE_MACHINE_ARN", "arn:aws:states:us-east-1:123456789012:stateMachine:t")
    monkeypatch.setenv("AWS_REGION", "us-east-1")
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIDSNAPSHOT")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "secret-at-snapshot")
    monkeypatch.setenv("POWERTOOLS_TRACE_DISABLED", "true")
    monkeypatch.delenv("AWS_SESSION_TOKEN", raising=False)
    monkeypatch.delenv("AWS_ENDPOINT_URL", raising=False)
    monkeypatch.setattr(snapshot_restore_py, "_after_restore_registry", [])
    signed: list[str] = []

    def send(self: Any, request: Any) -> AWSResponse:
        auth = request.headers["Authorization"]
        auth = auth.decode() if isinstance(auth, bytes) else auth
        signed.append(auth.split("Credential=")[1].split("/")[0])

        class Raw:
            def stream(self, **kwargs: Any) -> Iterator[bytes]:
                yield b"{}"

        headers = HTTPHeaders()
        headers["content-type"] = "application/x-amz-json-1.0"
        return AWSResponse(request.url, 200, headers, Raw())

    monkeypatch.setattr(botocore.httpsession.URLLib3Session, "send", send)
    snapstart.uninstall()
    wiring.reset()
    yield signed
    snapstart.uninstall()
    wiring.reset()


def test_after_a_restore_the_adapters_sign_with_the_new_environments_credentials(
    lambda_env: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # Init, as api_handler runs it: the store and its client are in the snapshot.
    store = wiring.root().store
    before = aws_clients.client("dynamodb")
    assert snapstart.install() == "runtime"
    store.get("t1")
    # Restored somewhere else, later: this environment has its own credentials.
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIDRESTORED")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "secret-after-restore")
    run_after_restore()
    store.get("t2")
    assert lambda_env == ["AKIDSNAPSHOT", "AKIDRESTORED"]
    assert aws_clients.client("dynamodb") is not before


def test_each_restored_environment_draws_its_own_retry_jitter(lambda_env: list[str]) -> None:
    assert snapstart.install() == "runtime"
    snapshot = random.getstate()
    # Without the hook, every environment restored from the snapshot draws the same numbers.
    same = []
    for _ in range(2):
        random.setstate(snapshot)
        same.append(random.random())
    assert same[0] == same[1]
    drawn = []
    for _ in range(2):
        random.setstate(snapshot)
        run_after_restore()
        drawn.append(random.random())
    assert drawn[0] != drawn[1]


def test_without_the_runtimes_library_the_first_invocation_of_a_restored_environment_runs_the_hooks(
    lambda_env: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    ran: list[str] = []
    monkeypatch.setattr(snapstart, "HOOKS", [lambda: ran.append("hook")])
    monkeypatch.setitem(sys.modules, "snapshot_restore_py", None)  # import fails
    monkeypatch.setenv("AWS_LAMBDA_INITIALIZATION_TYPE", "snap-start")
    assert snapstart.install() == "first-invocation"
    snapstart.before_invocation()
    snapstart.before_invocation()
    assert ran == ["hook"]


def test_without_snapstart_nothing_runs(lambda_env: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    ran: list[str] = []
    monkeypatch.setattr(snapstart, "HOOKS", [lambda: ran.append("hook")])
    monkeypatch.setitem(sys.modules, "snapshot_restore_py", None)
    monkeypatch.setenv("AWS_LAMBDA_INITIALIZATION_TYPE", "on-demand")
    assert snapstart.install() == "none"
    snapstart.before_invocation()
    assert ran == []


def _load(function: str) -> ModuleType:
    path = ROOT / "functions" / function / f"{function}_handler.py"
    spec = importlib.util.spec_from_file_location(f"snap_{function}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    sys.modules.pop(f"snap_{function}", None)
    return module


@pytest.mark.parametrize("function", ["api", "worker"])
def test_the_api_and_the_worker_register_the_hook_with_the_runtime(
    function: str, lambda_env: list[str]
) -> None:
    _load(function)
    registered = [func for func, _, _ in snapshot_restore_py.get_after_restore()]
    assert registered == [snapstart.after_restore]


@pytest.mark.parametrize("function", ["api", "worker"])
def test_init_fixes_nothing_random_or_time_based(function: str, lambda_env: list[str]) -> None:
    """No code of ours reads the clock or draws a random or unique value while a function
    initialises: whatever it drew would be shared by every restored environment."""
    watched_c = {time.time, time.time_ns, time.monotonic, time.perf_counter}
    watched_py = {uuid.uuid4.__code__, uuid.uuid1.__code__}
    import os

    watched_c.add(os.urandom)
    calls: list[str] = []

    def ours(frame: FrameType | None) -> bool:
        return frame is not None and frame.f_code.co_filename.startswith(OUR_CODE)

    def profile(frame: FrameType, event: str, arg: Any) -> None:
        if event == "c_call" and ours(frame):
            if arg in watched_c or isinstance(getattr(arg, "__self__", None), random.Random):
                calls.append(f"{frame.f_code.co_filename}:{frame.f_lineno} {arg}")
        elif event == "call" and frame.f_code in watched_py and ours(frame.f_back):
            back = frame.f_back
            assert back is not None
            calls.append(f"{back.f_code.co_filename}:{back.f_lineno} {frame.f_code.co_name}")

    previous: Callable[..., Any] | None = sys.getprofile()
    sys.setprofile(profile)
    try:
        _load(function)
    finally:
        sys.setprofile(previous)
    assert calls == []
