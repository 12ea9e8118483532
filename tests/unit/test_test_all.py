"""`make test` leaves nothing behind in the temporary folder (scripts/test_all.py): a CI run
once failed with ENOSPC on a machine where earlier runs had each left about 1 GB there."""

from __future__ import annotations

import importlib.util
import pathlib
import sys
from types import ModuleType
from typing import Any

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]


def _script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("test_all_script", ROOT / "scripts" / "test_all.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


class _Done:
    def __init__(self, status: int) -> None:
        self.status = status

    def wait(self) -> int:
        return self.status


@pytest.fixture
def runs(tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch) -> tuple[ModuleType, list[dict[str, Any]]]:
    """test_all with its three pytest runs replaced by ones that write where a real run writes."""
    script = _script()
    seen: list[dict[str, Any]] = []

    def fake_pytest(args: list[str], env: dict[str, str], basetemp: pathlib.Path, **kw: Any) -> _Done:
        basetemp.mkdir(parents=True)
        (basetemp / "project").write_text("a template project's venv")
        (pathlib.Path(env["TMPDIR"]) / f"left-by-{basetemp.name}").write_text("a tool's scratch file")
        (pathlib.Path(env["TASKGATE_AWS_CALL_LOG"]) / f"calls-{basetemp.name}.jsonl").write_text("{}\n")
        seen.append({"env": env, "basetemp": basetemp})
        return _Done(script.statuses.get(basetemp.name, 0))

    monkeypatch.setattr(script, "_pytest", fake_pytest)
    monkeypatch.setattr(script, "ROOT", tmp_path)
    monkeypatch.setattr(script.tempfile, "tempdir", str(tmp_path / "system-tmp"))
    (tmp_path / "system-tmp").mkdir()
    script.statuses = {}  # type: ignore[attr-defined]
    return script, seen


def test_a_run_removes_everything_it_wrote_to_the_temporary_folder(
    runs: tuple[ModuleType, list[dict[str, Any]]], tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    script, seen = runs
    monkeypatch.delenv("TASKGATE_KEEP_TEST_TEMP", raising=False)
    assert script.main([]) == 0
    assert [s["basetemp"].name for s in seen] == ["beside", "main", "iam"]
    # Every run wrote under one folder, through TMPDIR too, and that folder is gone.
    work = seen[0]["basetemp"].parent
    assert all(pathlib.Path(s["env"]["TMPDIR"]).parent == work for s in seen)
    assert not work.exists()
    assert list((tmp_path / "system-tmp").iterdir()) == []


def test_a_failed_run_is_cleaned_up_too_and_still_fails(
    runs: tuple[ModuleType, list[dict[str, Any]]], tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    script, _ = runs
    monkeypatch.delenv("TASKGATE_KEEP_TEST_TEMP", raising=False)
    script.statuses["main"] = 1
    assert script.main([]) == 1
    assert list((tmp_path / "system-tmp").iterdir()) == []


def test_keep_test_temp_keeps_it_for_a_look(
    runs: tuple[ModuleType, list[dict[str, Any]]], monkeypatch: pytest.MonkeyPatch
) -> None:
    script, seen = runs
    monkeypatch.setenv("TASKGATE_KEEP_TEST_TEMP", "1")
    assert script.main([]) == 0
    work = seen[0]["basetemp"].parent
    assert (work / "tmp" / "left-by-main").read_text() == "a tool's scratch file"


@pytest.mark.parametrize(("free", "warned"), [(3.6, True), (40.0, False)])
def test_a_nearly_full_disk_is_named_before_the_run_and_enough_disk_is_not(
    free: float,
    warned: bool,
    runs: tuple[ModuleType, list[dict[str, Any]]],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    script, _ = runs
    monkeypatch.delenv("TASKGATE_KEEP_TEST_TEMP", raising=False)
    monkeypatch.setattr(script, "_free_gib", lambda path: free)
    script.main([])
    out = capsys.readouterr().out
    assert f"{free:.1f} GiB free" in out
    assert ("expect ENOSPC failures" in out) is warned and ("WARNING" in out) is warned
