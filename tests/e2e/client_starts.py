"""Many client processes started on one 2-core machine, a few at a time.

A framework's start-up is seconds of CPU (its imports), and deployed each host starts on a
machine of its own. Started all at once here (twenty in the hosts matrix, twenty-six in the
plain-rounds run, beside the rest of the suite), they starve the server they call: a cold
start that takes 0.1 s alone took over 5 s, past the clients' own connect timeouts (the
OpenAI Agents JS version probe, PydanticAI's initialize), and a round behind the scaled-down
8 s cut was cut. So at most ``at_once`` clients are starting at any moment: a client is
started once it has said it is connected (``ready``), has ended, or has had ``patience``
seconds; every one of them is running before the waits that matter (their long calls) begin.
"""

from __future__ import annotations

import subprocess
import time
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from typing import Any

AT_ONCE = 3
PATIENCE_SECONDS = 20.0


@dataclass(frozen=True)
class Launch:
    key: Hashable
    command: Sequence[str]
    stdout: Any  # a path to write the client's output to
    stderr: Any
    cwd: Any
    env: dict[str, str]


def start_few_at_a_time(
    launches: Sequence[Launch],
    ready: Callable[[Launch], bool],
    *,
    at_once: int = AT_ONCE,
    patience: float = PATIENCE_SECONDS,
    poll: float = 0.1,
) -> tuple[dict[Hashable, subprocess.Popen[bytes]], dict[Hashable, float]]:
    """Start every launch, at most ``at_once`` of them still starting at a time; return the
    processes and when each was started (time.monotonic())."""
    procs: dict[Hashable, subprocess.Popen[bytes]] = {}
    started: dict[Hashable, float] = {}
    starting: list[Launch] = []
    waiting = list(launches)
    while waiting:
        now = time.monotonic()
        starting = [
            launch
            for launch in starting
            if procs[launch.key].poll() is None and now - started[launch.key] < patience and not ready(launch)
        ]
        while waiting and len(starting) < at_once:
            launch = waiting.pop(0)
            with open(launch.stdout, "wb") as out, open(launch.stderr, "wb") as err:
                procs[launch.key] = subprocess.Popen(
                    list(launch.command), cwd=launch.cwd, stdout=out, stderr=err, env=launch.env
                )
            started[launch.key] = time.monotonic()
            starting.append(launch)
        if waiting:
            time.sleep(poll)
    return procs, started


def said_it_opened(launch: Launch) -> bool:
    """A driver's output has its "open" line (tests/e2e/hosts/common.py and common.mjs)."""
    try:
        with open(launch.stdout, "rb") as out:
            return b'"open"' in out.read()
    except OSError:
        return False
