"""What a `sam deploy` of this checkout would add, remove and replace in a stack deployed from
an earlier revision, read from both templates as CloudFormation's SAM transform makes them, and
what its Parameters come to mean.

    python scripts/upgrade_diff.py --before <git revision> [--parameter-overrides K=V ...]
    python scripts/upgrade_diff.py --before <git revision> --changelog CHANGELOG.md

The Parameters section (tests/rehearsal.py, ``upgrade_report``): a changed default (a stack
deployed before keeps its value: sam deploy keeps a Parameter's previous value), a Parameter
gone (and where its value goes now), a value that no longer reaches what it did (the same
value, a lesser effect: ``meaning_changes``), the deploy the new template refuses and what it
says to set, and what people and agents could sign in with before and no longer can.

A resource is replaced when its type changes or a property CloudFormation cannot update in
place (the resource type's createOnlyProperties) changes; a removed one is deleted, unless its
DeletionPolicy keeps it. Properties are compared as the templates write them: a value resolved
only at deploy time (a Ref to a resource, a configuration fingerprint) is reported as "may
change at deploy".

``--changelog`` checks the release notes instead (``check_changelog``): every Parameter whose
meaning for a deployed stack changed since that revision (its type, default, allowed values or
bounds changed, or it is gone) must be named, in backticks, in an "Upgrade notes" part of the
CHANGELOG sections newer than that revision's release; exit 1 naming each one that is not.
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import re
import subprocess
import sys
import tempfile
from typing import Any

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def _template_at(revision: str | None) -> dict[str, Any]:
    from cfnlint.decode import decode

    if revision is None:
        path = ROOT / "template.yaml"
        text = path.read_text()
    else:
        text = subprocess.run(
            ["git", "show", f"{revision}:template.yaml"], cwd=ROOT, capture_output=True, text=True, check=True
        ).stdout
    with tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False) as f:
        f.write(text)
    try:
        template, matches = decode(f.name)
    finally:
        os.unlink(f.name)
    assert template is not None, matches
    return template  # type: ignore[no-any-return]


def _create_only(kind: str) -> list[str]:
    from cfnlint.schema import PROVIDER_SCHEMA_MANAGER

    try:
        schema = PROVIDER_SCHEMA_MANAGER.get_resource_schema("us-east-1", kind).schema
    except Exception:
        return []
    return [p.removeprefix("/properties/") for p in schema.get("createOnlyProperties", [])]


def _at(props: dict[str, Any], path: str) -> Any:
    node: Any = props
    for part in path.split("/"):
        if not isinstance(node, dict) or part not in node:
            return None
        node = node[part]
    return node


def diff(before: dict[str, Any], after: dict[str, Any]) -> list[tuple[str, str, str, str]]:
    """(logical id, type, what happens, why) for every resource that changes."""
    rows: list[tuple[str, str, str, str]] = []
    old, new = before["Resources"], after["Resources"]
    for name in sorted(set(old) | set(new)):
        if name not in new:
            kept = str(old[name].get("DeletionPolicy", "Delete"))
            action = (
                "removed (kept: DeletionPolicy " + kept + ")"
                if kept.startswith("Retain")
                else "removed (deleted)"
            )
            rows.append((name, old[name]["Type"], action, ""))
            continue
        if name not in old:
            rows.append((name, new[name]["Type"], "added", ""))
            continue
        a, b = old[name], new[name]
        if a["Type"] != b["Type"]:
            rows.append((name, b["Type"], "REPLACED", f"type {a['Type']} -> {b['Type']}"))
            continue
        pa, pb = a.get("Properties", {}), b.get("Properties", {})
        if pa == pb:
            continue
        changed = sorted(k for k in set(pa) | set(pb) if pa.get(k) != pb.get(k))
        replacing = [p for p in _create_only(b["Type"]) if _at(pa, p) != _at(pb, p)]
        if replacing:
            policy = b.get("UpdateReplacePolicy", "Delete")
            rows.append(
                (name, b["Type"], f"REPLACED (old one: {policy})", "createOnly " + ", ".join(replacing))
            )
        else:
            rows.append((name, b["Type"], "updated in place", ", ".join(changed)))
    return rows


# ---- the CHANGELOG's upgrade notes (issue 31, item 6) ------------------------------------------
# A Parameter that means something else after an upgrade (a new default a stack silently takes,
# a value no longer allowed, a bound narrowed, a Parameter gone) breaks a deployed stack unless
# its deployer is told: the CHANGELOG's "Upgrade notes" must name it.
PARAMETER_FIELDS = (
    "Type",
    "Default",
    "AllowedValues",
    "AllowedPattern",
    "MinValue",
    "MaxValue",
    "MinLength",
    "MaxLength",
)
_HEADING = re.compile(r"^## +\[?(?P<version>[0-9][^\]\s]*|Unreleased)", re.M | re.I)
_NOTES = re.compile(r"^### +Upgrade notes *$(?P<body>.*?)(?=^##)", re.M | re.S | re.I)


def parameter_changes(before: dict[str, Any], after: dict[str, Any]) -> dict[str, str]:
    """{Parameter: what changed} for each Parameter of ``before`` a deployed stack has that
    means something else in ``after``."""
    old, new = before.get("Parameters", {}), after.get("Parameters", {})
    changes: dict[str, str] = {}
    for name in sorted(old):
        if name not in new:
            changes[name] = "removed"
            continue
        changed = [
            f"{k} {old[name].get(k)!r} -> {new[name].get(k)!r}"
            for k in PARAMETER_FIELDS
            if old[name].get(k) != new[name].get(k)
        ]
        if changed:
            changes[name] = "; ".join(changed)
    return changes


def upgrade_notes(changelog: str, since_version: str, current_version: str) -> set[str]:
    """The names in backticks in the "Upgrade notes" of every section newer than the release
    ``since_version``: the sections above its heading (all of them when the revision was not a
    release yet, i.e. its version is the one being prepared)."""
    headings = list(_HEADING.finditer(changelog))
    end = len(changelog)
    if since_version != current_version:
        end = next((h.start() for h in headings if h["version"] == since_version), end)
    newer = changelog[:end] + "\n## end"
    return {
        name
        for notes in _NOTES.finditer(newer)
        for name in re.findall(r"`([A-Za-z][A-Za-z0-9]*)`", notes["body"])
    }


def _version_at(revision: str | None) -> str:
    init = "layers/taskgate/taskgate/__init__.py"
    text = (
        (ROOT / init).read_text()
        if revision is None
        else subprocess.run(
            ["git", "show", f"{revision}:{init}"], cwd=ROOT, capture_output=True, text=True, check=True
        ).stdout
    )
    match = re.search(r'__version__ = "([^"]+)"', text)
    assert match, init
    return match[1]


def since(changelog: str) -> str:
    """The revision the newest section's notes start from: its "Since <revision>" line."""
    match = re.search(r"^Since +(\S+?)[ .,(]", changelog, re.M)
    if not match:
        raise SystemExit("CHANGELOG.md: the newest section has no 'Since <revision>' line")
    return match[1]


def check_changelog(
    before: str,
    changelog: pathlib.Path,
    after: str | None = None,
    *,
    after_template: dict[str, Any] | None = None,
) -> list[str]:
    """What the CHANGELOG fails to tell a deployer upgrading from ``before``: one line per
    changed Parameter its upgrade notes do not name (``after_template``: instead of ``after``'s)."""
    changes = parameter_changes(_template_at(before), after_template or _template_at(after))
    if after_template is None:
        # And the Parameters whose value now reaches less, though their definition is unchanged
        # (JwtAudience no longer naming accepted client ids): found by deploying both releases
        # with the same value (tests/rehearsal.py).
        from tests.rehearsal import Release, meaning_changes, release

        current = release(None) if after is None else Release(after)
        for name, why in meaning_changes(release(before), current).items():
            changes.setdefault(name, why)
    noted = upgrade_notes(changelog.read_text(), _version_at(before), _version_at(after))
    return [f"{name}: {why}" for name, why in changes.items() if name not in noted]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--before",
        help="the git revision the stack was deployed from (with --changelog: default, its Since line)",
    )
    parser.add_argument("--after", default=None, help="default: this checkout's template.yaml")
    parser.add_argument("--parameter-overrides", nargs="*", default=[], metavar="K=V")
    parser.add_argument(
        "--changelog", type=pathlib.Path, help="check that its upgrade notes name every changed Parameter"
    )
    args = parser.parse_args(argv)
    if not (args.before or args.changelog):
        parser.error("--before is required")
    if args.changelog:
        args.before = args.before or since(args.changelog.read_text())
        missing = check_changelog(args.before, args.changelog, args.after)
        for line in missing:
            print(f"FAIL no upgrade note for {line}")
        print(
            f"{args.changelog}: {len(missing)} changed Parameter(s) since {args.before} without an upgrade note"
        )
        sys.exit(1 if missing else 0)
    from tests.sam_translate import translate

    params = dict(item.split("=", 1) for item in args.parameter_overrides)
    before = translate(params, _template_at(args.before))
    after = translate(params, _template_at(args.after))
    rows = diff(before, after)
    width = max((len(r[0]) for r in rows), default=10)
    for name, kind, action, why in rows:
        print(f"{name:{width}}  {kind:36}  {action:32}  {why}")
    replaced = [r[0] for r in rows if r[2].startswith("REPLACED")]
    from tests.rehearsal import Release, release, upgrade_report

    previous = release(args.before)
    current = release(None) if args.after is None else Release(args.after)
    print("\nParameters:")
    for name, what in upgrade_report(previous, current, params):
        print(f"  {name}: {what}")
    print(
        json.dumps(
            {
                "added": sum(r[2] == "added" for r in rows),
                "replaced": replaced,
                "removed": [r[0] for r in rows if r[2].startswith("removed")],
            }
        )
    )


if __name__ == "__main__":
    main()
