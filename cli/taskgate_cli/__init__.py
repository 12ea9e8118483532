"""A terminal client for taskgate: call MCP tools as tasks, follow, answer and cancel them.

Standard library only, so it installs without the server (``pip install ./cli``-style
packaging later) and runs as ``taskgate`` or ``python -m taskgate_cli``.
"""

from __future__ import annotations

__version__ = "0.1.0"

__all__ = ["__version__", "main"]


def main(argv: list[str] | None = None) -> int:
    from .app import main as run

    return run(argv)
