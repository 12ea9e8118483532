#!/usr/bin/env python3
"""Write the tables of docs/reference/configuration.md from their sources, so the page
cannot drift from them: the template's Parameters (template.yaml: type, default, bounds,
Description, and the environment variables each one sets in the functions) and `Settings`
(taskgate/config.py: every variable the functions read, its type, bounds, default, and the
comment above its field).

    python scripts/config_reference.py           # rewrite the tables
    python scripts/config_reference.py --check   # exit 1 if the page is stale (a unit test runs it)

Nested settings groups are walked as `group.field`; `env_name` is where a group's variables
are named, the one line to change if their names change.
"""

from __future__ import annotations

import argparse
import ast
import inspect
import pathlib
import re
import sys
import textwrap
from typing import Any, Literal, get_args, get_origin

from cfnlint.decode import decode
from pydantic import BaseModel
from pydantic.fields import FieldInfo
from pydantic_core import PydanticUndefined

ROOT = pathlib.Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "reference" / "configuration.md"
TEMPLATE = ROOT / "template.yaml"
START = "<!-- generated:{name} (scripts/config_reference.py; edit the source, not this table) -->"
END = "<!-- generated:{name}:end -->"

sys.path.insert(0, str(ROOT / "layers" / "taskgate"))


def env_name(path: tuple[str, ...], field: FieldInfo | None = None) -> str:
    """The variable a field is read from (Settings.from_env: its validation_alias, else its
    name, uppercased)."""
    alias = field.validation_alias if field is not None else None
    return (alias if isinstance(alias, str) else path[-1]).upper()


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def _refs(value: Any) -> set[str]:
    """The names a template value reads: Ref, and ${Name} inside Fn::Sub."""
    if isinstance(value, dict):
        found: set[str] = set()
        for key, inner in value.items():
            if key == "Ref" and isinstance(inner, str):
                found.add(inner)
            elif key == "Fn::Sub":
                text = inner[0] if isinstance(inner, list) else inner
                found |= set(re.findall(r"\$\{([A-Za-z0-9]+)\}", str(text)))
                found |= _refs(inner[1:] if isinstance(inner, list) else [])
            else:
                found |= _refs(inner)
        return found
    if isinstance(value, list):
        return set().union(*(_refs(item) for item in value)) if value else set()
    return set()


def _variables(template: dict[str, Any]) -> dict[str, set[str]]:
    """Each function environment variable the template sets, and the Parameters it reads."""
    sources = [template.get("Globals", {}).get("Function", {})]
    sources += [
        resource.get("Properties", {})
        for resource in template["Resources"].values()
        if resource.get("Type") == "AWS::Serverless::Function"
    ]
    variables: dict[str, set[str]] = {}
    for properties in sources:
        for name, value in properties.get("Environment", {}).get("Variables", {}).items():
            variables.setdefault(name, set()).update(_refs(value))
    return variables


def _default(value: Any) -> str:
    if value in ("", None, (), frozenset()):
        return "empty"
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, (tuple, frozenset, list)):
        return ",".join(sorted(value) if isinstance(value, frozenset) else value)
    return str(value)


def parameters_table(template: dict[str, Any]) -> str:
    sets: dict[str, list[str]] = {}
    for variable, params in sorted(_variables(template).items()):
        for param in params:
            sets.setdefault(param, []).append(f"`{variable}`")
    rows = ["| Parameter | type | default | sets | what it does |", "| --- | --- | --- | --- | --- |"]
    for name, spec in template["Parameters"].items():
        kind = spec["Type"]
        if "AllowedValues" in spec:
            kind += ": " + ", ".join(f"`{v}`" for v in spec["AllowedValues"])
        elif "MinValue" in spec or "MaxValue" in spec:
            kind += f", {spec.get('MinValue', '')} to {spec.get('MaxValue', '')}"
        default = _default(str(spec.get("Default", "")))
        row = [f"`{name}`", kind, default, ", ".join(sets.get(name, [])) or "—", spec.get("Description", "")]
        rows.append("| " + " | ".join(_cell(cell) for cell in row) + " |")
    return "\n".join(rows)


def _comments(model: type[BaseModel]) -> dict[str, str]:
    """The comment lines directly above each field of a model's class body."""
    source = textwrap.dedent(inspect.getsource(model))
    lines = source.split("\n")
    found = {}
    for node in ast.parse(source).body[0].body:  # type: ignore[attr-defined]
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            above, index = [], node.lineno - 2
            while index >= 0 and lines[index].strip().startswith("#"):
                above.insert(0, lines[index].strip().lstrip("#").strip())
                index -= 1
            found[node.target.id] = " ".join(above)
    return found


def _type(annotation: Any, field: FieldInfo) -> str:
    origin, args = get_origin(annotation), get_args(annotation)
    if origin in (tuple, list):
        name = "list (comma-separated)"
    elif origin is frozenset:
        members = get_args(args[0]) if get_origin(args[0]) is Literal else args
        name = "set of " + ", ".join(str(m) for m in members) + " (comma-separated)"
    else:
        name = getattr(annotation, "__name__", str(annotation))
    bounds = []
    for constraint in field.metadata:
        for attr, sign in (("gt", ">"), ("ge", "≥"), ("lt", "<"), ("le", "≤"), ("min_length", "length ≥")):
            if getattr(constraint, attr, None) is not None:
                bounds.append(f"{sign} {getattr(constraint, attr)}")
    return f"{name}, {', '.join(bounds)}" if bounds else name


def _fields(
    model: type[BaseModel], path: tuple[str, ...] = ()
) -> list[tuple[tuple[str, ...], FieldInfo, str]]:
    comments = _comments(model)
    out = []
    for name, field in model.model_fields.items():
        annotation = field.annotation
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            out += _fields(annotation, (*path, name))
        else:
            out.append(((*path, name), field, comments.get(name, "")))
    return out


def settings_table(template: dict[str, Any], settings: type[BaseModel] | None = None) -> str:
    if settings is None:
        from taskgate.config import Settings as settings

    from taskgate.tuning import BOUNDS, KEYS

    tuned = {variable: key for key, variable in KEYS.items()}
    variables = _variables(template)
    rows = [
        "| variable | type | default | set by the template from | what it is |",
        "| --- | --- | --- | --- | --- |",
    ]
    for path, field, comment in _fields(settings):
        variable = env_name(path, field)
        default = "required" if field.default is PydanticUndefined else _default(field.default)
        params = [p for p in sorted(variables.get(variable, ())) if p in template["Parameters"]]
        resources = [r for r in sorted(variables.get(variable, ())) if r in template["Resources"]]
        origin = ", ".join([f"`{p}`" for p in params] + [f"the stack's `{r}`" for r in resources])
        if variable in variables and not origin:
            origin = "the template"
        if not origin and variable in tuned:
            key = tuned[variable]
            bounds = BOUNDS.get(key)
            origin = f"`Tuning` key `{key}`" + (f" ({bounds[0]:.0f} to {bounds[1]:.0f})" if bounds else "")
        # A field's description, else the comment above it, else its Parameter's Description.
        comment = (
            field.description
            or comment
            or " ".join(template["Parameters"][p].get("Description", "") for p in params)
        )
        row = [f"`{variable}`", _type(field.annotation, field), default, origin or "—", comment]
        rows.append("| " + " | ".join(_cell(cell) for cell in row) + " |")
    return "\n".join(rows)


def load_template() -> dict[str, Any]:
    template, matches = decode(str(TEMPLATE))
    assert template is not None and not matches, matches
    return template  # type: ignore[no-any-return]


def tables(template: dict[str, Any] | None = None, settings: type[BaseModel] | None = None) -> dict[str, str]:
    template = load_template() if template is None else template
    return {"parameters": parameters_table(template), "settings": settings_table(template, settings)}


def render(text: str, generated: dict[str, str]) -> str:
    for name, table in generated.items():
        start, end = START.format(name=name), END.format(name=name)
        if start not in text or end not in text:
            raise SystemExit(f"{PAGE.relative_to(ROOT)} has no {start} … {end} block")
        before, rest = text.split(start, 1)
        text = f"{before}{start}\n{table}\n{end}{rest.split(end, 1)[1]}"
    return text


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--check", action="store_true")
    args = parser.parse_args()
    current = PAGE.read_text()
    wanted = render(current, tables())
    if args.check:
        if current != wanted:
            print(
                f"{PAGE.relative_to(ROOT)} is stale: run python scripts/config_reference.py", file=sys.stderr
            )
            return 1
        return 0
    PAGE.write_text(wanted)
    return 0


if __name__ == "__main__":
    sys.exit(main())
