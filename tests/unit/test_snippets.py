"""The Python blocks of README.md and docs/ marked runnable run here, page by page, in order
(the convention: docs/development/testing.md). Blocks that need a server run in
tests/e2e/test_snippets.py."""

from __future__ import annotations

import pathlib
import sys
import types

import pytest

from taskgate.tools import registry
from tests.snippets import KINDS, PAGES, ROOT, Block, blocks, runnable

PYTHON_PAGES = sorted({block.page for block in runnable("python")})
# Every README block a reader would copy is marked: it runs in a test, or says why it cannot.
CODE = {"bash", "sh", "shell", "python", "py", "js", "javascript", "ts", "typescript"}


def _module(name: str, monkeypatch: pytest.MonkeyPatch) -> types.ModuleType:
    module = types.ModuleType(name)
    parts = name.split(".")
    for depth in range(1, len(parts)):  # the packages above it, so `from a.b import c` works
        package = types.ModuleType(".".join(parts[:depth]))
        package.__path__ = []
        monkeypatch.setitem(sys.modules, package.__name__, package)
    monkeypatch.setitem(sys.modules, name, module)
    return module


def run_python(page_blocks: list[Block], monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Run a page's blocks in one namespace, in order; after each, call the test_* functions it
    defined. Returns what ran."""
    # What a page's @tool registers is forgotten after it: the same example on two pages is
    # not two tools of one name.
    monkeypatch.setattr(registry, "_tools", dict(registry._tools))
    name = next((b.option("module") for b in page_blocks if b.option("module")), "snippet")
    namespace = vars(_module(name, monkeypatch))
    ran = []
    for block in page_blocks:
        before = set(namespace)
        exec(compile(block.code, block.where, "exec"), namespace)
        ran.append(block.where)
        for test_name in sorted(set(namespace) - before):
            if test_name.startswith("test_") and callable(namespace[test_name]):
                namespace[test_name]()
                ran.append(f"{block.where} {test_name}")
    return ran


@pytest.mark.parametrize("page", PYTHON_PAGES, ids=lambda page: str(page.relative_to(ROOT)))
def test_a_pages_python_blocks_run(page: pathlib.Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ran = run_python([b for b in runnable("python") if b.page == page], monkeypatch)
    print("\n".join(ran))
    assert ran


def test_the_first_tool_runs_on_the_front_page_and_in_getting_started() -> None:
    assert {ROOT / "README.md", ROOT / "docs" / "getting-started.md"} <= set(PYTHON_PAGES)


def test_every_readme_code_block_is_marked() -> None:
    unmarked = [b.where for b in blocks(ROOT / "README.md") if b.language in CODE and not b.marker]
    assert not unmarked, "mark them <!-- runnable: … --> or <!-- not-runnable: why -->"


def test_every_marker_is_understood() -> None:
    for page in PAGES:
        for block in blocks(page):
            if block.marker == "runnable":
                assert block.kind in KINDS, f"{block.where}: unknown kind {block.kind!r}"
            if block.marker == "not-runnable":
                assert block.code.strip(), block.where


def test_a_failing_block_fails_its_page(monkeypatch: pytest.MonkeyPatch) -> None:
    page = ROOT / "docs" / "example.md"
    text = (
        "<!-- runnable: python module=shop.tools -->\n```python\nPRICE = 3\n```\n\n"
        "<!-- runnable: python -->\n```python\ndef test_price():\n    assert PRICE == 4\n```\n"
        "\n<!-- not-runnable: an illustration -->\n```bash\nmake deploy\n```\n"
    )
    found = blocks(page, text)
    assert [(b.marker, b.kind, b.option("module"), b.line) for b in found] == [
        ("runnable", "python", "shop.tools", 2),
        ("runnable", "python", "", 7),
        ("not-runnable", "", "", 13),
    ]
    with pytest.raises(AssertionError):
        run_python(found[:2], monkeypatch)
    assert sys.modules["shop.tools"].PRICE == 3  # the module the first block made
