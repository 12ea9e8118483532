"""The wheel's one addition to pyproject.toml: taskgate's stack as package data.

A deployer's project deploys taskgate from the installed package (``python -m
taskgate.local.stack write``), and the local server runs the real state machine and worker
handler from it, so the wheel carries the files they come from, under ``taskgate/_stack``:
the template, the state machine, the three functions and the layer build. They are copied at
build time from this checkout, where they live at the top level; nothing is kept twice.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

ROOT = Path(__file__).resolve().parent
# The list the stack writer reads them by (it and taskgate/__init__ import nothing outside the stdlib).
sys.path.insert(0, str(ROOT / "layers" / "taskgate"))
from taskgate.local.stack import STACK_FILES  # noqa: E402


class BuildWithStack(build_py):
    def run(self) -> None:
        super().run()
        if self.editable_mode:
            return  # an editable install reads the checkout itself
        target = Path(self.build_lib) / "taskgate" / "_stack"
        for name in STACK_FILES:
            source, dest = ROOT / name, target / name
            dest.parent.mkdir(parents=True, exist_ok=True)
            if source.is_dir():
                shutil.copytree(
                    source, dest, dirs_exist_ok=True, ignore=shutil.ignore_patterns("__pycache__")
                )
            else:
                shutil.copy2(source, dest)


setup(cmdclass={"build_py": BuildWithStack})
