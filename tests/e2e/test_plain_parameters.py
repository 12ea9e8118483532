"""Plain typed parameters against the real thing (issue 31, item 2): FastMCP 4.2.3 itself makes
the eight signatures' inputSchemas (tests/fastmcp_schemas.py, in a venv of its own under
.tools/) and they equal the recorded ones the unit tier checks taskgate against; and a tool of
plain parameters, served by the local server, is listed and called by the released Python SDK
(mcp 1.30.0)."""

from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys
from collections.abc import Iterator

import pytest

from tests import signature_examples
from tests.e2e.local_server import ROOT, run_setup, running_server

pytestmark = pytest.mark.slow

FASTMCP = ROOT / ".tools" / "fastmcp-4.2.3"
RECORDED = json.loads((ROOT / "tests" / "fastmcp_schemas.json").read_text())
CLIENT = ROOT / ".tools" / "clients2025" / "py" / "bin" / "python"

# mcp 1.30.0: list the tools, then call sig_annotated and sig_nested with their arguments.
SDK_CLIENT = r"""
import asyncio, json, sys
from mcp import ClientSession
from mcp.client.streamable_http import streamablehttp_client

async def main(url):
    async with streamablehttp_client(url) as (read, write, _):
        async with ClientSession(read, write) as session:
            await session.initialize()
            listed = {t.name: t.inputSchema for t in (await session.list_tools()).tools}
            called = {}
            for name, arguments in [("sig_annotated", {"query": "tasks", "top": 3}),
                                    ("sig_nested", {"name": "Ada", "address": {"street": "Rue"}})]:
                result = await session.call_tool(name, arguments)
                called[name] = {"isError": result.isError, "text": result.content[0].text}
            print(json.dumps({"listed": listed, "called": called}))

asyncio.run(main(sys.argv[1]))
"""


@pytest.fixture(scope="module")
def fastmcp_python() -> pathlib.Path:
    python = FASTMCP / "bin" / "python"
    if subprocess.run([str(python), "-c", "import fastmcp"], capture_output=True).returncode != 0:
        base = getattr(sys, "_base_executable", sys.executable)
        subprocess.run([base, "-m", "venv", "--clear", str(FASTMCP)], check=True)
        subprocess.run([str(python), "-m", "pip", "install", "-q", "fastmcp==4.2.3"], check=True, timeout=600)
    return python


def test_fastmcp_4_2_3_makes_the_recorded_schemas(fastmcp_python: pathlib.Path) -> None:
    done = subprocess.run(
        [str(fastmcp_python), "tests/fastmcp_schemas.py"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    live = json.loads(done.stdout)
    assert live == RECORDED, (
        "FastMCP's schemas moved: rerun tests/fastmcp_schemas.py into tests/fastmcp_schemas.json"
    )
    print(f"\nFastMCP {live['fastmcp']}, the eight signatures:")
    for name, schema in live["schemas"].items():
        print(f"  {name:12} {json.dumps(schema, sort_keys=True)}")


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    run_setup(ROOT / "tests" / "e2e" / "clients2025" / "setup.sh", "clients2025")
    log = tmp_path_factory.mktemp("plain") / "server.log"
    with running_server(
        log,
        TOOL_MODULES="tests.signature_tools",
        PYTHONPATH=f"{ROOT}{os.pathsep}{ROOT / 'layers' / 'taskgate'}",
    ) as url:
        yield url


def test_the_python_sdk_lists_and_calls_a_tool_of_plain_parameters(served: str) -> None:
    done = subprocess.run(
        [str(CLIENT), "-c", SDK_CLIENT, served], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr[-3000:]
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    for name in ("annotated", "nested"):
        listed = signature_examples.without_titles(seen["listed"][f"sig_{name}"])
        assert listed == RECORDED["schemas"][name], name
    assert seen["called"]["sig_annotated"] == {"isError": False, "text": '{"query": "tasks", "top": 3}'}
    assert json.loads(seen["called"]["sig_nested"]["text"]) == {
        "address": {"city": "Paris", "street": "Rue"},
        "name": "Ada",
    }
