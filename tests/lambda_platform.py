"""What Lambda's python3.13 runtime (Amazon Linux 2023 on arm64) can load: the wheel
tags a built layer was installed from, and the glibc symbol versions its native
libraries ask for. Read from the files themselves (the WHEEL metadata pip leaves in
each ``*.dist-info`` and the ELF ``.gnu.version_r`` section), with no tool to install.
"""

from __future__ import annotations

import pathlib
import re
import struct
from dataclasses import dataclass

# Amazon Linux 2023, which the python3.13 runtime runs on, has glibc 2.34.
LAMBDA_GLIBC = (2, 34)
EM_AARCH64 = 183
SHT_GNU_VERNEED = 0x6FFFFFFE
_MANYLINUX = re.compile(r"^manylinux_(\d+)_(\d+)_(\w+)$")
_LEGACY = {"manylinux1": (2, 5), "manylinux2010": (2, 12), "manylinux2014": (2, 17)}


def platform_glibc(platform: str, arch: str = "aarch64") -> tuple[int, int] | None:
    """The glibc a wheel's platform tag needs, () for a pure wheel, None if unusable."""
    if platform == "any":
        return (0, 0)
    match = _MANYLINUX.match(platform)
    if match and match[3] == arch:
        return (int(match[1]), int(match[2]))
    for legacy, version in _LEGACY.items():
        if platform == f"{legacy}_{arch}":
            return version
    return None


def loadable_tag(tag: str, arch: str = "aarch64") -> bool:
    """``cp311-abi3-manylinux_2_34_aarch64`` and the like: would Lambda load it?"""
    python, abi, platform = tag.split("-")
    needed = platform_glibc(platform, arch)
    python_ok = python in {"py3", "py2.py3", "cp313"} or (python.startswith("cp3") and abi == "abi3")
    return python_ok and needed is not None and needed <= LAMBDA_GLIBC


def wheel_tags(site: pathlib.Path) -> dict[str, list[str]]:
    """Each installed distribution's wheel tags (``Tag:`` lines of its WHEEL file)."""
    tags: dict[str, list[str]] = {}
    for wheel in site.glob("*.dist-info/WHEEL"):
        lines = wheel.read_text().splitlines()
        tags[wheel.parent.name] = [line.split(":", 1)[1].strip() for line in lines if line.startswith("Tag:")]
    return tags


@dataclass(frozen=True)
class ElfNeeds:
    machine: int
    glibc: tuple[int, int]  # the newest GLIBC_x.y symbol version it needs; (0, 0) if none


def elf_needs(path: pathlib.Path) -> ElfNeeds:
    """The machine and the newest glibc symbol version of a 64-bit little-endian ELF file."""
    data = path.read_bytes()
    if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        raise ValueError(f"{path} is not a 64-bit little-endian ELF file")
    machine = struct.unpack_from("<H", data, 18)[0]
    shoff = struct.unpack_from("<Q", data, 0x28)[0]
    shentsize, shnum = struct.unpack_from("<HH", data, 0x3A)
    sections = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize) for i in range(shnum)]
    newest = (0, 0)
    for _name, kind, _flags, _addr, offset, _size, link, info, _align, _entsize in sections:
        if kind != SHT_GNU_VERNEED:
            continue
        strtab = sections[link][4]
        entry = offset
        for _ in range(info):  # sh_info: the number of Verneed entries
            _version, count, _file, aux, next_entry = struct.unpack_from("<HHIII", data, entry)
            at = entry + aux
            for _ in range(count):
                _hash, _vflags, _other, name, next_aux = struct.unpack_from("<IHHII", data, at)
                end = data.index(b"\0", strtab + name)
                label = data[strtab + name : end].decode()
                match = re.fullmatch(r"GLIBC_(\d+)\.(\d+)(?:\.\d+)?", label)
                if match:
                    newest = max(newest, (int(match[1]), int(match[2])))
                at += next_aux
            entry += next_entry
    return ElfNeeds(machine, newest)


def problems(site: pathlib.Path, machine: int = EM_AARCH64) -> list[str]:
    """Everything in a built layer Lambda's runtime could not load."""
    found: list[str] = []
    for dist, tags in wheel_tags(site).items():
        if not tags or not any(loadable_tag(tag) for tag in tags):
            found.append(f"{dist}: wheel tags {tags} need more than Lambda has")
    for library in site.rglob("*.so*"):
        if not library.is_file() or library.read_bytes()[:4] != b"\x7fELF":
            continue
        needs = elf_needs(library)
        if needs.machine != machine:
            found.append(f"{library.relative_to(site)}: ELF machine {needs.machine}, not {machine}")
        if needs.glibc > LAMBDA_GLIBC:
            found.append(f"{library.relative_to(site)}: needs GLIBC_{needs.glibc[0]}.{needs.glibc[1]}")
    return found
