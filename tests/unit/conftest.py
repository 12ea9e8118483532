"""The fast tier: hermetic. No network, no moto, no subprocess.

Connecting or binding a network socket fails the test; socket pairs (which an
event loop uses to wake itself) are local and stay allowed.
"""

from __future__ import annotations

import socket
import subprocess
from collections.abc import Iterator
from typing import Any

import pytest
from starlette.testclient import TestClient

from tests.fakes import World
from tests.mcp_client import Legacy, Mcp


class NetworkBlocked(RuntimeError):
    pass


def _refuse(*args: Any, **kwargs: Any) -> Any:
    raise NetworkBlocked("the unit tier is hermetic: no sockets, no subprocesses")


@pytest.fixture(autouse=True)
def _no_network(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("connect", "connect_ex", "bind"):
        monkeypatch.setattr(socket.socket, name, _refuse)
    monkeypatch.setattr(socket, "create_connection", _refuse)
    monkeypatch.setattr(socket, "getaddrinfo", _refuse)
    monkeypatch.setattr(subprocess, "Popen", _refuse)


@pytest.fixture
def world() -> World:
    return World()


@pytest.fixture
def mcp(world: World) -> Mcp:
    return world.mcp()


@pytest.fixture
def http(world: World) -> Iterator[TestClient]:
    """The Starlette app over the fakes, called in-process (no socket)."""
    app = world.root.app()
    with TestClient(app, base_url="http://localhost") as client:
        yield client


@pytest.fixture
def legacy(http: TestClient) -> Legacy:
    """A 2025-11-25 client with a session, over the app on the fakes."""
    client = Legacy(http)
    client.initialize()
    return client
