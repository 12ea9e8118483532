"""``python -m taskgate.local``: serve /mcp on 127.0.0.1 backed by the embedded runtime.

``--reload DIR…`` (``make dev``) restarts it whenever a Python file under those directories
changes; the embedded AWS lives in the served process, so each restart starts it empty.

Set ``TASKGATE_BACKEND=aws`` to skip moto and use whatever AWS the environment
points at (``AWS_PROFILE``, ``AWS_ENDPOINT_URL``, ``TASK_TABLE``, ``STATE_MACHINE_ARN``).
``TASKGATE_SIGN_IN=dev`` (``make serve-signin``) adds the whole sign-in against a
development identity provider on ``IDP_PORT`` (the next port by default): sign_in.py.
``STREAM_PORT`` adds the streaming endpoint (StreamingApi) on that port: streaming.py.
``TASKGATE_LAMBDA=1`` (``make serve LAMBDA=1``) runs the API function as Lambda does: an
environment per concurrent request, frozen once it has answered, killed at its timeout
(lambda_mode.py).
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import threading
import time
from typing import Any

import uvicorn
from starlette.types import ASGIApp

from .. import wiring
from . import aws_calls, lambda_mode, server, streaming
from . import sign_in as dev_sign_in
from .change_stream import LocalRoute
from .dev_auth import DevAuthMiddleware, parse_tokens
from .endpoint import LocalEndpoint
from .process import free_port
from .runtime import REGION, EmbeddedAws

# The caller is the socket's peer, as API Gateway's sourceIp is the connection's: uvicorn
# would otherwise take it from X-Forwarded-For on loopback, where every caller here is, and
# the sign-in's limits per address (auth/callers.py) would count whatever a caller wrote.
UVICORN: dict[str, Any] = {"log_level": "warning", "proxy_headers": False}


def _sweep_forever(interval: float) -> None:
    # Stands in for the template's scheduled SweeperFunction.
    while True:
        time.sleep(interval)
        try:
            wiring.root().sweeper.sweep()
        except Exception:
            logging.getLogger(__name__).exception("sweep failed")


def _serve_beside(app: ASGIApp, host: str, port: int, name: str) -> None:
    """Serve ``app`` on ``port`` from a daemon thread (uvicorn leaves signals to the main
    thread's server), so it ends with the local server."""
    beside = uvicorn.Server(uvicorn.Config(app, host=host, port=port, **UVICORN))
    threading.Thread(target=lambda: asyncio.run(beside.serve()), daemon=True, name=name).start()


def app() -> ASGIApp:
    """What the local server serves: the embedded AWS started in this process, the sweeper
    running, dev tokens or the development sign-in applied, the streaming endpoint beside it
    when asked for. ``make dev``'s reloader calls it in each fresh process."""
    logging.basicConfig(level=os.environ.get("LOG_LEVEL", "INFO"))
    aws_calls.install_from_env()  # the IAM check's recording, when a test run asks for it
    host = os.environ.get("HOST", "127.0.0.1")
    port = int(os.environ.get("PORT", "3000"))
    # Where callback URLs point (tools.jobs.Callback): this server, unless told otherwise.
    shown = "127.0.0.1" if host in ("0.0.0.0", "::") else host
    os.environ.setdefault("PUBLIC_URL", f"http://{shown}:{port}")
    provider = None
    if os.environ.get("TASKGATE_SIGN_IN") == "dev":
        idp_port = int(os.environ.get("IDP_PORT", str(port + 1)))
        provider = dev_sign_in.prepare(os.environ, host, port, idp_port)
    stream_url = streaming.prepare(os.environ, shown)
    in_lambda = lambda_mode.enabled(os.environ)
    if os.environ.get("TASKGATE_BACKEND", "embedded") == "embedded":
        if in_lambda:
            # The API's environments are processes of their own: AWS over HTTP, the worker here.
            LocalEndpoint(host="127.0.0.1", port=free_port()).start()
            aws = EmbeddedAws()  # the endpoint made its resources: here only the change stream
        else:
            aws = EmbeddedAws().start()
        # The table's change stream, read as TaskEventsFunction's mapping reads it, and a
        # route of its wake-ups to a local queue whose events are logged (change_stream.py).
        aws.change_stream().start()
        LocalRoute(os.environ["TASK_EVENT_BUS"], REGION).start()
    root = dev_sign_in.with_test_documents(wiring.root())
    wiring.reset(to=root)
    settings = root.settings
    interval = float(os.environ.get("SWEEP_INTERVAL_SECONDS", "60"))
    threading.Thread(target=_sweep_forever, args=(interval,), daemon=True, name="sweeper").start()
    # AUTH_MODE with OAUTH_ISSUER, PUBLIC_URL…: sign-in as deployed.
    root.tools  # noqa: B018 - the tool modules load now, before the start line, not at the first call
    stream = streaming.stream_root(os.environ, root).app() if stream_url else None
    tokens = os.environ.get("TASKGATE_DEV_TOKENS")
    if tokens and settings.sign_in.auth_mode & {"USER", "CLIENT"}:
        raise SystemExit("TASKGATE_DEV_TOKENS and AUTH_MODE with tokens (USER, CLIENT) exclude each other")
    served: ASGIApp
    if in_lambda:
        # Each environment applies the development tokens itself (lambda_env.py).
        service = lambda_mode.service(os.environ, settings.calls.front_timeout_seconds)
        print(f"Lambda mode: {lambda_mode.describe(service)}", flush=True)
        served = service.app
    else:
        served = root.app()
    if tokens:
        if not in_lambda:
            served = DevAuthMiddleware(served, parse_tokens(tokens))
        stream = DevAuthMiddleware(stream, parse_tokens(tokens)) if stream is not None else None
    if provider is not None:
        # The identity provider on its own origin, as Cognito's domain is.
        idp_port = int(provider.base_url.rsplit(":", 1)[1])
        _serve_beside(provider.app(), host, idp_port, "dev-idp")
        print(dev_sign_in.banner(provider, settings.sign_in.public_url), flush=True)
    if stream is not None:
        _serve_beside(stream, host, int(os.environ[streaming.STREAM_PORT]), "stream")
        print(f"streaming endpoint (StreamingApi): {stream_url}/mcp", flush=True)
    return served


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m taskgate.local", description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--reload",
        nargs="+",
        metavar="DIR",
        help="restart the server whenever a .py file under DIR changes (make dev)",
    )
    args = parser.parse_args(argv)
    host = os.environ.get("HOST", "127.0.0.1")
    port = int(os.environ.get("PORT", "3000"))
    # The start line comes from the server once the tools are loaded and the port is bound
    # (server.py), so a start that fails never begins with a line saying it serves.
    if not args.reload:
        server.run(uvicorn.Config(app, factory=True, host=host, port=port, **UVICORN))
        return
    # The embedded AWS lives in the served process, so a restart starts it empty: tasks,
    # sessions and results are gone, as they would be after a fresh deploy to a new stack.
    print(f"restarting on changes under {', '.join(args.reload)} (the embedded AWS starts empty each time)")
    config = uvicorn.Config(
        "taskgate.local.__main__:app",
        factory=True,
        reload=True,
        reload_dirs=args.reload,
        host=host,
        port=port,
        **UVICORN,
    )
    server.run(config)


if __name__ == "__main__":
    main()
