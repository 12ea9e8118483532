"""`make test`'s pytest run: the whole suite, with the end-to-end groups that mostly wait run
beside the rest instead of after it.

The suite spends most of its wall time waiting, not computing (a run on the 2-core machine:
about 12 CPU-minutes in 32 wall-minutes): Lambda containers starting under `sam local`, hosts
holding 45 s calls. Those groups (``BESIDE``) run in a second pytest process while the first
runs everything else; their output is kept and printed whole when they end, so the CI log
reads as before. The IAM check (tests/integration/test_iam_calls.py) must see every AWS call
both made, so it runs last, on its own, over the calls both recorded into one folder
(``TASKGATE_AWS_CALL_LOG``, which tests/conftest.py uses when it is set).

Everything the runs write to a temporary folder (pytest's ``tmp_path`` folders, the projects
the template tests make with their own virtual environments, the recorded calls, whatever a
tool or client puts under ``TMPDIR``) goes into one folder that is removed at the end: a run
writes nearly 1 GB there, and a machine that runs the suite again and again must not fill its
disk (a CI run failed with ENOSPC that way). ``TASKGATE_KEEP_TEST_TEMP=1`` keeps it.

Arguments go to both pytest runs (``make test PYTEST_ADDOPTS=…`` works too).
Exit status: non-zero if any of the three runs failed.
"""

from __future__ import annotations

import os
import pathlib
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
# Waiting-bound groups, in the order they run beside the rest. The hosts matrix and its
# sam-local case share the hosts' client install (tests/e2e/install_clients.sh locks it).
BESIDE = (
    "tests/e2e/test_sam_local_invoke.py",
    "tests/e2e/test_hosts.py",
    "tests/e2e/test_hosts_sam_local.py",
    # Lambda mode's own checks and issue 27's long calls at a 6 s function timeout: mostly
    # tools sleeping through their seconds.
    "tests/e2e/test_lambda_mode.py",
    "tests/e2e/test_right_by_default.py",
    # Issue 27's one real-time case: a 45 s tool's handle driven at the deployed 29 s.
    "tests/e2e/test_handles_in_few_turns.py",
    # Issue 28's plain calls in rounds: hosts waiting through tools' seconds and their rounds.
    "tests/e2e/test_plain_rounds.py",
)
IAM_CHECK = "tests/integration/test_iam_calls.py"
# What a fresh clone's full run adds at its peak, measured: .tools 2.6 GiB, .venv 0.9 GiB,
# the temporary folder 0.9 GiB, .aws-sam 0.2 GiB.
NEEDS_GIB = 5


def _pytest(
    args: list[str], env: dict[str, str], basetemp: pathlib.Path, **kw: object
) -> subprocess.Popen[bytes]:
    command = [sys.executable, "-m", "pytest", "-q", f"--basetemp={basetemp}", *args]
    return subprocess.Popen(command, cwd=ROOT, env=env, **kw)  # type: ignore[call-overload,no-any-return]


def _free_gib(path: pathlib.Path) -> float:
    return shutil.disk_usage(path).free / 2**30


def main(argv: list[str]) -> int:
    work = pathlib.Path(tempfile.mkdtemp(prefix="taskgate-test-"))
    free = _free_gib(work)
    print(f"test_all: {free:.1f} GiB free on {work.parent} before the run", flush=True)
    if free < NEEDS_GIB:
        print(
            f"test_all: WARNING: a full run writes about {NEEDS_GIB} GiB (the clients it installs "
            "under .tools, the template projects, sam build): expect ENOSPC failures",
            flush=True,
        )
    try:
        return _run(argv, work)
    finally:
        print(f"test_all: {_free_gib(work):.1f} GiB free before removing {work}", flush=True)
        if os.environ.get("TASKGATE_KEEP_TEST_TEMP") != "1":
            shutil.rmtree(work, ignore_errors=True)


def _run(argv: list[str], work: pathlib.Path) -> int:
    calls = work / "aws-calls"
    calls.mkdir()
    scratch = work / "tmp"
    scratch.mkdir()
    env = {**os.environ, "TASKGATE_AWS_CALL_LOG": str(calls), "TMPDIR": str(scratch)}
    beside_log = ROOT / "test-artifacts" / "beside.log"
    beside_log.parent.mkdir(exist_ok=True)
    started = time.monotonic()
    with beside_log.open("wb") as out:
        beside = _pytest([*BESIDE, *argv], env, work / "beside", stdout=out, stderr=subprocess.STDOUT)
        ignored = [f"--ignore={path}" for path in (*BESIDE, IAM_CHECK)]
        main_status = _pytest([*ignored, *argv], env, work / "main").wait()
        beside_status = beside.wait()
    took = time.monotonic() - started
    print(f"\n{'=' * 30} beside the rest ({', '.join(BESIDE)}) {'=' * 30}", flush=True)
    sys.stdout.buffer.write(beside_log.read_bytes())
    sys.stdout.flush()
    iam_status = _pytest([IAM_CHECK, *argv], env, work / "iam").wait()
    print(
        f"\ntest_all: main run exit {main_status}, beside exit {beside_status}, IAM check exit "
        f"{iam_status}; {took / 60:.1f} min for the first two together, "
        f"{(time.monotonic() - started) / 60:.1f} min in all",
        flush=True,
    )
    # With arguments that select a few tests, a run that collects none (exit 5) is no failure.
    passed = (0, 5) if argv else (0,)
    return 0 if all(status in passed for status in (main_status, beside_status, iam_status)) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
