"""``sam local invoke`` against the local AWS endpoint, in one command (``make invoke``).

    python -m taskgate.local.sam_local invoke FUNCTION EVENT [--task-id ID] [--port N]
    python -m taskgate.local.sam_local stop [--port N]

``invoke`` builds the functions for this machine's architecture (``sam build
--cached`` into ``.aws-sam/local-<arch>``: no emulation), starts the local endpoint
(``taskgate.local.endpoint``) in the background unless one answers on the port,
and runs ``sam local invoke FUNCTION`` with EVENT, ``events/env.json`` pointed at
that endpoint and dummy credentials. The endpoint keeps running between invokes
(its log, with every worker step the state machine runs, is
``.aws-sam/local-aws-<port>.log``); ``stop`` ends it.

Event files name the placeholder task ``00000000-0000-4000-8000-000000000000``;
``--task-id`` puts a real one in its place (a task an earlier invoke created).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import signal
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .endpoint import ADD_HOST, DEFAULT_PORT, env_file_for, last_json, running, sam_binary, sam_environment
from .runtime import repo_root

PLACEHOLDER_TASK_ID = "00000000-0000-4000-8000-000000000000"
RUNTIME_IMAGE = "public.ecr.aws/lambda/python:3.13-{arch}"
# Sign-in off: the events carry the claims API Gateway would pass on (no token to check, and
# no user pool to resolve).
NO_SIGN_IN = "SignInPeople=false SignInAgents=false SignInIam=false"


def host_arch() -> str:
    """This machine's Lambda architecture name (what runs without emulation)."""
    machine = platform.machine().lower()
    return "arm64" if machine in {"aarch64", "arm64"} else "x86_64"


def with_task_id(event: Any, task_id: str) -> Any:
    """``event`` with the placeholder task id replaced, in API bodies (JSON in a string) too."""
    return json.loads(json.dumps(event).replace(PLACEHOLDER_TASK_ID, task_id))


@dataclass
class SamLocal:
    """One local setup: a build for ``arch``, an endpoint on ``port``."""

    root: Path
    arch: str
    port: int
    build_dir: Path
    env_file: Path

    @classmethod
    def for_machine(
        cls, root: Path | None = None, port: int = DEFAULT_PORT, arch: str | None = None
    ) -> SamLocal:
        root = root or repo_root()
        arch = arch or host_arch()
        work = root / ".aws-sam"
        return cls(root, arch, port, work / f"local-{arch}", work / f"local-env-{port}.json")

    @property
    def template(self) -> Path:
        return self.build_dir / "template.yaml"

    def sam_args(self) -> list[str]:
        """What every ``sam local invoke`` of this setup is given, the worker's too (sign-in off)."""
        overrides = f"Architecture={self.arch} {NO_SIGN_IN}"
        return ["--template", str(self.template), "--parameter-overrides", overrides]

    def build(self, *, cached: bool = True) -> subprocess.CompletedProcess[str]:
        """``sam build`` for ``arch``: the template's Architecture and layers/Makefile's
        LAMBDA_ARCH given the same value."""
        env = sam_environment()
        env["LAMBDA_ARCH"] = self.arch
        # The runtime's python3.13 for the builders: this interpreter's, when it is one.
        env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
        cache = self.root / ".aws-sam" / f"cache-local-{self.arch}"
        command = [
            sam_binary(),
            "build",
            "--build-dir",
            str(self.build_dir),
            "--cache-dir",
            str(cache),
            "--cached" if cached else "--no-cached",
            "--parameter-overrides",
            f"Architecture={self.arch} {NO_SIGN_IN}",
        ]
        return subprocess.run(command, cwd=self.root, env=env, capture_output=True, text=True, timeout=1800)

    def image_present(self) -> bool:
        image = RUNTIME_IMAGE.format(arch=self.arch)
        done = subprocess.run(["docker", "image", "inspect", image], capture_output=True, text=True)
        return done.returncode == 0

    # -- the endpoint ---------------------------------------------------------------
    @property
    def pid_file(self) -> Path:
        return self.root / ".aws-sam" / f"local-aws-{self.port}.pid"

    @property
    def log_file(self) -> Path:
        return self.root / ".aws-sam" / f"local-aws-{self.port}.log"

    def endpoint_command(self, worker: str = "sam") -> list[str]:
        return [
            sys.executable,
            "-m",
            "taskgate.local.endpoint",
            "--port",
            str(self.port),
            "--worker",
            worker,
            "--env-vars",
            str(self.write_env_file()),
            "--",
            *self.sam_args(),
        ]

    def endpoint_environment(self) -> dict[str, str]:
        env = sam_environment()
        paths = [str(self.root / p) for p in ("layers/taskgate", "layers/tools")]
        env["PYTHONPATH"] = os.pathsep.join([*paths, env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
        env["PYTHONUNBUFFERED"] = "1"
        return env

    def write_env_file(self) -> Path:
        self.env_file.parent.mkdir(parents=True, exist_ok=True)
        return env_file_for(self.port, self.root / "events" / "env.json", self.env_file)

    def ensure_endpoint(self, timeout: float = 60) -> bool:
        """Start the endpoint in the background unless one answers; True if started."""
        if running(self.port):
            return False
        self.log_file.parent.mkdir(parents=True, exist_ok=True)
        with self.log_file.open("ab") as log:
            proc = subprocess.Popen(
                self.endpoint_command(),
                cwd=self.root,
                env=self.endpoint_environment(),
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,  # outlives this command; `stop` ends it
            )
        self.pid_file.write_text(str(proc.pid))
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                raise RuntimeError(f"the local endpoint exited ({proc.returncode}); see {self.log_file}")
            if running(self.port) and "READY" in self.log_file.read_text(errors="replace"):
                return True
            time.sleep(0.2)
        raise TimeoutError(f"the local endpoint did not come up in {timeout:.0f} s; see {self.log_file}")

    def stop_endpoint(self) -> bool:
        try:
            pid = int(self.pid_file.read_text())
        except (OSError, ValueError):
            return False
        self.pid_file.unlink(missing_ok=True)
        try:
            os.kill(pid, signal.SIGTERM)
        except ProcessLookupError:
            return False
        return True

    # -- invoking -------------------------------------------------------------------
    def invoke(
        self, function: str, event: Any, *, timeout: float = 900
    ) -> tuple[Any, subprocess.CompletedProcess[str]]:
        """``sam local invoke function`` with ``event``: (the response, the process)."""
        command = [
            sam_binary(),
            "local",
            "invoke",
            function,
            "--event",
            "-",
            "--env-vars",
            str(self.write_env_file()),
            "--skip-pull-image",
            *ADD_HOST,
            *self.sam_args(),
        ]
        done = subprocess.run(
            command,
            input=json.dumps(event),
            cwd=self.root,
            env=sam_environment(),
            capture_output=True,
            text=True,
            timeout=timeout,
        )
        if done.returncode != 0:
            raise RuntimeError(
                f"sam local invoke {function} exited {done.returncode}:\n{done.stderr[-3000:]}"
            )
        return last_json(done.stdout), done


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m taskgate.local.sam_local", description=__doc__.split("\n\n")[0]
    )
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("invoke", help="sam local invoke FUNCTION with EVENT against the local endpoint")
    run.add_argument("function")
    run.add_argument("event", type=Path)
    run.add_argument("--task-id", help=f"put in place of the placeholder task {PLACEHOLDER_TASK_ID}")
    run.add_argument("--no-build", action="store_true", help="use the last build as it is")
    stop = sub.add_parser("stop", help="stop the background endpoint")
    for p in (run, stop):
        p.add_argument("--port", type=int, default=int(os.environ.get("LOCAL_AWS_PORT", DEFAULT_PORT)))
    args = parser.parse_args(argv)
    local = SamLocal.for_machine(port=args.port)
    if args.command == "stop":
        print("stopped" if local.stop_endpoint() else f"no endpoint started on port {args.port}")
        return
    if not local.image_present():
        print(
            f"note: no {RUNTIME_IMAGE.format(arch=local.arch)} image here. With registry access, "
            f"`docker pull` it; without, build the stand-in: `sudo scripts/lambda_image.sh` (README).",
            file=sys.stderr,
        )
    if not args.no_build:
        print(f"sam build ({local.arch}) -> {local.build_dir.relative_to(local.root)}", file=sys.stderr)
        built = local.build()
        if built.returncode != 0:
            sys.exit(f"sam build failed:\n{built.stdout[-3000:]}\n{built.stderr[-3000:]}")
    if local.ensure_endpoint():
        print(f"local AWS endpoint started on port {local.port}; log: {local.log_file}", file=sys.stderr)
    event = json.loads(args.event.read_text())
    if args.task_id:
        event = with_task_id(event, args.task_id)
    response, done = local.invoke(args.function, event)
    sys.stderr.write(done.stderr)
    print(json.dumps(response, indent=2))
    body = response.get("body") if isinstance(response, dict) else None
    if isinstance(body, str) and body.startswith("{"):
        print("body:", json.dumps(json.loads(body), indent=2))


if __name__ == "__main__":
    main()
