"""The built layers' architecture against the function's, checked first thing at a cold start.

`sam build` takes the layers' wheels for LAMBDA_ARCH and the template's Architecture for the
functions; built for one and deployed on the other, the first native import (pydantic_core,
cryptography) fails with an ImportError that names neither. layers/Makefile writes the
architecture each layer was built for beside its packages (``<layer>.architecture`` in
/opt/python); this reads them before anything native is imported, using nothing but the
standard library, and fails the start with what to do. Outside a built layer (a checkout,
the local server) there are no such files and nothing is checked.
"""

from __future__ import annotations

import platform
from pathlib import Path

SITE = Path(__file__).resolve().parents[1]


def running_architecture(machine: str | None = None) -> str:
    """Lambda's name for the instruction set this process runs on."""
    machine = (machine or platform.machine()).lower()
    return "arm64" if machine in ("aarch64", "arm64") else "x86_64"


def check_layer_architecture(site: Path = SITE, machine: str | None = None) -> None:
    running = running_architecture(machine)
    for marker in sorted(site.glob("*.architecture")):
        built = marker.read_text().strip()
        if built != running:
            raise RuntimeError(
                f"taskgate is misconfigured: the {marker.stem} layer was built for {built}, but this "
                f"function runs on {running}. Build both for the same one: `make build ARCH={running}` "
                f"(or deploy with --parameter-overrides Architecture={built})."
            )
