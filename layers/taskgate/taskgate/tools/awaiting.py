"""``async def`` tools, resources and prompts: what they return is awaited here.

taskgate calls a tool from synchronous code: the worker's step (no event loop), a local
server's worker thread (none either), or, in Lambda, the API's own event loop thread
(Mangum's loop, while it handles the request inline). So the coroutine gets an event loop
of its own for the call, in a thread of its own where this thread already runs one. An
async client a tool uses must therefore be made inside the call (``async with
httpx.AsyncClient() as http``), not kept at module level across calls: each call's loop
is closed when it returns.
"""

from __future__ import annotations

import asyncio
import contextvars
import inspect
from collections.abc import Awaitable
from concurrent.futures import ThreadPoolExecutor
from typing import Any


async def _wait[T](awaitable: Awaitable[T]) -> T:
    return await awaitable


def finish(value: Any) -> Any:
    """``value``, or what it gives once awaited when it is awaitable (an ``async def``'s call)."""
    if not inspect.isawaitable(value):
        return value
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(_wait(value))
    # This thread runs a loop already: blocking it for the call is what a sync tool does
    # too, and a loop of the coroutine's own cannot run here. The thread keeps the
    # caller's context (the logger's task id).
    context = contextvars.copy_context()
    with ThreadPoolExecutor(1, thread_name_prefix="taskgate-async-tool") as pool:
        return pool.submit(context.run, asyncio.run, _wait(value)).result()
