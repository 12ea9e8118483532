"""``python -m taskgate.local``: serve /mcp on 127.0.0.1 backed by the embedded runtime.

Set ``TASKGATE_BACKEND=aws`` to skip moto and use whatever AWS the environment
points at (``AWS_PROFILE``, ``AWS_ENDPOINT_URL``, ``TASK_TABLE``, ``STATE_MACHINE_ARN``).
"""

from __future__ import annotations

import logging
import os
import threading
import time

import uvicorn

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


def main() -> None:
    logging.basicConfig(level=os.environ.get("LOG_LEVEL", "INFO"))
    host = os.environ.get("HOST", "127.0.0.1")
    port = int(os.environ.get("PORT", "3000"))
    # Where callback URLs point (tools.jobs.Callback): this server, unless told otherwise.
    shown = "127.0.0.1" if host in ("0.0.0.0", "::") else host
    os.environ.setdefault("PUBLIC_URL", f"http://{shown}:{port}")
    if os.environ.get("TASKGATE_BACKEND", "embedded") == "embedded":
        EmbeddedAws().start()
    root = wiring.root()
    settings = root.settings
    interval = float(os.environ.get("SWEEP_INTERVAL_SECONDS", "60"))
    threading.Thread(target=_sweep_forever, args=(interval,), daemon=True, name="sweeper").start()
    # AUTH_MODE=JWT with OAUTH_ISSUER, OAUTH_RESOURCE…: real bearer tokens, as deployed.
    app = root.app()
    tokens = os.environ.get("TASKGATE_DEV_TOKENS")
    if tokens and settings.auth_mode == "JWT":
        raise SystemExit("TASKGATE_DEV_TOKENS and AUTH_MODE=JWT exclude each other")
    served = DevAuthMiddleware(app, parse_tokens(tokens)) if tokens else app
    print(f"taskgate serving http://{host}:{port}/mcp", flush=True)
    uvicorn.run(served, host=host, port=port, log_level="warning")


if __name__ == "__main__":
    main()
