"""Lambda SnapStart: one snapshot of an initialised function resumes many execution
environments, so nothing that must differ between them may come from init.

What init leaves in the snapshot, and why it is safe:

- no task id, token or other unique value is made at init (``uuid4`` / ``secrets`` are
  called per request, from ``os.urandom``, which is unique after a restore);
- no time is read at init (every timestamp comes from ``clock.now_ms`` per use);
- ``random``'s state *is* in the snapshot (botocore draws its retry jitter from it):
  every restored environment would retry in step, so it is re-seeded;
- the AWS clients hold credentials resolved at init and would open connections from
  the snapshot's pools: they are built again (``aws_clients.refresh``; the adapters
  look their client up at every call, so they use the new ones).

``install()`` registers ``after_restore`` with the runtime's hook library
(``snapshot_restore_py``, part of the Python managed runtimes). Where that library is
absent but the environment says it was restored (``AWS_LAMBDA_INITIALIZATION_TYPE`` is
``snap-start``), ``before_invocation()`` runs the hooks on the environment's first
invocation instead - the first one after its restore, as a snapshot is taken before
any invocation. Without SnapStart none of this runs.
"""

from __future__ import annotations

import os
import random
from collections.abc import Callable

from .adapters import aws_clients


def _reseed() -> None:
    random.seed()  # from os.urandom: different in every restored environment


#: Run in order after every restore.
HOOKS: list[Callable[[], None]] = [_reseed, aws_clients.refresh]

_installed = ""
_pending = False


def after_restore() -> None:
    for hook in HOOKS:
        hook()


def install() -> str:
    """Register the restore hooks; returns how: ``runtime`` (the runtime calls them),
    ``first-invocation`` (the fallback) or ``none`` (not a SnapStart environment)."""
    global _installed, _pending
    if _installed:
        return _installed
    try:
        from snapshot_restore_py import register_after_restore
    except ImportError:
        restored = os.environ.get("AWS_LAMBDA_INITIALIZATION_TYPE") == "snap-start"
        _pending = restored
        _installed = "first-invocation" if restored else "none"
    else:
        register_after_restore(after_restore)
        _installed = "runtime"
    return _installed


def before_invocation() -> None:
    """Call first in every handler: runs the hooks once where the runtime cannot."""
    global _pending
    if _pending:
        _pending = False
        after_restore()


def uninstall() -> None:
    """Forget the registration (tests)."""
    global _installed, _pending
    _installed, _pending = "", False
