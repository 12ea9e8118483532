"""The longest plain call of a tool with an outputSchema within the clients' 10 rounds, at full
scale (issue 28): `make serve` (in Lambda mode, at the deployed 29 s) behind the API Gateway
stand-in (30 s cut), mcp 2.3.0's ``Client`` calling ``long_report`` (tests/fixture_tools.py)
plainly. It runs for about as long as what it measures (4.5 minutes); the e2e test
(tests/e2e/test_plain_rounds.py) measures the same scaled down to an 8 s cut.

    .venv/bin/python scripts/longest_plain_call.py [SECONDS ...]

Default: 270 (fits: 11 rounds of 25 s = 275 s) and 290 (does not: refused at once). Prints one
line per call: its seconds, the tools/call requests it took, and what it got.
"""

from __future__ import annotations

import json
import pathlib
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.apigw_front import running_front  # noqa: E402
from tests.e2e.local_server import run_setup, running_server  # noqa: E402

HOSTS = ROOT / "tests" / "e2e" / "hosts"
PYTHON = ROOT / ".tools" / "hosts" / "py-pai2" / "bin" / "python"


def main(seconds: list[float]) -> int:
    run_setup(HOSTS / "setup.sh", "hosts", timeout=1500)
    work = pathlib.Path(tempfile.mkdtemp(prefix="longest-plain-call-"))
    with (
        running_server(
            work / "server.log",
            TOOL_MODULES="taskgate_conformance,taskgate_tools,tests.fixture_tools",
            TASKGATE_LAMBDA="1",
        ) as url,
        running_front(url.removesuffix("/mcp"), count=len(seconds)) as fronts,
    ):
        procs = []
        for each, front in zip(seconds, fronts, strict=True):
            command = [
                str(PYTHON),
                str(HOSTS / "rounds_py.py"),
                "mcp2",
                f"{front.url}/mcp",
                "report",
                f"{each:g}",
                f"longest-{each:g}",
            ]
            procs.append(
                subprocess.Popen(command, stdout=subprocess.PIPE, text=True, env={"PYTHONPATH": str(HOSTS)})
            )
        started = time.monotonic()
        for each, front, proc in zip(seconds, fronts, procs, strict=True):
            out = json.loads(proc.communicate(timeout=each + 300)[0].splitlines()[-1])
            calls = [r for r in front.front.records if r.rpc == "tools/call"]
            cut = sum(1 for r in front.front.records if r.cut)
            got = (out.get("result") or {}).get("structured") or out.get("error", "")[:200]
            print(
                f"{each:g} s tool: {out.get('callSeconds')} s, {len(calls)} tools/call requests, {cut} cut: {got}",
                flush=True,
            )
        print(f"(all at once in {time.monotonic() - started:.0f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main([float(a) for a in sys.argv[1:]] or [270.0, 290.0]))
