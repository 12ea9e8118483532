"""The project template's example tool (rollout), loaded from its file in
templates/taskgate-project, so the kit's tests test the very tool a new project starts with."""

from __future__ import annotations

import importlib.util
import pathlib

from taskgate.tools.registry import registry

_PATH = (
    pathlib.Path(__file__).resolve().parents[1]
    / "templates/taskgate-project/{{cookiecutter.project_name}}/tools/{{cookiecutter.package}}/rollout.py"
)
_spec = importlib.util.spec_from_file_location("tests.kit_tools_rollout", _PATH)
assert _spec is not None and _spec.loader is not None
_module = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_module)

# Its @tool registered it in the process-wide registry, where a page's own rollout (a docs
# snippet) would collide with it: the tests take the Tool itself, and the registry forgets it.
rollout = registry._tools.pop("rollout")
assert rollout.fn is _module.rollout
