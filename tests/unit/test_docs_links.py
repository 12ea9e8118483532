"""Links as GitHub shows them. `make docs` builds docs/ strictly, but README.md is not part of
the site, and GitHub names a heading's anchor by its own rule: every relative link in
README.md and docs/ must reach a file, and its #anchor a heading there. Every page is in the
site's nav, or the site would not show it."""

from __future__ import annotations

import pathlib
import re

ROOT = pathlib.Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
LINK = re.compile(r"\]\(([^)\s]+)\)")


def _outside_code(text: str) -> list[str]:
    lines, fenced = [], False
    for line in text.split("\n"):
        if line.lstrip().startswith("```"):
            fenced = not fenced
        elif not fenced:
            lines.append(re.sub(r"`[^`]*`", "", line) if not line.startswith("#") else line)
    return lines


def github_anchors(text: str) -> set[str]:
    """The ids GitHub gives a file's headings: lowercased, punctuation dropped, spaces to
    hyphens, a repeated one suffixed -1, -2…"""
    seen: dict[str, int] = {}
    anchors = set()
    for line in _outside_code(text):
        heading = re.match(r"#{1,6} (.*)", line)
        if not heading:
            continue
        slug = re.sub(r"[^\w\- ]", "", heading.group(1).strip().lower()).replace(" ", "-")
        count = seen.get(slug, 0)
        seen[slug] = count + 1
        anchors.add(slug if count == 0 else f"{slug}-{count}")
    return anchors


def broken_links(page: pathlib.Path, text: str) -> list[str]:
    broken = []
    for line in _outside_code(text):
        for target in LINK.findall(line):
            if re.match(r"[a-z]+:", target):
                continue  # another site
            path, _, anchor = target.partition("#")
            file = (page.parent / path).resolve() if path else page
            if not file.is_file():
                broken.append(f"{target}: no such file")
            elif anchor and file.suffix == ".md" and anchor not in github_anchors(file.read_text()):
                broken.append(f"{target}: no such heading")
    return broken


def _pages() -> list[pathlib.Path]:
    return [ROOT / "README.md", *sorted(DOCS.rglob("*.md"))]


def test_every_link_in_the_readme_and_the_docs_reaches_its_page_and_heading() -> None:
    broken = {
        str(page.relative_to(ROOT)): found
        for page in _pages()
        if (found := broken_links(page, page.read_text()))
    }
    assert not broken


def test_a_missing_page_or_heading_is_found() -> None:
    page = ROOT / "README.md"
    text = "[a](docs/nowhere.md) [b](docs/architecture.md#no-such-heading) [c](docs/architecture.md#layout)"
    assert broken_links(page, text) == [
        "docs/nowhere.md: no such file",
        "docs/architecture.md#no-such-heading: no such heading",
    ]
    assert "one-task-1" in github_anchors("# One task\n## One task\n```\n# not a heading\n```")


def test_every_page_is_in_the_sites_nav() -> None:
    nav = set(re.findall(r":\s*(\S+\.md)\s*$", (ROOT / "mkdocs.yml").read_text(), re.M))
    pages = {str(page.relative_to(DOCS)) for page in DOCS.rglob("*.md")}
    assert pages - nav == set(), "pages the site's nav does not show"
    assert nav - pages == set(), "nav entries with no page"
