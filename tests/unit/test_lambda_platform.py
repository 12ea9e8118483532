"""The checker the layer build's test uses: wheel tags and ELF glibc needs against
what Lambda's python3.13 runtime (Amazon Linux 2023, glibc 2.34, arm64) can load."""

from __future__ import annotations

import pathlib

import pytest

from tests.lambda_platform import EM_AARCH64, elf_needs, loadable_tag, problems


@pytest.mark.parametrize(
    ("tag", "ok"),
    [
        ("py3-none-any", True),
        ("cp313-cp313-manylinux_2_17_aarch64", True),
        ("cp311-abi3-manylinux2014_aarch64", True),
        ("cp311-abi3-manylinux_2_28_aarch64", True),
        ("cp311-abi3-manylinux_2_34_aarch64", True),
        ("cp311-abi3-manylinux_2_39_aarch64", False),  # newer glibc than AL2023's
        ("cp313-cp313-manylinux_2_17_x86_64", False),  # another machine
        ("cp312-cp312-manylinux_2_17_aarch64", False),  # another Python
        ("cp313-cp313-musllinux_1_2_aarch64", False),
    ],
)
def test_wheel_tags(tag: str, ok: bool) -> None:
    assert loadable_tag(tag) is ok


def test_elf_needs_reads_the_machine_and_the_newest_glibc_version() -> None:
    from cryptography.hazmat.bindings import _rust

    library = pathlib.Path(_rust.__file__)
    needs = elf_needs(library)
    assert needs.machine != EM_AARCH64  # this machine's own build (x86_64)
    assert (2, 17) <= needs.glibc <= (2, 40)


def test_a_site_with_a_foreign_library_has_problems(tmp_path: pathlib.Path) -> None:
    from cryptography.hazmat.bindings import _rust

    dist = tmp_path / "thing-1.0.dist-info"
    dist.mkdir()
    (dist / "WHEEL").write_text("Wheel-Version: 1.0\nTag: cp313-cp313-manylinux_2_39_aarch64\n")
    (tmp_path / "thing.so").write_bytes(pathlib.Path(_rust.__file__).read_bytes())
    found = problems(tmp_path)
    assert any("wheel tags" in p for p in found) and any("ELF machine" in p for p in found)
