"""scripts/bootstrap.sh, which every make target runs first: two started at once in a fresh
clone (``make serve`` still installing when ``make walkthrough`` starts in another terminal)
must not both build .venv, which breaks pip mid-upgrade. A stand-in ``python3.13`` records
which bootstrap ran each step, so the test needs no network and no real install."""

from __future__ import annotations

import os
import pathlib
import shutil
import subprocess

ROOT = pathlib.Path(__file__).resolve().parents[2]

# -c (the version check) succeeds; -m venv makes a .venv whose python is this script again;
# any other -m (pip, the botocore trim) is logged with the bootstrap that ran it ($PPID), and
# takes a moment, so that two unserialised bootstraps overlap.
FAKE_PYTHON = """#!/usr/bin/env bash
case "$1" in
  -c) exit 0 ;;
  --version) echo "Python 3.13.0" ;;
  -m)
    if [ "$2" = venv ]; then mkdir -p "$3/bin" && cp "$0" "$3/bin/python"; exit 0; fi
    echo "$PPID start $2" >> "$FAKE_LOG"; sleep 0.3; echo "$PPID end $2" >> "$FAKE_LOG" ;;
esac
"""


def test_two_bootstraps_at_once_install_once(tmp_path: pathlib.Path) -> None:
    project = tmp_path / "project"
    (project / "scripts").mkdir(parents=True)
    shutil.copy(ROOT / "scripts" / "bootstrap.sh", project / "scripts" / "bootstrap.sh")
    for name in ("requirements-dev.txt", "requirements-scan.txt", "pyproject.toml"):
        (project / name).write_text("")
    (project / "layers" / "taskgate").mkdir(parents=True)
    (project / "layers" / "taskgate" / "requirements.txt").write_text("")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake = bin_dir / "python3.13"
    fake.write_text(FAKE_PYTHON)
    fake.chmod(0o755)
    log = tmp_path / "calls.log"
    env = {
        **os.environ,
        "PATH": f"{bin_dir}:{os.environ['PATH']}",
        "HOME": str(tmp_path),  # no pyenv Pythons found before the stand-in
        "FAKE_LOG": str(log),
    }

    runs = [
        subprocess.Popen(
            ["bash", "scripts/bootstrap.sh"], cwd=project, env=env, stdout=subprocess.PIPE, text=True
        )
        for _ in range(2)
    ]
    outputs = [run.communicate(timeout=60)[0] for run in runs]

    assert [run.returncode for run in runs] == [0, 0]
    assert sum(out.count("bootstrap: creating .venv") for out in outputs) == 1, outputs
    lines = [line.split(" ", 2) for line in log.read_text().splitlines()]
    assert len({pid for pid, _, _ in lines}) == 1, f"both bootstraps installed: {lines}"
    assert [step for _, event, step in lines if event == "start"] == [
        "pip",  # --upgrade pip
        "pip",  # requirements-dev.txt
        "pip",  # -e .[local]
        "taskgate.adapters.botocore_trim",
        "pip",  # the scanners' venv: --upgrade pip
        "pip",  # requirements-scan.txt
    ]
    assert (project / ".venv" / ".installed").exists()
