"""``python -m taskgate.lambda_stream [module.attribute]``: the streaming runtime loop.

Started by AWS_LAMBDA_EXEC_WRAPPER in place of the managed runtime's loop. It imports
the ASGI app named by the argument (default ``$_HANDLER``, the function's Handler),
then serves invocations one at a time, each response streamed as the app writes it.
A module may define ``after_invocation()`` (metrics are flushed there).
"""

from __future__ import annotations

import importlib
import json
import logging
import os
import sys
import time
from collections.abc import Callable
from typing import Any

from .asgi import ASGIApp, stream_app
from .runtime_api import Invocation, RuntimeApi

logger = logging.getLogger("taskgate.lambda_stream")


class InvocationContext:
    """What Lambda's runtimes hand a handler as ``context`` (Powertools reads it)."""

    def __init__(self, invocation: Invocation) -> None:
        self.aws_request_id = invocation.request_id
        self.invoked_function_arn = invocation.function_arn
        self.function_name = os.environ.get("AWS_LAMBDA_FUNCTION_NAME", "")
        self.function_version = os.environ.get("AWS_LAMBDA_FUNCTION_VERSION", "$LATEST")
        self.memory_limit_in_mb = int(os.environ.get("AWS_LAMBDA_FUNCTION_MEMORY_SIZE", "0") or 0)
        self.log_group_name = os.environ.get("AWS_LAMBDA_LOG_GROUP_NAME", "")
        self.log_stream_name = os.environ.get("AWS_LAMBDA_LOG_STREAM_NAME", "")
        self._deadline_ms = invocation.deadline_ms

    def get_remaining_time_in_millis(self) -> int:
        return max(0, self._deadline_ms - int(time.time() * 1000))


def load(handler: str) -> tuple[ASGIApp, Callable[[], None] | None]:
    module_name, _, attribute = handler.rpartition(".")
    module = importlib.import_module(module_name)
    return getattr(module, attribute), getattr(module, "after_invocation", None)


def serve(api: RuntimeApi, app: ASGIApp, invocation: Invocation) -> bool:
    """One invocation; False when its response could not be delivered whole."""
    if invocation.trace_id:
        os.environ["_X_AMZN_TRACE_ID"] = invocation.trace_id
    context = InvocationContext(invocation)
    try:
        event: Any = json.loads(invocation.event)
        chunks = stream_app(app, event, context)
        first = next(chunks)
    except Exception as exc:
        logger.exception("the invocation failed before its response started")
        api.invocation_error(invocation.request_id, exc)
        return False
    return api.stream(invocation.request_id, first, chunks)


def main(argv: list[str]) -> None:
    api = RuntimeApi(os.environ["AWS_LAMBDA_RUNTIME_API"])
    handler = argv[1] if len(argv) > 1 else os.environ.get("_HANDLER", "")
    try:
        app, after = load(handler)
    except Exception as exc:
        logger.exception("could not load %s", handler)
        api.init_error(exc)
        raise SystemExit(1) from exc
    while True:
        invocation = api.next()
        serve(api, app, invocation)
        if after is not None:
            after()


if __name__ == "__main__":
    logging.basicConfig(level=os.environ.get("AWS_LAMBDA_LOG_LEVEL", "INFO"))
    main(sys.argv)
