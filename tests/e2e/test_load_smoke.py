"""bench/load.py at a small N against its own local server: nothing errs, is lost or duplicated.

No timing assertions: the numbers depend on the machine; correctness does not.
"""

from __future__ import annotations

import json
import pathlib
import re
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.slow


def test_load_smoke_n20(tmp_path: pathlib.Path) -> None:
    out = tmp_path / "load.json"
    done = subprocess.run(
        [
            sys.executable,
            "bench/load.py",
            "--n",
            "20",
            "--out",
            str(out),
            "--server-log",
            str(tmp_path / "server.log"),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=180,
    )
    printed = done.stdout + done.stderr
    assert done.returncode == 0, printed
    summary = re.search(r"^SUMMARY n=20 (.*)$", done.stdout, re.MULTILINE)
    assert summary, printed
    counts = dict(re.findall(r"(\w+)=(\d+)", summary.group(1)))
    assert counts["errors"] == "0", printed
    assert counts["lost"] == "0", printed
    assert counts["duplicated"] == "0", printed
    report = json.loads(out.read_text())
    assert report["pass"] is True
    assert report["rounds"][0]["completed"] == 20
