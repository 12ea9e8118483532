"""The IAM check's recording (taskgate/local/aws_calls.py): on for the integration and
end-to-end tiers, whose AWS calls tests/integration/test_iam_calls.py checks last, after
every other test of the run, and prints as a table at the end of the run."""

from __future__ import annotations

import os
import pathlib
import shutil
import tempfile

import pytest

RECORDED_TIERS = ("integration", "e2e")
IAM_TEST = "test_iam_calls.py"
CALLS_DIR = pytest.StashKey[pathlib.Path]()
# A folder this run made for itself (no test_all.py around it): removed when the run ends, or
# every `pytest tests/e2e/…` by hand would leave its recorded calls in /tmp for good.
OWN_CALLS_DIR = pytest.StashKey[pathlib.Path]()
REPORT = pytest.StashKey[str]()


def _tier(item: pytest.Item) -> str:
    parts = pathlib.Path(str(item.fspath)).parts
    return parts[parts.index("tests") + 1] if "tests" in parts else ""


def pytest_collection_modifyitems(
    session: pytest.Session, config: pytest.Config, items: list[pytest.Item]
) -> None:
    if not any(_tier(i) in RECORDED_TIERS for i in items):
        return
    from taskgate.local import aws_calls

    # scripts/test_all.py runs the suite as several pytest processes that record into one
    # folder it names, so the IAM check, run last, sees every call.
    given = os.environ.get(aws_calls.ENV)
    directory = pathlib.Path(given) if given else pathlib.Path(tempfile.mkdtemp(prefix="taskgate-aws-calls-"))
    config.stash[CALLS_DIR] = directory
    if not given:
        config.stash[OWN_CALLS_DIR] = directory
    # The servers the e2e tests start record into the same folder (they call install_from_env).

    os.environ[aws_calls.ENV] = str(directory)
    aws_calls.install(directory)
    aws_calls.active = False
    # Checked last: after everything whose calls it checks.
    items.sort(key=lambda i: pathlib.Path(str(i.fspath)).name == IAM_TEST)


def pytest_runtest_setup(item: pytest.Item) -> None:
    if CALLS_DIR in item.config.stash:
        from taskgate.local import aws_calls

        # Unit tests use canned clients and made-up names: never theirs.
        aws_calls.active = _tier(item) in RECORDED_TIERS


def pytest_unconfigure(config: pytest.Config) -> None:
    if OWN_CALLS_DIR in config.stash:
        shutil.rmtree(config.stash[OWN_CALLS_DIR], ignore_errors=True)


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter, config: pytest.Config) -> None:
    if REPORT in config.stash:
        terminalreporter.write_sep("=", "IAM: every AWS call against its function's policy")
        terminalreporter.write_line(config.stash[REPORT])
