"""The code blocks of README.md and docs/ that tests run (the convention is in
docs/development/testing.md, "Runnable code blocks").

A fenced block is marked by an HTML comment on the line before its opening fence, which
neither GitHub nor the site shows:

    <!-- runnable: KIND key=value … -->     a test runs it
    <!-- not-runnable: why -->              it cannot run in a test, and this says why

Values with spaces are quoted (``expect="Deleted report.csv"``); a key may repeat.
"""

from __future__ import annotations

import pathlib
import re
import shlex
from dataclasses import dataclass, field

ROOT = pathlib.Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
MARK = re.compile(r"^<!-- (runnable|not-runnable):\s*(.*?)\s*-->$")
FENCE = re.compile(r"^(```+|~~~+)\s*([\w+-]*)")
# What a block of each kind is, and where it runs.
KINDS = {
    "python": "Python on the project's .venv, in-process (tests/unit/test_snippets.py)",
    "shell": "bash, against `make serve` on a free port (tests/e2e/test_snippets.py)",
    "serve": "the `make serve` the page's shell and client blocks run against",
    "python-client": "a program on .tools/clients2025/py (mcp 1.30.0), against `make serve`",
    "node-client": "an ES module on .tools/clients2025/node (@modelcontextprotocol/sdk), against `make serve`",
}
# The address the blocks show; the tests put the server's own in its place.
LOCAL_URL = "http://127.0.0.1:3000"


@dataclass(frozen=True)
class Block:
    page: pathlib.Path
    line: int  # of the opening fence, 1-based
    language: str
    code: str
    marker: str  # "runnable", "not-runnable" or "" (unmarked)
    kind: str = ""
    options: dict[str, list[str]] = field(default_factory=dict)

    @property
    def where(self) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.line}"

    def option(self, key: str, default: str = "") -> str:
        return self.options.get(key, [default])[-1]


def blocks(page: pathlib.Path, text: str | None = None) -> list[Block]:
    lines = (page.read_text() if text is None else text).split("\n")
    found: list[Block] = []
    index = 0
    while index < len(lines):
        opening = FENCE.match(lines[index])
        if not opening:
            index += 1
            continue
        fence, language = opening.group(1), opening.group(2)
        end = next(
            (i for i in range(index + 1, len(lines)) if lines[i].strip() == fence),
            len(lines),
        )
        mark = MARK.match(lines[index - 1]) if index else None
        marker, kind, options = "", "", {}
        if mark:
            marker = mark.group(1)
            if marker == "runnable":
                kind, *pairs = shlex.split(mark.group(2))
                for pair in pairs:
                    key, _, value = pair.partition("=")
                    options.setdefault(key, []).append(value)
        code = "\n".join(lines[index + 1 : end]) + "\n"
        found.append(Block(page, index + 1, language, code, marker, kind, options))
        index = end + 1
    return found


def runnable(*kinds: str, pages: list[pathlib.Path] | None = None) -> list[Block]:
    return [b for page in pages or PAGES for b in blocks(page) if b.marker == "runnable" and b.kind in kinds]


def local(code: str, base_url: str) -> str:
    """The block as it runs: the server's address in place of the one it shows."""
    return code.replace(LOCAL_URL, base_url)
