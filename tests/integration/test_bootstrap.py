"""scripts/bootstrap.sh, which every make target runs first: two started at once in a fresh
clone (``make serve`` still installing when ``make walkthrough`` starts in another terminal)
must not both build .venv, which breaks pip mid-upgrade; and ``make serve`` installs the local
server only, never the CI toolchain ``make test`` adds. A stand-in ``python3.13`` records
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
    shift; echo "$PPID start $*" >> "$FAKE_LOG"; sleep 0.3; echo "$PPID end $1" >> "$FAKE_LOG" ;;
esac
"""


def _checkout(tmp_path: pathlib.Path) -> tuple[pathlib.Path, dict[str, str], pathlib.Path]:
    project = tmp_path / "project"
    (project / "scripts").mkdir(parents=True)
    shutil.copy(ROOT / "scripts" / "bootstrap.sh", project / "scripts" / "bootstrap.sh")
    for name in (
        "requirements-dev.txt",
        "requirements-sam.txt",
        "requirements-scan.txt",
        "pyproject.toml",
        "setup.py",
    ):
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
    return project, env, log


def _steps(log: pathlib.Path) -> list[tuple[str, str]]:
    """(bootstrap pid, the -m command and its arguments) of each step started."""
    lines = [line.split(" ", 2) for line in log.read_text().splitlines()]
    return [(pid, step) for pid, event, step in lines if event == "start"]


def _bootstrap(project: pathlib.Path, env: dict[str, str], need: str) -> str:
    done = subprocess.run(
        ["bash", "scripts/bootstrap.sh", need],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_two_bootstraps_at_once_install_once(tmp_path: pathlib.Path) -> None:
    project, env, log = _checkout(tmp_path)

    runs = [
        subprocess.Popen(
            ["bash", "scripts/bootstrap.sh"], cwd=project, env=env, stdout=subprocess.PIPE, text=True
        )
        for _ in range(2)
    ]
    outputs = [run.communicate(timeout=60)[0] for run in runs]

    assert [run.returncode for run in runs] == [0, 0]
    assert sum(out.count("bootstrap: creating .venv") for out in outputs) == 1, outputs
    steps = _steps(log)
    assert len({pid for pid, _ in steps}) == 1, f"both bootstraps installed: {steps}"
    assert [step.split()[0] for _, step in steps] == [
        "pip",  # --upgrade pip
        "pip",  # requirements-dev.txt with -e .[local]
        "taskgate.adapters.botocore_trim",
        "pip",  # the scanners' venv: --upgrade pip
        "pip",  # requirements-scan.txt
    ]
    assert (project / ".venv" / ".installed-test").exists()


def test_serving_installs_the_server_only_and_testing_adds_the_toolchain(tmp_path: pathlib.Path) -> None:
    project, env, log = _checkout(tmp_path)

    _bootstrap(project, env, "serve")
    served = [step for _, step in _steps(log)]
    assert served == [
        "pip install -q --upgrade pip",
        "pip install -q -e .[local]",
        "taskgate.adapters.botocore_trim",
    ]
    assert not (project / ".venv" / "scanners").exists()
    assert _bootstrap(project, env, "serve") == ""  # once is enough

    out = _bootstrap(project, env, "test")
    assert "creating .venv" not in out  # the server's venv, completed
    added = [step for _, step in _steps(log)][len(served) :]
    assert added[0] == "pip install -q -r requirements-dev.txt -e .[local]"
    assert added[-1] == "pip install -q -r requirements-scan.txt"
    assert (project / ".venv" / "scanners").is_dir()
    assert _bootstrap(project, env, "serve") == "" and _bootstrap(project, env, "test") == ""
