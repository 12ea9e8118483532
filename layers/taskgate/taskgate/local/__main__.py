"""``python -m taskgate.local``: serve /mcp on 127.0.0.1 backed by the embedded runtime.

``--reload DIR…`` (``make dev``) restarts it whenever a Python file under those directories
changes; the embedded AWS lives in the served process, so each restart starts it empty.

Set ``TASKGATE_BACKEND=aws`` to skip moto and use whatever AWS the environment
points at (``AWS_PROFILE``, ``AWS_ENDPOINT_URL``, ``TASK_TABLE``, ``STATE_MACHINE_ARN``).
"""

from __future__ import annotations

import argparse
import logging
import os
import threading
import time

import uvicorn
from starlette.types import ASGIApp

from .. import wiring
from .dev_auth import DevAuthMiddleware, parse_tokens
from .runtime import EmbeddedAws


def _sweep_forever(interval: float) -> None:
    # Stands in for the template's scheduled SweeperFunction.
    while True:
        time.sleep(interval)
        try:
            wiring.root().sweeper.sweep()
        except Exception:
            logging.getLogger(__name__).exception("sweep failed")


def app() -> ASGIApp:
    """What the local server serves: the embedded AWS started in this process, the sweeper
    running, dev tokens applied. ``make dev``'s reloader calls it in each fresh process."""
    logging.basicConfig(level=os.environ.get("LOG_LEVEL", "INFO"))
    if os.environ.get("TASKGATE_BACKEND", "embedded") == "embedded":
        EmbeddedAws().start()
    root = wiring.root()
    interval = float(os.environ.get("SWEEP_INTERVAL_SECONDS", "60"))
    threading.Thread(target=_sweep_forever, args=(interval,), daemon=True, name="sweeper").start()
    # AUTH_MODE=JWT with OAUTH_ISSUER, OAUTH_RESOURCE…: real bearer tokens, as deployed.
    served = root.app()
    tokens = os.environ.get("TASKGATE_DEV_TOKENS")
    if tokens and root.settings.auth_mode == "JWT":
        raise SystemExit("TASKGATE_DEV_TOKENS and AUTH_MODE=JWT exclude each other")
    return DevAuthMiddleware(served, parse_tokens(tokens)) if tokens else served


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
    print(f"taskgate serving http://{host}:{port}/mcp", flush=True)
    if not args.reload:
        uvicorn.run(app(), host=host, port=port, log_level="warning")
        return
    # The embedded AWS lives in the served process, so a restart starts it empty: tasks,
    # sessions and results are gone, as they would be after a fresh deploy to a new stack.
    print(f"restarting on changes under {', '.join(args.reload)} (the embedded AWS starts empty each time)")
    uvicorn.run(
        "taskgate.local.__main__:app",
        factory=True,
        reload=True,
        reload_dirs=args.reload,
        host=host,
        port=port,
        log_level="warning",
    )


if __name__ == "__main__":
    main()
