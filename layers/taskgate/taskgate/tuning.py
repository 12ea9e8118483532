"""The ``Tuning`` string: the values only the functions read, in one template Parameter.

    Tuning: "CallPieceSeconds=15 HangUpSeconds=120 AllowedHosts=mcp.example.com,api.example.com"

Key=value pairs separated by spaces; a value has none (a list's items are comma-separated).
A key is the name of the Parameter it replaces (``KEYS``: the environment variable
``Settings`` reads it from); a key not given keeps its default, so a default changed by a
release reaches a stack that never chose it. The deploy checks a Tuning before any function
runs with it (functions/deploy_checks: a misspelt key or a value out of bounds fails the deploy,
naming the key), with the same checks ``Settings`` makes at a cold start.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, MutableMapping

# Key -> the environment variable Settings reads. Later settings only the functions read join
# here rather than the template's Parameters.
KEYS: dict[str, str] = {
    "DefaultTtlMs": "DEFAULT_TTL_MS",
    "MaxTtlMs": "MAX_TTL_MS",
    "PollIntervalMs": "POLL_INTERVAL_MS",
    "AnonymousOwner": "ANONYMOUS_OWNER",
    "MaxActiveTasksPerOwner": "MAX_ACTIVE_TASKS_PER_OWNER",
    "MaxArgumentBytes": "MAX_ARGUMENT_BYTES",
    "MaxInputResponseBytes": "MAX_INPUT_RESPONSE_BYTES",
    "MaxCheckpointBytes": "MAX_CHECKPOINT_BYTES",
    "MaxInlineResultBytes": "MAX_INLINE_RESULT_BYTES",
    "MaxResultResponseBytes": "MAX_RESULT_RESPONSE_BYTES",
    "MaxTaskRuntimeSeconds": "MAX_TASK_RUNTIME_SECONDS",
    "MaxBodyBytes": "MAX_BODY_BYTES",
    "StreamMaxSeconds": "STREAM_MAX_SECONDS",
    "StaleAfterSeconds": "STALE_AFTER_SECONDS",
    "InlineCallMaxSeconds": "INLINE_CALL_MAX_SECONDS",
    "CallWaitSeconds": "CALL_WAIT_SECONDS",
    "CallAnswerWaitSeconds": "CALL_ANSWER_WAIT_SECONDS",
    "CallHandles": "CALL_HANDLES",
    "CallPieceSeconds": "CALL_PIECE_SECONDS",
    "HangUpSeconds": "HANG_UP_SECONDS",
    "RequestStateTtlSeconds": "REQUEST_STATE_TTL_SECONDS",
    "AllowedHosts": "ALLOWED_HOSTS",
    "MaxHeldCallsPerOwner": "MAX_HELD_CALLS_PER_OWNER",
    # subscriptions/listen on the streaming endpoint: a stream's length, how often it reads.
    "ListenSeconds": "LISTEN_SECONDS",
    "ListenIntervalMs": "LISTEN_INTERVAL_MS",
    # client_id=<https JWKS URL or a JWKS file>,… (the private_key_jwt machine clients)
    "OAuthClientKeys": "OAUTH_CLIENT_KEYS",
}
# Keys for what a library reads from the environment itself (Powertools' logger): a function's
# handler puts them there before it builds its logger (``export_environment``).
EXPORTED: dict[str, str] = {"LogLevel": "POWERTOOLS_LOG_LEVEL"}
# The bounds each key had as a template Parameter (MinValue, MaxValue; the values are
# numbers), kept where Settings alone is looser: a Tuning accepts what the Parameter did.
BOUNDS: dict[str, tuple[float, float]] = {
    "DefaultTtlMs": (1000, 31_536_000_000),
    "MaxTtlMs": (60_000, 31_536_000_000),
    "PollIntervalMs": (100, 60_000),
    "MaxActiveTasksPerOwner": (0, 1_000_000),
    "MaxArgumentBytes": (1024, 358_400),
    "MaxInputResponseBytes": (1024, 262_144),
    "MaxCheckpointBytes": (1024, 262_144),
    "MaxInlineResultBytes": (1024, 358_400),
    "MaxResultResponseBytes": (2048, 3_112_960),
    "MaxTaskRuntimeSeconds": (60, 31_536_000),
    "MaxBodyBytes": (1024, 3_112_960),
    "StreamMaxSeconds": (0, 25),
    "StaleAfterSeconds": (60, 86_400),
    "InlineCallMaxSeconds": (0, 25),
    "CallWaitSeconds": (0, 86_400),
    "CallAnswerWaitSeconds": (0, 86_400),
    "CallPieceSeconds": (1, 25),
    "HangUpSeconds": (30, 86_400),
    "RequestStateTtlSeconds": (10, 86_400),
}
CHOICES: dict[str, tuple[str, ...]] = {
    "CallHandles": ("true", "false"),
    "LogLevel": ("DEBUG", "INFO", "WARNING", "ERROR"),
}
# The environment variable a function finds its Tuning in (the template sets it).
VARIABLE = "TUNING"
# The strictest front a function serves behind (API Gateway's HTTP API): a Tuning is checked
# as that function would read it.
STRICTEST_FRONT = {"FRONT_STREAMING": "false", "FRONT_TIMEOUT_SECONDS": "29"}
_PAIR = re.compile(r"([A-Za-z][A-Za-z0-9]*)=(\S*)")


class TuningError(ValueError):
    """A Tuning the functions could not start with; the message names the key."""


def parse_pairs(text: str) -> dict[str, str]:
    """Key -> value, each a known key within its bounds (``config.parse_tuning`` also checks
    them together, as ``Settings`` will)."""
    values: dict[str, str] = {}
    for item in text.split():
        match = _PAIR.fullmatch(item)
        if match is None:
            raise TuningError(f"'{item}' is not Key=value (pairs are separated by spaces)")
        key, value = match.groups()
        if key not in KEYS and key not in EXPORTED:
            import difflib  # a misspelt key's suggestion: never on a function's start

            known = [*KEYS, *EXPORTED]
            close = difflib.get_close_matches(key, known, n=1, cutoff=0.6)
            hint = f" (did you mean {close[0]}?)" if close else f"; known keys: {', '.join(known)}"
            raise TuningError(f"unknown key {key}{hint}")
        if key in values:
            raise TuningError(f"{key} is given twice")
        _bounded(key, value)
        values[key] = value
    return values


def _bounded(key: str, value: str) -> None:
    if key in CHOICES and value not in CHOICES[key]:
        raise TuningError(f"{key} must be one of {', '.join(CHOICES[key])}, not '{value}'")
    if key in BOUNDS:
        low, high = BOUNDS[key]
        try:
            number = float(value)
        except ValueError:
            raise TuningError(f"{key} must be a number, not '{value}'") from None
        if not low <= number <= high:
            raise TuningError(f"{key} must be between {low:.0f} and {high:.0f}, not {value}")


def environment(text: str) -> dict[str, str]:
    """The environment variables a Tuning sets (unchecked: Settings checks them)."""
    out: dict[str, str] = {}
    for item in text.split():
        key, _, value = item.partition("=")
        if key in KEYS:
            out[KEYS[key]] = value
    return out


def export_environment(environ: MutableMapping[str, str] | None = None) -> None:
    """Put the Tuning's values for libraries that read the environment themselves (the log
    level) where they read them (``os.environ``), unless set there already."""
    environ = os.environ if environ is None else environ
    for item in environ.get(VARIABLE, "").split():
        key, _, value = item.partition("=")
        if key in EXPORTED and not environ.get(EXPORTED[key]):
            environ[EXPORTED[key]] = value


def with_tuning(environ: Mapping[str, str]) -> dict[str, str]:
    """``environ`` with its Tuning's values under their variables; a variable set in ``environ``
    itself (not empty) wins."""
    tuned = environment(environ.get(VARIABLE, ""))
    return {**tuned, **{k: v for k, v in environ.items() if v != ""}}
