"""The public API a tool author's code and tests are written against (``taskgate.tools``,
``taskgate.testing``), pinned in public_api.txt: a change to it is a decision, made by
regenerating that file in the same change and saying so in the CHANGELOG (issue 31, item 6).

    python -m tests.unit.test_public_api --write     # after deciding to change the API
"""

from __future__ import annotations

import difflib
import inspect
import pathlib
import sys
from types import ModuleType

import taskgate.testing
import taskgate.tools

PINNED = pathlib.Path(__file__).with_name("public_api.txt")
MODULES: tuple[ModuleType, ...] = (taskgate.tools, taskgate.testing)


def _signature(obj: object) -> str:
    try:
        return str(inspect.signature(obj))  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return "(...)"


def _members(cls: type) -> list[str]:
    """The public members taskgate itself defines on ``cls`` (not those pydantic, the standard
    library or Exception give it), each with its signature or kind."""
    lines = []
    seen: set[str] = set()
    for owner in cls.__mro__:
        if not owner.__module__.startswith("taskgate"):
            continue
        for name, value in vars(owner).items():
            if name.startswith("_") or name in seen:
                continue
            seen.add(name)
            if isinstance(value, property):
                lines.append(f"  .{name}: property")
            elif isinstance(value, (classmethod, staticmethod)):
                lines.append(f"  .{name}{_signature(value.__func__)}  [{type(value).__name__}]")
            elif inspect.isfunction(value):
                lines.append(f"  .{name}{_signature(value)}")
            elif name in getattr(cls, "model_fields", {}) or name in getattr(cls, "__dataclass_fields__", {}):
                continue  # a field: in the constructor's signature
            else:
                lines.append(f"  .{name}: {type(value).__name__}")
    fields = getattr(cls, "model_fields", None) or {}
    lines += [f"  field {name}: {field.annotation!r}" for name, field in fields.items()]
    return sorted(lines)


def surface() -> str:
    """The public API as text: every name in each module's __all__, with its signature."""
    out: list[str] = []
    for module in MODULES:
        for name in sorted(module.__all__):
            obj = getattr(module, name)
            qualified = f"{module.__name__}.{name}"
            if inspect.isclass(obj):
                bases = ", ".join(b.__name__ for b in obj.__bases__)
                out.append(f"class {qualified}({bases}){_signature(obj)}")
                out += _members(obj)
            elif inspect.isfunction(obj):
                out.append(f"def {qualified}{_signature(obj)}")
            else:
                out.append(f"{qualified}: {type(obj).__module__}.{type(obj).__name__}")
    return "\n".join(out) + "\n"


def test_the_public_api_is_the_pinned_one() -> None:
    now, pinned = surface(), PINNED.read_text()
    diff = "".join(difflib.unified_diff(pinned.splitlines(True), now.splitlines(True), "pinned", "now"))
    assert now == pinned, (
        "taskgate.tools / taskgate.testing changed. If that is the decision, regenerate the pin "
        "(python -m tests.unit.test_public_api --write) and say so in CHANGELOG.md:\n" + diff
    )


def test_the_pin_sees_a_change_of_signature() -> None:
    # The check reads signatures, not only names: a new parameter of ToolTester.start changes it.
    def start(self: object, tool: object, arguments: object, *, timeout: float = 1.0) -> None: ...

    original = taskgate.testing.ToolTester.start
    taskgate.testing.ToolTester.start = start  # type: ignore[method-assign,assignment]
    try:
        assert surface() != PINNED.read_text()
    finally:
        taskgate.testing.ToolTester.start = original  # type: ignore[method-assign]


if __name__ == "__main__":
    if sys.argv[1:] == ["--write"]:
        PINNED.write_text(surface())
        print(f"wrote {PINNED}")
    else:
        sys.stdout.write(surface())
