"""``python -m taskgate_cli``: the same as the ``taskgate`` command."""

from __future__ import annotations

import sys

from .app import main

if __name__ == "__main__":
    sys.exit(main())
