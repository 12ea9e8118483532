"""A tool's own environment and secrets (template Parameters ToolEnvironment and
ToolSecretArns; README, "Your tools' own needs").

``ToolEnvironment`` is NAME=value pairs that are set in ``os.environ`` before the tool
modules are imported, so a tool reads them as any program does. A secret is never put in
the environment (anyone who can read the function's configuration could read it): a tool
reads one with ``secret(arn)`` when it needs it, through the worker's role, which may read
exactly the ``ToolSecretArns``; the value is kept for the life of the process.
"""

from __future__ import annotations

import os
import re
import threading
from collections.abc import Mapping, MutableMapping

from .context import ToolError

_NAME = re.compile(r"[A-Z][A-Z0-9_]*")
# Names the platform or taskgate owns: a tool's value must never replace theirs.
_RESERVED_PREFIXES = ("AWS_", "LAMBDA_", "POWERTOOLS_", "_")
_secrets: dict[str, bytes] = {}
_lock = threading.Lock()


def parse_tool_environment(value: str, reserved: frozenset[str] = frozenset()) -> dict[str, str]:
    """``NAME=value,NAME2=value2`` as a dict; ValueError naming what is wrong."""
    pairs: dict[str, str] = {}
    for item in filter(None, (part.strip() for part in value.split(","))):
        name, sep, val = item.partition("=")
        name = name.strip()
        if not sep or not _NAME.fullmatch(name):
            raise ValueError(f"{item!r} is not NAME=value (NAME in capitals, digits and _)")
        if name.startswith(_RESERVED_PREFIXES) or name in reserved:
            raise ValueError(f"{name} is a name taskgate or Lambda sets; pick another for your tool")
        pairs[name] = val
    return pairs


def apply_tool_environment(pairs: Mapping[str, str], environ: MutableMapping[str, str] | None = None) -> None:
    """Set the pairs in the environment; a variable already set (a developer's shell) wins."""
    env = os.environ if environ is None else environ
    for name, val in pairs.items():
        env.setdefault(name, val)


def secret(arn: str) -> str:
    """The value of a Secrets Manager secret named in ToolSecretArns (read once per process).
    Raises ToolError when it cannot be read (not in ToolSecretArns, gone, or not a string)."""
    with _lock:
        if arn in _secrets:
            return _secrets[arn].decode()
    from ..adapters import aws_clients
    from ..adapters.secrets import SecretsManagerSecret

    try:
        value = SecretsManagerSecret(lambda: aws_clients.client("secretsmanager"), arn).value()
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
