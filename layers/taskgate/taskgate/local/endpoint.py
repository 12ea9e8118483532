"""``python -m taskgate.local.endpoint``: a local AWS endpoint for ``sam local invoke``.

The embedded runtime's moto, served over HTTP instead of patched into one
process, with the resources template.yaml describes: the task table (same keys,
indexes and TTL), the result bucket and the state machine running the real
``statemachines/task.asl.json``. Functions started by ``sam local invoke`` reach
it from their container at ``http://host.docker.internal:PORT`` (events/env.json
sets ``AWS_ENDPOINT_URL``, declared empty by the template). It listens on the Docker
bridge's address, which is what that name leads to, and on loopback (the state machine's own
calls, your tools), never on the machine's other interfaces: moto checks no credentials, so
anyone who reaches it reads and writes every local task. For the same reason it refuses
every request a browser makes (an ``Origin`` or ``Sec-Fetch-*`` header): a web page could
otherwise reach it on loopback, and moto would approve any origin; and every request whose
``Host`` is not one of its names (a page on a domain rebound to 127.0.0.1 sends neither header
on a same-origin GET, but names its own domain). ``--host`` picks another address (and keeps
loopback); ``--host 0.0.0.0`` is every interface, on purpose only.

The state machine's RunTool state invokes the worker. moto would need a Docker
engine of its own for that; instead the one method every Lambda invocation in
moto passes (``moto_fixes``) hands the event to

- ``--worker sam`` (the default): ``sam local invoke WorkerFunction``, the same
  runtime image and template as the functions you invoke, its logs printed here,
  Lambda's error payload (``TaskgateInputRequired`` for a question) passed back
  to the state machine as AWS passes it; or
- ``--worker inline``: the worker handler in this process, as ``make serve`` runs
  it (no Docker; its clients use this endpoint).

Arguments after ``--`` go to every ``sam local invoke`` of the worker (the built
template, ``--parameter-overrides Architecture=x86_64``, ...). Development only:
moto keeps everything in memory and checks no credentials.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import shutil
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from .moto_fixes import LambdaError
from .runtime import _LOCAL_ENV, REGION, RESULT_BUCKET, TABLE_NAME, EmbeddedAws, repo_root

DEFAULT_PORT = 4599
LOOPBACK = "127.0.0.1"
EVERY_INTERFACE = ("0.0.0.0", "::")
DOCKER_BRIDGE = "docker0"
# How a container started by sam local invoke names this machine (`--add-host ...:host-gateway`).
CONTAINER_HOST = "host.docker.internal"
ADD_HOST = ["--add-host", f"{CONTAINER_HOST}:host-gateway"]
WORKER_FUNCTION = "WorkerFunction"
# Never a real account's: what SAM passes into the container, and what moto accepts.
DUMMY_CREDENTIALS = {
    "AWS_ACCESS_KEY_ID": "testing",
    "AWS_SECRET_ACCESS_KEY": "testing",
    "AWS_SESSION_TOKEN": "testing",
}


def bridge_address(interface: str = DOCKER_BRIDGE) -> str | None:
    """The IPv4 address of the Docker bridge (what ``host-gateway`` names in containers), or
    None when there is none (Docker not installed or not started)."""
    import fcntl
    import socket
    import struct

    siocgifaddr = 0x8915
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            packed = fcntl.ioctl(s.fileno(), siocgifaddr, struct.pack("256s", interface.encode()[:15]))
    except OSError:
        return None
    return socket.inet_ntoa(packed[20:24])


def listen_addresses(host: str | None, bridge: str | None) -> list[str]:
    """Where the endpoint listens: ``host`` (default: the Docker bridge), and loopback, which
    moto's state machine executor calls (it names localhost) - never every interface unless
    asked for by name."""
    wanted = host or bridge or LOOPBACK
    if wanted in EVERY_INTERFACE:
        return [wanted]
    return [wanted] if wanted == LOOPBACK else [wanted, LOOPBACK]


def served_names(addresses: Sequence[str]) -> frozenset[str]:
    """The host names an SDK or a container names this endpoint by: its addresses, loopback's
    names and ``host.docker.internal``. (S3 may put a bucket before any of them.)"""
    names = {"127.0.0.1", "localhost", "::1", CONTAINER_HOST, *(a.strip("[]") for a in addresses)}
    return frozenset(name.lower() for name in names if name not in EVERY_INTERFACE)


def _host_name(host: str) -> str:
    host = host.strip().lower()
    if host.startswith("["):
        return host[1 : host.find("]")] if "]" in host else host
    return host.rsplit(":", 1)[0] if host.count(":") == 1 else host


def refuse_browsers(app: Any, names: frozenset[str] = frozenset({"127.0.0.1", "localhost"})) -> Any:
    """WSGI: no request a web page made. SDKs and the AWS CLI send neither ``Origin`` nor
    ``Sec-Fetch-*``, and name this endpoint in ``Host``; a page whose domain was rebound to
    this machine's address sends neither header on a same-origin GET over http, but names its
    own domain in ``Host`` (DNS rebinding), so a Host not among ``names`` is refused too."""

    def wsgi(environ: dict[str, Any], start_response: Any) -> Any:
        host = _host_name(environ.get("HTTP_HOST", ""))
        known = host in names or any(host.endswith("." + name) for name in names)
        if not known or "HTTP_ORIGIN" in environ or any(k.startswith("HTTP_SEC_FETCH_") for k in environ):
            start_response("403 Forbidden", [("Content-Type", "text/plain")])
            return [b"taskgate's local AWS endpoint serves SDKs and the AWS CLI, not web pages\n"]
        return app(environ, start_response)

    return wsgi


class _Listener:
    """One address of the endpoint: moto's WSGI app, behind refuse_browsers, in a thread."""

    def __init__(self, app: Any, address: str, port: int) -> None:
        from werkzeug.serving import make_server

        self.server = make_server(address, port, app, threaded=True)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True, name=f"moto-{address}")
        self.thread.start()

    def stop(self) -> None:
        self.server.shutdown()
        self.thread.join()


def sam_environment(base: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment to run ``sam`` in: SAM hands its own credentials and region to
    the container, so they are dummies here, whatever the developer's shell holds
    (a function that missed the endpoint override must fail, not reach an account)."""
    env = {k: v for k, v in (os.environ if base is None else base).items() if not k.startswith("AWS_")}
    env.update(DUMMY_CREDENTIALS)
    env.update({"AWS_DEFAULT_REGION": REGION, "AWS_REGION": REGION, "SAM_CLI_TELEMETRY": "0"})
    return env


def sam_binary() -> str:
    beside = Path(sys.executable).parent / "sam"
    return str(beside) if beside.exists() else (shutil.which("sam") or "sam")


def last_json(text: str) -> Any:
    """The last line of ``sam local invoke``'s stdout that is JSON: the function's response."""
    for line in reversed(text.strip().splitlines()):
        try:
            return json.loads(line)
        except ValueError:
            continue
    raise ValueError(f"no JSON response in {text[-500:]!r}")


def lambda_error(response: Any) -> bool:
    """Lambda's error payload, as the runtime interface client shapes it."""
    return isinstance(response, dict) and "errorType" in response and "errorMessage" in response


class SamWorker:
    """Runs one worker step with ``sam local invoke WorkerFunction``."""

    def __init__(
        self,
        root: Path,
        env_file: Path,
        sam_args: Sequence[str] = (),
        *,
        log: Callable[[str], None] = print,
        timeout: float = 960,
    ) -> None:
        self.root = root
        self.env_file = env_file
        self.sam_args = list(sam_args)
        self.log = log
        self.timeout = timeout

    def command(self) -> list[str]:
        return [
            sam_binary(),
            "local",
            "invoke",
            WORKER_FUNCTION,
            "--event",
            "-",
            "--env-vars",
            str(self.env_file),
            "--skip-pull-image",
            *ADD_HOST,
            *self.sam_args,
        ]

    def __call__(self, event: dict[str, Any]) -> dict[str, Any]:
        self.log(f"RunTool -> sam local invoke {WORKER_FUNCTION} {json.dumps(event)}")
        started = time.monotonic()
        done = subprocess.run(
            self.command(),
            input=json.dumps(event),
            cwd=self.root,
            env=sam_environment(),
            capture_output=True,
            text=True,
            timeout=self.timeout,
        )
        for line in done.stderr.splitlines():
            self.log(f"  {WORKER_FUNCTION} | {line}")
        if done.returncode != 0:
            raise RuntimeError(f"sam local invoke {WORKER_FUNCTION} exited {done.returncode}")
        response = last_json(done.stdout)
        self.log(f"RunTool <- {json.dumps(response)} ({time.monotonic() - started:.1f} s)")
        if lambda_error(response):
            # Parking (TaskgateInputRequired) and continuing reach the state machine as
            # Lambda errors by design; it matches their errorType in RunTool's Catch.
            raise LambdaError(response, done.stderr)
        return response  # type: ignore[no-any-return]


class LocalEndpoint:
    """moto over HTTP on ``host:port`` with taskgate's resources; ``worker`` runs RunTool's step."""

    def __init__(
        self,
        worker: Callable[[dict[str, Any]], dict[str, Any]] | None = None,
        *,
        host: str | None = None,
        port: int = DEFAULT_PORT,
        root: Path | None = None,
    ) -> None:
        self.root = root or repo_root()
        self.addresses = listen_addresses(host, bridge_address())
        self.port = port
        self.worker = worker
        self.state_machine_arn = ""
        self._listeners: list[_Listener] = []
        self._inline: EmbeddedAws | None = None

    @property
    def url(self) -> str:
        # Loopback is always among the addresses (or covered by every interface).
        return f"http://{LOOPBACK}:{self.port}"

    def start(self) -> LocalEndpoint:
        from moto.core.config import default_user_config
        from moto.moto_server.werkzeug_app import DomainDispatcherApplication, create_backend_app

        from . import moto_fixes

        # The executor calls DynamoDB (and Lambda) through this server: tell it where it is.
        os.environ["MOTO_PORT"] = str(self.port)
        default_user_config["stepfunctions"] = {"execute_state_machine": True}
        # The embedded runtime's defaults (dummy credentials, region, Powertools' names) for
        # this process's own clients and an inline worker.
        for key, value in _LOCAL_ENV.items():
            os.environ.setdefault(key, value)
        app = refuse_browsers(DomainDispatcherApplication(create_backend_app), served_names(self.addresses))
        self._listeners = [_Listener(app, address, self.port) for address in self.addresses]
        # This process's own clients (the resources below, an inline worker) use the server.
        os.environ["AWS_ENDPOINT_URL"] = self.url
        resources = EmbeddedAws(self.root)
        resources._create_resources()
        self.state_machine_arn = resources.state_machine_arn
        os.environ.update(resources.environment())
        if self.worker is None:
            from .. import wiring
            from .runtime import _LambdaContext, _load_handler

            wiring.reset()
            handler = _load_handler(self.root, "worker").handler
            self.worker = lambda event: handler(event, _LambdaContext(moto_fixes.invoked_version()))
        moto_fixes.apply(self.worker)
        return self

    def stop(self) -> None:
        for listener in self._listeners:
            listener.stop()
        self._listeners = []

    def __enter__(self) -> LocalEndpoint:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def describe(self) -> dict[str, str]:
        return {
            "endpoint": ", ".join(f"http://{a}:{self.port}" for a in self.addresses),
            "from a container": f"http://{CONTAINER_HOST}:{self.port}",
            "TASK_TABLE": TABLE_NAME,
            "RESULT_BUCKET": RESULT_BUCKET,
            "STATE_MACHINE_ARN": self.state_machine_arn,
        }


def running(port: int, host: str = "127.0.0.1") -> bool:
    """Whether a moto server answers on ``port``."""
    try:
        # The dashboard page: data.json would serialise every backend, Lambda's asking Docker.
        with urllib.request.urlopen(f"http://{host}:{port}/moto-api/", timeout=2) as resp:
            return bool(resp.status == 200)
    except urllib.error.HTTPError:
        # It answered. (data.json fails when moto's Lambda model cannot reach a Docker
        # engine, which is the normal case here: the worker runs inline.)
        return True
    except OSError:
        return False


def env_file_for(port: int, template: Path, out: Path) -> Path:
    """``template`` (events/env.json) with its endpoint's port set to ``port``."""
    data = json.loads(template.read_text())
    for variables in data.values():
        url = variables.get("AWS_ENDPOINT_URL")
        if url:
            variables["AWS_ENDPOINT_URL"] = f"http://{CONTAINER_HOST}:{port}"
    out.write_text(json.dumps(data, indent=2) + "\n")
    return out


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m taskgate.local.endpoint", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument(
        "--host",
        default=None,
        help="address to listen on besides loopback (default: the Docker bridge's; 0.0.0.0: every interface)",
    )
    parser.add_argument("--port", type=int, default=int(os.environ.get("LOCAL_AWS_PORT", DEFAULT_PORT)))
    parser.add_argument("--worker", choices=["sam", "inline"], default="sam")
    parser.add_argument("--env-vars", type=Path, default=None, help="default: events/env.json, this port")
    parser.add_argument("sam_args", nargs=argparse.REMAINDER, help="-- then arguments for sam local invoke")
    args = parser.parse_args(argv)
    from . import aws_calls

    aws_calls.install_from_env()  # the IAM check's recording, when a test run asks for it
    root = repo_root()
    sam_args = [a for a in args.sam_args if a != "--"]
    worker = None
    if args.worker == "sam":
        env_file = args.env_vars
        if env_file is None:
            target = root / ".aws-sam" / f"local-env-{args.port}.json"
            target.parent.mkdir(parents=True, exist_ok=True)
            env_file = env_file_for(args.port, root / "events" / "env.json", target)
        worker = SamWorker(root, env_file.resolve(), sam_args, log=lambda line: print(line, flush=True))
    # One line per worker step is the log worth reading; not one per moto request.
    logging.getLogger("werkzeug").setLevel(logging.WARNING)
    endpoint = LocalEndpoint(worker, host=args.host, port=args.port, root=root).start()
    for key, value in endpoint.describe().items():
        print(f"{key:18} {value}", flush=True)
    print(f"worker             {args.worker}{' ' + ' '.join(sam_args) if sam_args else ''}", flush=True)
    print("READY", flush=True)
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        pass
    finally:
        endpoint.stop()


if __name__ == "__main__":
    main()
