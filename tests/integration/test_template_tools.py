"""template.yaml through the real tools: sam validate --lint, cfn-lint, sam build."""

from __future__ import annotations

import os
import pathlib
import subprocess
import sys

import pytest

from tests.lambda_platform import problems, wheel_tags

ROOT = pathlib.Path(__file__).resolve().parents[2]
BIN = pathlib.Path(sys.executable).parent


def _run(*args: str, **kwargs: object) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}", "SAM_CLI_TELEMETRY": "0"}
    return subprocess.run(args, cwd=ROOT, env=env, capture_output=True, text=True, timeout=600, **kwargs)  # type: ignore[call-overload]


def test_sam_validate_lint_is_clean() -> None:
    done = _run(str(BIN / "sam"), "validate", "--lint")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "is a valid SAM Template" in done.stdout + done.stderr


def test_cfn_lint_is_clean() -> None:
    done = _run(str(BIN / "cfn-lint"), "template.yaml")
    assert done.returncode == 0 and done.stdout.strip() == "", done.stdout + done.stderr


def _tree(path: pathlib.Path) -> dict[str, float]:
    return {str(p.relative_to(path)): p.stat().st_mtime for p in path.rglob("*")} if path.exists() else {}


def test_sam_build_succeeds(tmp_path: pathlib.Path) -> None:
    build = tmp_path / "build"
    # A developer's own build output must come through this test untouched.
    own_build = ROOT / ".aws-sam"
    before = _tree(own_build)
    done = _run(
        str(BIN / "sam"),
        "build",
        "--no-cached",
        "--build-dir",
        str(build),
        "--cache-dir",
        str(tmp_path / "cache"),
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert _tree(own_build) == before
    layer = build / "TaskgateLayer" / "python"
    assert (layer / "taskgate" / "protocol" / "server.py").exists()
    # Development-only code (moto patches, the dev authorizer, uvicorn) and the in-memory
    # ports of taskgate.testing never ship.
    assert not (layer / "taskgate" / "local").exists()
    assert not list(layer.rglob("taskgate/local*"))
    assert not (layer / "taskgate" / "testing").exists()
    assert not list(layer.rglob("taskgate/testing*"))
    # No pyOpenSSL: botocore's urllib3 would load it, and it imports cryptography at every
    # cold start (tests/integration/test_sign_in_cold_start.py relies on its absence).
    assert not (layer / "OpenSSL").exists()
    assert any(p.name.endswith("aarch64-linux-gnu.so") for p in (layer / "pydantic_core").iterdir())
    assert (build / "ToolsLayer" / "python" / "taskgate_conformance" / "tools.py").exists()
    assert (build / "ApiFunction" / "api_handler.py").exists()
    # What each layer's wheels were taken for, which the functions check at start.
    assert (layer / "taskgate.architecture").read_text().strip() == "arm64"
    assert (build / "ToolsLayer" / "python" / "tools.architecture").read_text().strip() == "arm64"
    _assert_ships_bytecode(layer)
    _assert_ships_bytecode(build / "ToolsLayer" / "python")
    # Every wheel and native library loads on Lambda's python3.13 runtime (AL2023:
    # glibc 2.34, arm64), and the newer manylinux tags were really considered.
    assert problems(layer) == [] and problems(build / "ToolsLayer" / "python") == []
    tags = wheel_tags(layer)
    (crypto,) = [dist for dist in tags if dist.startswith("cryptography-")]
    assert tags[crypto] == ["cp311-abi3-manylinux_2_34_aarch64"], tags[crypto]
    print(f"\nlayer wheels: {sorted(t for ts in tags.values() for t in ts if not t.endswith('-any'))}")
    # Python takes the shipped bytecode even when the source looks newer, as the
    # zip round trip may leave it: nothing is compiled at a cold start.
    (layer / "taskgate" / "clock.py").touch()
    loaded = subprocess.run(
        [sys.executable, "-v", "-c", "import taskgate.clock"],
        env={"PYTHONPATH": str(layer), "PYTHONDONTWRITEBYTECODE": "1", "PATH": os.environ["PATH"]},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert (
        f"code object from '{layer / 'taskgate' / '__pycache__' / 'clock.cpython-313.pyc'}'" in loaded.stderr
    )


def _assert_ships_bytecode(site: pathlib.Path) -> None:
    """Every module in a built layer has unchecked-hash bytecode for the runtime's
    Python, naming its /opt/python path (so tracebacks point where Lambda has it)."""
    import importlib.util
    import marshal

    sources = list(site.rglob("*.py"))
    assert sources
    tag = sys.implementation.cache_tag
    for source in sources:
        pyc = source.parent / "__pycache__" / f"{source.stem}.{tag}.pyc"
        assert pyc.exists(), f"no bytecode shipped for {source.relative_to(site)}"
        data = pyc.read_bytes()
        assert data[:4] == importlib.util.MAGIC_NUMBER
        assert int.from_bytes(data[4:8], "little") == 0b01, f"{pyc} is not unchecked-hash"
    sample = next(s for s in sources if s.name != "__init__.py")
    code = marshal.loads((sample.parent / "__pycache__" / f"{sample.stem}.{tag}.pyc").read_bytes()[16:])
    assert code.co_filename == f"/opt/python/{sample.relative_to(site)}"


@pytest.mark.parametrize("env", ["default", "dev", "prod"])
def test_samconfig_environments_validate(env: str) -> None:
    done = _run(str(BIN / "sam"), "validate", "--lint", "--config-env", env)
    assert done.returncode == 0, done.stdout + done.stderr


# ---------------------------------------------------------------- what a security team runs


def _suppressions(tool: str) -> dict[tuple[str, str], str]:
    """(resource, check) -> the reason written beside the suppression in template.yaml."""
    from tests.sam_translate import source

    found: dict[tuple[str, str], str] = {}
    for name, resource in source()["Resources"].items():
        meta = resource.get("Metadata", {})
        if tool == "checkov":
            for skip in meta.get("checkov", {}).get("skip", []):
                found[(name, skip["id"])] = str(skip.get("comment", "")).strip()
        else:
            lint = meta.get("cfn-lint", {})
            reasons = lint.get("reasons", {})
            for check in lint.get("config", {}).get("ignore_checks", []):
                found[(name, check)] = str(reasons.get(check, "")).strip()
    return found


def _print_suppressions(tool: str, found: dict[tuple[str, str], str]) -> None:
    print(f"\n{tool}: {len(found)} suppressions")
    for (name, check), reason in sorted(found.items()):
        print(f"  {check:12} {name:24} {reason}")


def test_checkov_finds_nothing_unsuppressed() -> None:
    import json

    checkov = ROOT / ".venv" / "scanners" / "bin" / "checkov"
    done = _run(
        str(checkov),
        "-f",
        "template.yaml",
        "--framework",
        "cloudformation",
        "--skip-download",
        "--compact",
        "-o",
        "json",
    )
    report = json.loads(done.stdout)
    summary = report.get("summary", report)
    failed = [
        f"{c['check_id']} {c['resource']}: {c['check_name']}"
        for c in report.get("results", {}).get("failed_checks", [])
    ]
    assert summary["failed"] == 0 and summary.get("parsing_errors", 0) == 0, "\n".join(failed)
    assert summary["passed"] > 0
    skipped = {
        (c["resource"].split(".", 1)[1], c["check_id"]): c.get("check_result", {}).get("suppress_comment", "")
        for c in report["results"]["skipped_checks"]
    }
    found = _suppressions("checkov")
    assert set(skipped) == set(found)
    assert all(found.values()), [k for k, v in found.items() if not v]
    print(
        f"\ncheckov: {summary['passed']} passed, {summary['failed']} failed, {summary['skipped']} suppressed"
    )
    _print_suppressions("checkov", found)


def test_aws_serverless_rules_find_nothing_unsuppressed() -> None:
    done = _run(str(BIN / "cfn-lint"), "--append-rules", "cfn_lint_serverless.rules", "--", "template.yaml")
    assert done.returncode == 0 and done.stdout.strip() == "", done.stdout + done.stderr
    found = _suppressions("cfn-lint")
    assert found and all(found.values()), [k for k, v in found.items() if not v]
    _print_suppressions("cfn-lint (with cfn-lint-serverless)", found)
