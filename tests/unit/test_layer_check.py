"""A function whose layers were built for the other architecture fails its start saying so
(issue 20, item 6), instead of an ImportError from the first native module."""

from __future__ import annotations

import pathlib

import pytest

from taskgate.layer_check import check_layer_architecture, running_architecture


def test_layers_built_for_another_architecture_stop_the_start(tmp_path: pathlib.Path) -> None:
    (tmp_path / "taskgate.architecture").write_text("x86_64\n")
    (tmp_path / "tools.architecture").write_text("x86_64\n")
    check_layer_architecture(tmp_path, machine="x86_64")
    with pytest.raises(RuntimeError) as caught:
        check_layer_architecture(tmp_path, machine="aarch64")
    message = str(caught.value)
    assert "built for x86_64" in message and "runs on arm64" in message
    assert "make build ARCH=arm64" in message and "Architecture=x86_64" in message


def test_nothing_is_checked_outside_a_built_layer(tmp_path: pathlib.Path) -> None:
    check_layer_architecture(tmp_path, machine="aarch64")
    assert running_architecture("aarch64") == running_architecture("arm64") == "arm64"
    assert running_architecture("x86_64") == "x86_64"


def test_every_function_checks_before_its_first_native_import() -> None:
    root = pathlib.Path(__file__).resolve().parents[2]
    for handler in sorted((root / "functions").glob("*/*_handler.py")):
        lines = [line for line in handler.read_text().splitlines() if line.startswith(("import ", "from "))]
        imports = [line for line in lines if "__future__" not in line and line != "import gc"]
        assert imports[0] == "from taskgate.layer_check import check_layer_architecture", handler.name
        assert "check_layer_architecture()" in handler.read_text()
