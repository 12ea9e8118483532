"""What the API's init leaves to first use: tool modules (the registry imports them on its
first look) and the 2025-11-25 era (built by the first request that speaks it)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from taskgate.protocol.deferred import DeferredEra
from taskgate.protocol.era import Era
from taskgate.protocol.server import McpServer
from taskgate.tools.registry import ToolRegistry
from tests.fakes import World


def test_deferred_tool_modules_load_on_the_first_look(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "deferred_tools_mod.py").write_text(
        "from pydantic import BaseModel\n"
        "from taskgate.tools.registry import Tool\n"
        "from tests.deferred_registry import REGISTRY\n"
        "class In(BaseModel):\n    x: int = 0\n"
        "REGISTRY.add(Tool('late', 'Loaded late.', In, lambda a, c: 'ok'))\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    registry = ToolRegistry()
    monkeypatch.setitem(sys.modules, "tests.deferred_registry", type(sys)("tests.deferred_registry"))
    sys.modules["tests.deferred_registry"].REGISTRY = registry  # type: ignore[attr-defined]
    registry.defer(["deferred_tools_mod"])
    assert "deferred_tools_mod" not in sys.modules
    assert [t.name for t in registry] == ["late"]
    assert "deferred_tools_mod" in sys.modules
    sys.modules.pop("deferred_tools_mod")


def test_a_misspelt_tool_module_still_fails_at_init() -> None:
    with pytest.raises(ModuleNotFoundError, match="no_such_tools_module"):
        ToolRegistry().defer(["taskgate_tools", "no_such_tools_module"])


def test_the_2025_era_is_built_by_the_first_request_that_speaks_it(world: World) -> None:
    built: list[Era] = []
    era2026, era2025 = world.server.eras

    def build() -> Era:
        built.append(era2025)
        return era2025

    world.server = McpServer([era2026, DeferredEra(build)])
    assert world.mcp().request("tools/list", {})["result"]["tools"]
    assert built == []
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
    session = {"mcp-session-id": reply.headers["mcp-session-id"], "mcp-protocol-version": "2025-11-25"}
    listed = world.server.handle({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}, session, "anonymous")
    assert listed.body is not None and listed.body["result"]["tools"]
    assert built == [era2025]


def test_a_deferred_method_group_is_built_by_the_first_look_at_one_of_its_names() -> None:
    from taskgate.protocol.era import Method, MethodRegistry
    from taskgate.protocol.params import NoParams

    built: list[str] = []

    def build() -> list[Method]:
        built.append("group")
        return [
            Method("a/one", lambda c, p: {"one": 1}, NoParams),
            Method("a/two", lambda c, p: {}, NoParams),
        ]

    registry = MethodRegistry([Method("ping", lambda c, p: {}, NoParams)])
    registry.defer(["a/one", "a/two"], build)
    assert registry.names() == ["ping", "a/one", "a/two"] and "a/two" in registry
    assert registry.get("ping") is not None and built == []
    method = registry.get("a/two")
    assert method is not None and method.name == "a/two" and built == ["group"]
    assert [m.name for m in registry] == ["ping", "a/one", "a/two"] and built == ["group"]
    with pytest.raises(ValueError, match="twice"):
        registry.defer(["ping"], build)


def test_a_deferred_group_that_builds_other_methods_than_it_named_fails_loudly() -> None:
    from taskgate.protocol.era import Method, MethodRegistry
    from taskgate.protocol.params import NoParams

    registry = MethodRegistry()
    registry.defer(["b/x"], lambda: [Method("b/y", lambda c, p: {}, NoParams)])
    with pytest.raises(RuntimeError, match="b/x"):
        registry.get("b/x")


def test_the_2026_catalog_is_built_by_its_first_request(world: World) -> None:
    from taskgate.protocol.deferred import CATALOG_METHODS
    from taskgate.protocol.v2026 import Era2026

    era = Era2026(world.server.eras[0]._s)  # type: ignore[attr-defined]
    assert set(CATALOG_METHODS) <= set(era.methods.names())
    assert era.methods._deferred  # nothing of it built yet
    world.server = McpServer([era, world.server.eras[1]])
    assert world.mcp().request("resources/list", {})["result"]["resources"]
    assert not era.methods._deferred


def test_a_deferred_era_answers_for_the_era_it_builds(world: World) -> None:
    era2025 = world.server.eras[1]
    deferred = DeferredEra(lambda: era2025)
    assert not deferred.built
    assert deferred.version == "2025-11-25" and deferred.built  # asking builds it
    assert deferred._streams is era2025._streams  # type: ignore[attr-defined]
