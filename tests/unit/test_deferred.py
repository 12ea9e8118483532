"""What the API's init leaves to first use (the composition root builds each part on its
first use, ``taskgate.lazy``): tool modules, the 2025-11-25 era, the 2026 catalogue."""

from __future__ import annotations

import sys
import threading
import time
from pathlib import Path

import pytest

from taskgate.lazy import Lazy, once
from taskgate.protocol.era import Method, MethodRegistry
from taskgate.protocol.v2026.era import CATALOG_METHODS
from taskgate.protocol.wire.params import NoParams
from taskgate.root import Taskgate
from taskgate.testing.memory import Memory
from tests.fakes import World, unit_settings


def test_tool_modules_load_on_the_first_look(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "deferred_tools_mod.py").write_text(
        "from pydantic import BaseModel\n"
        "from taskgate.tools import tool\n"
        "class In(BaseModel):\n    x: int = 0\n"
        "@tool(description='Loaded late.')\n"
        "def late_tool(args: In, ctx) -> str:\n    return 'ok'\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    root = Taskgate(unit_settings(tool_modules=("deferred_tools_mod",)), Memory().ports())
    assert root.server.handle({"jsonrpc": "2.0", "id": 1, "method": "ping"}, {}, "anonymous").status == 200
    assert "deferred_tools_mod" not in sys.modules and not once.built(root, "tools")
    assert root.tools.get("late_tool") is not None
    assert "deferred_tools_mod" in sys.modules
    sys.modules.pop("deferred_tools_mod")


def test_a_misspelt_tool_module_still_fails_when_the_root_is_built() -> None:
    with pytest.raises(ModuleNotFoundError, match="no_such_tools_module"):
        Taskgate(unit_settings(tool_modules=("taskgate_tools", "no_such_tools_module")), Memory().ports())


def test_the_2025_era_is_built_by_the_first_request_that_speaks_it(world: World) -> None:
    assert world.mcp().request("tools/list", {})["result"]["tools"]
    assert once.built(world.root, "era2026") and not once.built(world.root, "era2025")
    init = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"},
        },
    }
    reply = world.server.handle(init, {}, "anonymous")
    assert reply.body is not None and reply.body["result"]["protocolVersion"] == "2025-11-25"
    assert once.built(world.root, "era2025")


def test_a_method_group_is_built_by_the_first_look_at_one_of_its_names() -> None:
    built: list[str] = []

    def build() -> list[Method]:
        built.append("group")
        return [
            Method("a/one", lambda c, p: {"one": 1}, NoParams),
            Method("a/two", lambda c, p: {}, NoParams),
        ]

    registry = MethodRegistry([Method("ping", lambda c, p: {}, NoParams)])
    registry.add_group(["a/one", "a/two"], build)
    assert registry.names() == ["ping", "a/one", "a/two"] and "a/two" in registry
    assert registry.get("ping") is not None and built == []
    method = registry.get("a/two")
    assert method is not None and method.name == "a/two" and built == ["group"]
    assert [m.name for m in registry] == ["ping", "a/one", "a/two"] and built == ["group"]
    with pytest.raises(ValueError, match="twice"):
        registry.add_group(["ping"], build)


def test_a_group_that_builds_other_methods_than_it_named_fails_loudly() -> None:
    registry = MethodRegistry()
    registry.add_group(["b/x"], lambda: [Method("b/y", lambda c, p: {}, NoParams)])
    with pytest.raises(RuntimeError, match="b/x"):
        registry.get("b/x")


def test_the_2026_catalog_is_built_by_its_first_request(world: World) -> None:
    era = world.root.era2026
    assert set(CATALOG_METHODS) <= set(era.methods.names())
    assert world.mcp().request("tools/list", {})["result"]["tools"]
    assert not any(group.built for group in era.methods._groups)
    assert world.mcp().request("resources/list", {})["result"]["resources"]
    assert all(group.built for group in era.methods._groups)


def test_a_lazy_value_is_built_once_however_many_threads_ask_first() -> None:
    calls: list[int] = []

    def build() -> object:
        calls.append(1)
        time.sleep(0.01)  # long enough for the other threads to arrive while it builds
        return object()

    lazy = Lazy(build)
    seen: list[object] = []
    threads = [threading.Thread(target=lambda: seen.append(lazy())) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(calls) == 1 and len({id(v) for v in seen}) == 1 and lazy.built


def test_a_build_that_fails_is_tried_again_by_the_next_ask() -> None:
    attempts: list[int] = []

    def build() -> str:
        attempts.append(1)
        if len(attempts) == 1:
            raise ConnectionError("first try fails")
        return "ok"

    lazy = Lazy(build)
    with pytest.raises(ConnectionError):
        lazy()
    assert not lazy.built
    assert lazy() == "ok" and lazy() == "ok" and len(attempts) == 2
