"""A tool's own secrets (template Parameter ToolSecretArns; README, "Your tools' own needs").

A secret is never put in the environment (anyone who can read the function's configuration
could read it): a tool reads one with ``secret(arn)`` when it needs it. What reads it is the
composition root's business (``read_secrets_with``): deployed, Secrets Manager through the
worker's role, which may read exactly the ``ToolSecretArns``; in the test kit and the unit
tier, the in-memory ports. The value is kept for the life of the process. (The tool's own
environment, ToolEnvironment, is set by the composition root before the tool modules load.)
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from .errors import ToolError

# Reads one secret's value by its ARN; raises when it cannot.
SecretReader = Callable[[str], bytes]

_secrets: dict[str, bytes] = {}
_reader: SecretReader | None = None
_lock = threading.Lock()


def read_secrets_with(reader: SecretReader | None) -> None:
    """Read every ``secret()`` with ``reader`` from now on (the composition root installs
    it when it loads the tools); values read through the reader before are forgotten."""
    global _reader
    with _lock:
        _reader = reader
        _secrets.clear()


def secret(arn: str) -> str:
    """The value of a Secrets Manager secret named in ToolSecretArns (read once per process).
    Raises ToolError when it cannot be read (not in ToolSecretArns, gone, or not a string)."""
    with _lock:
        if arn in _secrets:
            return _secrets[arn].decode()
        reader = _reader
    if reader is None:
        raise ToolError(f"The secret {arn} cannot be read here: nothing loaded the tools to read it with")
    try:
        value = reader(arn)
    except Exception as exc:
        raise ToolError(
            f"The secret {arn} could not be read ({type(exc).__name__}); is it in ToolSecretArns?"
        ) from exc
    with _lock:
        _secrets[arn] = value
    return value.decode()


def forget_secrets() -> None:
    """Drop the values read (tests; a restored SnapStart snapshot reads them again)."""
    with _lock:
        _secrets.clear()
