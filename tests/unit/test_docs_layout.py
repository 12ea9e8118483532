"""The Layout in docs/architecture.md is how a newcomer finds their way: every product module is named in it,
so a module added without a line there fails here rather than going unexplained."""

from __future__ import annotations

import pathlib
import re

ROOT = pathlib.Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "layers" / "taskgate" / "taskgate"


def _layout() -> str:
    page = (ROOT / "docs" / "architecture.md").read_text()
    match = re.search(r"^## Layout\n(.*?)(?=^## |\Z)", page, re.S | re.M)
    assert match, "docs/architecture.md has no Layout section"
    return match.group(1)


def test_every_product_module_is_in_the_layout() -> None:
    layout = _layout()
    modules = sorted(
        path.relative_to(PACKAGE)
        for path in PACKAGE.rglob("*.py")
        if path.name not in {"__init__.py", "__main__.py"}
    )
    assert len(modules) > 100
    missing = [str(module) for module in modules if module.name not in layout]
    assert not missing, f"docs/architecture.md's Layout does not name: {missing}"


def test_every_function_and_script_is_in_the_layout() -> None:
    layout = _layout()
    named = [path.name for path in (ROOT / "functions").iterdir() if path.is_dir()]
    named += [path.name for path in (ROOT / "scripts").iterdir() if path.suffix in {".py", ".sh"}]
    missing = [name for name in named if name not in layout]
    assert not missing, f"docs/architecture.md's Layout does not name: {missing}"
