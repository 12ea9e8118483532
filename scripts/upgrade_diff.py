"""What a `sam deploy` of this checkout would add, remove and replace in a stack deployed from
an earlier revision, read from both templates as CloudFormation's SAM transform makes them, and
what its Parameters come to mean.

    python scripts/upgrade_diff.py --before <git revision> [--parameter-overrides K=V ...]

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
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
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


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--before", required=True, help="the git revision the stack was deployed from")
    parser.add_argument("--after", default=None, help="default: this checkout's template.yaml")
    parser.add_argument("--parameter-overrides", nargs="*", default=[], metavar="K=V")
    args = parser.parse_args(argv)
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
