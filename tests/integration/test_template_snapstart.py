"""`sam validate --lint` and cfn-lint are clean with SnapStart on and with it off.

Both tools read Parameter defaults, so each run gets a copy of template.yaml whose
SnapStart default is the value under test (beside links to the code it references)."""

from __future__ import annotations

import os
import pathlib
import re
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
BIN = pathlib.Path(sys.executable).parent


def _copy(tmp: pathlib.Path, snapstart: str, architecture: str) -> pathlib.Path:
    text = (ROOT / "template.yaml").read_text()
    text, n = re.subn(
        r'(\n  SnapStart:\n    Type: String\n    Default: )"(true|false)"', rf'\1"{snapstart}"', text
    )
    assert n == 1
    text, n = re.subn(
        r"(\n  Architecture:\n    Type: String\n    Default: )\w+", rf"\g<1>{architecture}", text
    )
    assert n == 1
    for name in ("functions", "layers", "statemachines"):
        (tmp / name).symlink_to(ROOT / name)
    (tmp / "template.yaml").write_text(text)
    return tmp / "template.yaml"


@pytest.mark.parametrize("architecture", ["arm64", "x86_64"])
@pytest.mark.parametrize("snapstart", ["true", "false"])
def test_validate_and_lint_clean(tmp_path: pathlib.Path, snapstart: str, architecture: str) -> None:
    template = _copy(tmp_path, snapstart, architecture)
    env = {**os.environ, "SAM_CLI_TELEMETRY": "0", "AWS_DEFAULT_REGION": "us-east-1"}
    done = subprocess.run(
        [str(BIN / "sam"), "validate", "--lint", "-t", str(template)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0 and "is a valid SAM Template" in done.stdout + done.stderr, (
        done.stdout + done.stderr
    )
    done = subprocess.run(
        [str(BIN / "cfn-lint"), str(template)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0 and done.stdout.strip() == "", done.stdout + done.stderr
