"""Import a deployment's tool modules as its cold start will: ``python -m taskgate.local.cold_import``.

A misspelt ``ToolModules``, a tool module that imports a package the layers do not ship, or a
tool whose definition is refused (taskgate checks a tool's signature when its module is
imported) passes ``sam validate`` and ``sam build``, and fails only when a deployed function
first starts. This finds it before: every ``ToolModules`` name in the template is imported in a
fresh interpreter that has the layers' packages and nothing else.

    python -m taskgate.local.cold_import --template template.yaml --tools tools        # make test
    python -m taskgate.local.cold_import --template template.yaml --built .aws-sam/build  # make build

Before a build (``--tools``): a fresh ``python -I`` whose imports are limited to the standard
library, the distributions the layers install (taskgate's requirements and the tools'
``requirements.txt``, with what they require), taskgate without ``local/`` and ``testing/``
(which the layer leaves out) and the packages under the tools directory.

After a build (``--built``): ``python3.13 -I -S`` on the built layers' ``python/`` folders, which
is what Lambda puts on ``sys.path``, when they were built for this machine's architecture; built
for the other one (their compiled wheels would not load here), each name is looked for in the
built tools layer and the check before a build runs on the sources.
"""

from __future__ import annotations

import argparse
import importlib
import json
import platform
import re
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

import taskgate

# Only taskgate's development and test kits are left out of its layer (layers/Makefile).
NOT_IN_LAYER = ("taskgate.local", "taskgate.testing")
_LINE = re.compile(r"^(?P<indent>\s*)ToolModules:[ \t]*(?P<value>[^#\n]*)", re.M)
_DEFAULT = re.compile(r"^\s+Default:[ \t]*(?P<value>[^#\n]*)")


def tool_modules(template: str) -> list[str]:
    """Every module a template's ``ToolModules`` names: a nested application's parameter
    (``ToolModules: my_tools``) or a Parameter's ``Default``."""
    found: list[str] = []
    lines = template.splitlines()
    for match in _LINE.finditer(template):
        value = match["value"].strip().strip("\"'")
        if not value:  # a Parameter: its Default, among the lines indented under it
            at = template[: match.start()].count("\n") + 1
            for line in lines[at:]:
                if len(line) - len(line.lstrip()) <= len(match["indent"]):
                    break
                default = _DEFAULT.match(line)
                if default:
                    value = default["value"].strip().strip("\"'")
                    break
        if value and not value.startswith(("!", "{")):
            found += [name.strip() for name in value.split(",") if name.strip()]
    return list(dict.fromkeys(found))


def _requirement(text: str) -> tuple[str, set[str]] | None:
    """(distribution, extras) of one requirement (``name[extra,…] …``)."""
    match = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(?:\[([^\]]*)\])?", text)
    if not match:
        return None
    return match[1], {e.strip().lower() for e in (match[2] or "").split(",") if e.strip()}


def _requirement_names(path: Path) -> list[tuple[str, set[str]]]:
    """(distribution, extras) of each requirement line of a requirements file."""
    lines = (raw.split("#", 1)[0].strip() for raw in (path.read_text().splitlines() if path.exists() else []))
    return [req for line in lines if line and not line.startswith("-") and (req := _requirement(line))]


def layer_requirements(tools: Path) -> list[tuple[str, set[str]]]:
    """What the two layers install: taskgate's own requirements and the tools'."""
    return taskgate_requirements() + _requirement_names(tools / "requirements.txt")


def taskgate_requirements() -> list[tuple[str, set[str]]]:
    from importlib.metadata import PackageNotFoundError, distribution

    try:  # the installed package's own metadata: what its layer is built from
        requires = distribution("taskgate").requires or []
        return [(name, extras) for name, extras, marker in map(_parse, requires) if "extra" not in marker]
    except PackageNotFoundError:  # a checkout on sys.path, not installed
        return _requirement_names(Path(taskgate.__file__).resolve().parents[1] / "requirements.txt")


def _parse(requirement: str) -> tuple[str, set[str], str]:
    """(distribution, extras, marker) of a distribution's Requires-Dist entry."""
    spec, _, marker = requirement.partition(";")
    name, extras = _requirement(spec) or ("", set())
    return name, extras, marker.strip()


def _marker_holds(marker: str, extras: set[str]) -> bool:
    """Whether a requirement's marker holds for this interpreter with these extras asked for."""
    if not marker:
        return True
    try:
        markers = importlib.import_module("packaging.markers")
    except ImportError:  # every venv has pip, and pip carries packaging
        markers = importlib.import_module("pip._vendor.packaging.markers")
    parsed = markers.Marker(marker)
    return any(bool(parsed.evaluate({"extra": extra})) for extra in (extras or {""}))


def distribution_closure(requirements: list[tuple[str, set[str]]]) -> tuple[set[str], set[str]]:
    """(top-level import names, distributions not installed here) of the requirements and
    everything they require, as installed in this environment."""
    from importlib.metadata import PackageNotFoundError, distribution

    seen: set[tuple[str, frozenset[str]]] = set()
    names: set[str] = set()
    missing: set[str] = set()
    todo = list(requirements)
    while todo:
        name, extras = todo.pop()
        key = (re.sub(r"[-_.]+", "-", name).lower(), frozenset(extras))
        if key in seen:
            continue
        seen.add(key)
        try:
            dist = distribution(name)
        except PackageNotFoundError:
            missing.add(name)
            continue
        names |= _top_levels(dist)
        for requirement in dist.requires or []:
            req_name, req_extras, marker = _parse(requirement)
            if req_name and _marker_holds(marker, extras):
                todo.append((req_name, req_extras))
    return names, missing


def _top_levels(dist: object) -> set[str]:
    from importlib.metadata import Distribution

    assert isinstance(dist, Distribution)
    declared = dist.read_text("top_level.txt")
    if declared:
        return {line.strip() for line in declared.splitlines() if line.strip()}
    names: set[str] = set()
    for file in dist.files or []:
        top = file.parts[0]
        if top in ("..", "__pycache__", "bin") or top.endswith((".dist-info", ".egg-info", ".data", ".pth")):
            continue
        names.add(top.split(".", 1)[0] if top.endswith((".py", ".so", ".pyd")) else top)
    return names


# Runs in the fresh interpreter: argv[1] is a JSON of the modules, the paths to put first, and
# (before a build) the top-level names it may import.
_CHILD = r"""
import importlib, importlib.abc, importlib.machinery, json, os, sys, traceback
plan = json.loads(sys.argv[1])
sys.path[:0] = plan["path"]
if plan.get("allowed") is not None:
    allowed = set(plan["allowed"]) | set(sys.builtin_module_names)
    stdlib = os.path.realpath(os.path.dirname(os.__file__)) + os.sep  # lib-dynload is under it
    installed = (os.sep + "site-packages" + os.sep, os.sep + "dist-packages" + os.sep)

    class LayersOnly(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path=None, target=None):
            if name.startswith(tuple(plan["not_in_layer"])):
                raise ModuleNotFoundError(f"No module named {name!r} in the taskgate layer (development only)", name=name)
            if "." in name or name in allowed:
                return None
            spec = importlib.machinery.PathFinder.find_spec(name, path)
            where = spec and (spec.origin or next(iter(spec.submodule_search_locations or []), None))
            where = where and os.path.realpath(where)
            if not where or (where.startswith(stdlib) and not any(d in where for d in installed)):
                return None
            raise ModuleNotFoundError(
                f"No module named {name!r} in the layers (a package your tools need goes in tools/requirements.txt)",
                name=name,
            )

    sys.meta_path.insert(0, LayersOnly())
failed = 0
for module in plan["modules"]:
    try:
        importlib.import_module(module)
    except BaseException as exc:
        failed += 1
        print(f"FAIL {module}: {type(exc).__name__}: {exc}")
        for frame in traceback.extract_tb(exc.__traceback__):
            if frame.filename.startswith(tuple(plan["show"])):
                print(f"  {frame.filename}, line {frame.lineno}: {frame.line}")
    else:
        print(f"ok   {module}")
from taskgate.tools.registry import registry
print(json.dumps({"failed": failed, "tools": [t.name for t in registry]}))
sys.exit(1 if failed else 0)
"""


def _run(python: str, flags: list[str], plan: Mapping[str, object]) -> tuple[bool, str]:
    done = subprocess.run(
        [python, *flags, "-c", _CHILD, json.dumps(plan)], capture_output=True, text=True, timeout=300
    )
    return done.returncode == 0, (done.stdout + done.stderr).strip()


def check_sources(modules: list[str], tools: Path) -> tuple[bool, str]:
    """The check before a build, on this environment's packages, limited to the layers'."""
    allowed, missing = distribution_closure(layer_requirements(tools))
    packages = {p.parent.name for p in tools.glob("*/__init__.py")} | {p.stem for p in tools.glob("*.py")}
    plan = {
        "modules": modules,
        "path": [str(tools.resolve())],
        "allowed": sorted(allowed | packages | {"taskgate"}),
        "not_in_layer": list(NOT_IN_LAYER),
        "show": [str(tools.resolve())],
    }
    ok, out = _run(sys.executable, ["-I"], plan)
    if missing:
        out += "\nnot installed here, so not checked: " + ", ".join(sorted(missing))
    return ok, out


def _machine_arch() -> str:
    return {"aarch64": "arm64", "arm64": "arm64"}.get(platform.machine().lower(), "x86_64")


def check_built(modules: list[str], built: Path, tools: Path) -> tuple[bool, str]:
    """The check after a build: the built layers, as Lambda loads them."""
    layers = [p for name in ("TaskgateLayer", "ToolsLayer") for p in sorted(built.glob(f"**/{name}/python"))]
    if len(layers) != 2:
        return False, f"no built TaskgateLayer and ToolsLayer under {built}: run sam build first"
    marker = layers[0] / "taskgate.architecture"
    arch = marker.read_text().strip() if marker.exists() else _machine_arch()
    if arch == _machine_arch():
        python = "python3.13" if sys.version_info[:2] != (3, 13) else sys.executable
        plan = {"modules": modules, "path": [str(p) for p in layers], "show": [str(layers[1])]}
        return _run(python, ["-I", "-S"], plan)
    # Another architecture's wheels cannot load here: the names must be in the built layers,
    # and the sources import with the layers' packages only.
    absent = [m for m in modules if not any(_in_layer(layer, m) for layer in layers)]
    if absent:
        return False, f"not in the built layers: {', '.join(absent)}"
    ok, out = check_sources(modules, tools)
    return ok, f"built for {arch}, not this {_machine_arch()} machine: checked the sources\n{out}"


def _in_layer(layer: Path, module: str) -> bool:
    base = layer.joinpath(*module.split("."))
    return (base / "__init__.py").exists() or base.with_suffix(".py").exists()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m taskgate.local.cold_import", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("--template", type=Path, default=Path("template.yaml"))
    parser.add_argument(
        "--tools", type=Path, default=Path("tools"), help="the tools layer's source directory"
    )
    parser.add_argument(
        "--built", type=Path, help="sam build's output (.aws-sam/build): check the built layers"
    )
    args = parser.parse_args(argv)
    modules = tool_modules(args.template.read_text())
    if not modules:
        print(f"{args.template}: no ToolModules found", file=sys.stderr)
        return 1
    ok, out = (
        check_built(modules, args.built, args.tools) if args.built else check_sources(modules, args.tools)
    )
    *lines, summary = out.splitlines() or [""]
    tools = json.loads(summary).get("tools", []) if summary.startswith("{") else None
    for line in lines if tools is not None else [*lines, summary]:
        print(line)
    where = "the built layers" if args.built else "the layers' packages only"
    if ok:
        print(
            f"ToolModules {','.join(modules)}: imported as a cold start does ({where}): {len(tools or [])} tools"
        )
        return 0
    packages = sorted(p.parent.name for p in args.tools.glob("*/__init__.py"))
    print(
        f"ToolModules {','.join(modules)} (in {args.template}): a deployed function would fail to start. "
        f"The packages under {args.tools}/: {', '.join(packages) or 'none'}."
    )
    return 1


if __name__ == "__main__":
    raise SystemExit(main())
