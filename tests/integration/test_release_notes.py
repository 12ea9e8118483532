"""CHANGELOG.md against the template (scripts/upgrade_diff.py --changelog, issue 31 item 6): every
Parameter whose meaning changed since the revision its newest section starts from is named in
an upgrade note, and a change without one fails the check."""

from __future__ import annotations

import copy
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))
import upgrade_diff  # noqa: E402

CHANGELOG = ROOT / "CHANGELOG.md"


def test_the_changelog_notes_every_parameter_changed_since_its_previous_release() -> None:
    done = subprocess.run(
        [sys.executable, "scripts/upgrade_diff.py", "--changelog", "CHANGELOG.md"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    print(done.stdout)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "0 changed Parameter(s) since" in done.stdout


def test_a_parameter_whose_meaning_changes_without_a_note_fails_the_check() -> None:
    since = upgrade_diff.since(CHANGELOG.read_text())
    now = upgrade_diff._template_at(None)
    changed = copy.deepcopy(now)
    changed["Parameters"]["Architecture"]["Default"] = "x86_64"  # a stack's functions would move to Intel
    assert upgrade_diff.check_changelog(since, CHANGELOG, after_template=now) == []
    [missing] = upgrade_diff.check_changelog(since, CHANGELOG, after_template=changed)
    assert missing == "Architecture: Default 'arm64' -> 'x86_64'"
