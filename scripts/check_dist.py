"""Check a release's sdist and wheel before anyone installs them: ``python scripts/check_dist.py dist``.

    python scripts/check_dist.py DIST [--install] [--tag vX.Y.Z --repository URL]

1. one sdist and one wheel, both of this checkout's version (taskgate.__version__, which the
   CLI, the project template's pin and the release tag must equal);
2. the wheel's metadata is valid core metadata (as PyPI validates it, with ``packaging``) and
   says what a user needs: a summary, Python >= 3.12, the README as markdown, where the
   repository and the changelog are, the layer's requirements as its dependencies and the
   local server's as the ``local`` extra;
3. the wheel holds taskgate (with ``taskgate.tools``, ``taskgate.testing`` and the local server),
   the ``taskgate`` command, both ``py.typed`` markers and taskgate's stack (every file of
   STACK_FILES under ``taskgate/_stack``), and no tests, caches or generated data;
4. a wheel built from the sdist alone has exactly the same files (the sdist is complete);
5. with ``--install``: a fresh venv installs the wheel with its ``local`` extra, and there
   ``taskgate --version``, the tool API and the stack's files answer;
6. with ``--tag`` and ``--repository`` (the publishing workflow): the tag is ``v<version>``, the
   package names this repository, and the CHANGELOG has a section for this version.

Exit 1 naming every problem found. The publishing workflow runs it before uploading; CI runs it
on every ``make dist`` (tests/e2e/test_project_template.py).
"""

from __future__ import annotations

import argparse
import email.parser
import subprocess
import sys
import tarfile
import tempfile
import venv
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "layers" / "taskgate"), str(ROOT / "cli")]

import taskgate_cli  # noqa: E402

import taskgate  # noqa: E402
from taskgate.local.stack import STACK_FILES  # noqa: E402

# Modules a user imports or runs, which the wheel must hold.
MODULES = (
    "taskgate/__init__.py",
    "taskgate/py.typed",
    "taskgate/tools/__init__.py",
    "taskgate/testing/__init__.py",
    "taskgate/local/__main__.py",
    "taskgate/local/stack.py",
    "taskgate/local/cold_import.py",
    "taskgate_cli/app.py",
    "taskgate_cli/smoke.py",
    "taskgate_cli/deployed.py",
    "taskgate_cli/py.typed",
)
NEVER = ("tests/", "__pycache__", ".pyc", "_botocore_data/", ".venv", "conftest.py")


def _members(path: Path) -> list[str]:
    if path.suffix == ".whl":
        with zipfile.ZipFile(path) as wheel:
            return wheel.namelist()
    with tarfile.open(path) as sdist:
        return [m.name.split("/", 1)[1] for m in sdist.getmembers() if m.isfile() and "/" in m.name]


def _stack_files(members: list[str], prefix: str) -> list[str]:
    """STACK_FILES entries with nothing under ``prefix`` in ``members``."""
    return [name for name in STACK_FILES if not any(m.startswith(prefix + name) for m in members)]


def check_metadata(wheel: Path) -> list[str]:
    from packaging.metadata import Metadata

    with zipfile.ZipFile(wheel) as archive:
        text = archive.read(f"taskgate-{taskgate.__version__}.dist-info/METADATA").decode()
    problems: list[str] = []
    try:
        meta = Metadata.from_email(text, validate=True)
    except Exception as exc:  # ExceptionGroup of every invalid field
        return [f"metadata is invalid: {exc!r}"]
    urls = meta.project_urls or {}
    if str(meta.version) != taskgate.__version__:
        problems.append(f"metadata version {meta.version} is not {taskgate.__version__}")
    if not meta.summary:
        problems.append("metadata: no summary")
    if str(meta.requires_python) != ">=3.12":
        problems.append(f"metadata: Requires-Python {meta.requires_python}, not >=3.12")
    if meta.description_content_type != "text/markdown" or not (meta.description or "").startswith(
        "# taskgate"
    ):
        problems.append("metadata: the README is not the description (text/markdown)")
    for key in ("Repository", "Changelog"):
        if not urls.get(key, "").startswith("https://"):
            problems.append(f"metadata: no {key} URL")
    required = {str(r) for r in meta.requires_dist or []}
    layer = [
        line.split("#")[0].strip()
        for line in (ROOT / "layers" / "taskgate" / "requirements.txt").read_text().splitlines()
        if line.split("#")[0].strip()
    ]
    if not all(any(r.replace(" ", "").startswith(_name(line)) for r in required) for line in layer):
        problems.append(f"metadata: the layer's requirements are not all dependencies: {sorted(required)}")
    if "local" not in (meta.provides_extra or []):
        problems.append("metadata: no `local` extra (the local server)")
    headers = email.parser.Parser().parsestr(text)
    if headers.get("Name") != "taskgate":
        problems.append(f"metadata: name {headers.get('Name')}")
    return problems


def _name(requirement: str) -> str:
    for stop in "[<>=!~; ":
        requirement = requirement.split(stop)[0]
    return requirement


def check_contents(wheel: Path, sdist: Path) -> list[str]:
    problems: list[str] = []
    files = _members(wheel)
    problems += [f"wheel: no {m}" for m in MODULES if m not in files]
    problems += [f"wheel: no taskgate/_stack/{n}" for n in _stack_files(files, "taskgate/_stack/")]
    problems += [f"wheel: holds {m}" for m in files if any(bad in m for bad in NEVER)]
    in_sdist = _members(sdist)
    problems += [f"sdist: no {n}" for n in _stack_files(in_sdist, "")]
    problems += [
        f"sdist: no {n}"
        for n in ("setup.py", "pyproject.toml", "README.md", "CHANGELOG.md")
        if n not in in_sdist
    ]
    problems += [f"sdist: holds {m}" for m in in_sdist if any(bad in m for bad in NEVER)]
    return problems


def check_rebuild(wheel: Path, sdist: Path) -> list[str]:
    """A wheel built from the sdist alone holds what the release's wheel holds."""
    with tempfile.TemporaryDirectory() as out:
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "pip",
                "wheel",
                "-q",
                "--no-deps",
                "--no-build-isolation",
                "-w",
                out,
                str(sdist),
            ],
            capture_output=True,
            text=True,
            timeout=600,
        )
        if done.returncode != 0:
            return [f"sdist: building a wheel from it failed: {done.stderr[-1500:]}"]
        [rebuilt] = Path(out).glob("*.whl")
        ours, theirs = set(_members(wheel)), set(_members(rebuilt))
    if ours != theirs:
        return [
            f"sdist: its wheel differs: missing {sorted(ours - theirs)[:10]}, extra {sorted(theirs - ours)[:10]}"
        ]
    return []


def check_install(wheel: Path) -> list[str]:
    """A fresh venv: the wheel with its local extra, then what a project runs first."""
    with tempfile.TemporaryDirectory() as home:
        venv.create(home, with_pip=True)
        bin_dir = Path(home) / "bin"
        install = subprocess.run(
            [str(bin_dir / "python"), "-m", "pip", "install", "-q", f"{wheel}[local]"],
            capture_output=True,
            text=True,
            timeout=900,
        )
        if install.returncode != 0:
            return [f"install: {install.stderr[-1500:]}"]
        runs = {
            "taskgate --version": [str(bin_dir / "taskgate"), "--version"],
            "the tool API": [str(bin_dir / "python"), "-c", "import taskgate.tools, taskgate.testing"],
            "the stack": [str(bin_dir / "python"), "-m", "taskgate.local.stack", "source"],
        }
        problems = []
        for what, command in runs.items():
            done = subprocess.run(command, capture_output=True, text=True, timeout=120, cwd=home)
            if done.returncode != 0:
                problems.append(f"install: {what} failed: {done.stderr[-800:]}")
            elif what == "the stack" and not done.stdout.strip().endswith("site-packages/taskgate/_stack"):
                problems.append(f"install: the stack comes from {done.stdout.strip()}, not the wheel")
            elif what == "taskgate --version" and taskgate.__version__ not in done.stdout:
                problems.append(f"install: taskgate --version says {done.stdout.strip()}")
        return problems


def release_problems(tag: str, repository: str, changelog: str | None = None) -> list[str]:
    """What stops a release from tag ``tag`` in ``repository`` (an https URL)."""
    import re
    import tomllib

    version = taskgate.__version__
    problems = []
    if tag != f"v{version}":
        problems.append(f"the tag {tag} is not v{version} (taskgate.__version__)")
    named = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["urls"]["Repository"]
    if named.rstrip("/") != repository.rstrip("/"):
        problems.append(f"pyproject.toml's Repository is {named}, not {repository}: its links would be wrong")
    text = changelog if changelog is not None else (ROOT / "CHANGELOG.md").read_text()
    if not re.search(rf"^## +\[?{re.escape(version)}\b", text, re.M):
        problems.append(f"CHANGELOG.md has no section for {version} (rename its Unreleased section)")
    return problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("dist", type=Path)
    parser.add_argument("--install", action="store_true", help="also install the wheel in a fresh venv")
    parser.add_argument("--tag", help="the release's git tag (the publishing workflow's)")
    parser.add_argument("--repository", help="the repository's URL (the publishing workflow's)")
    args = parser.parse_args(argv)
    version = taskgate.__version__
    wheels, sdists = sorted(args.dist.glob("*.whl")), sorted(args.dist.glob("*.tar.gz"))
    expected = (
        [args.dist / f"taskgate-{version}-py3-none-any.whl"],
        [args.dist / f"taskgate-{version}.tar.gz"],
    )
    if (wheels, sdists) != expected:
        print(
            f"FAIL expected {[str(p) for e in expected for p in e]}, found {[str(p) for p in wheels + sdists]}"
        )
        return 1
    if taskgate_cli.__version__ != version:
        print(f"FAIL taskgate_cli.__version__ {taskgate_cli.__version__} is not taskgate's {version}")
        return 1
    [wheel], [sdist] = wheels, sdists
    checks = {
        "metadata": lambda: check_metadata(wheel),
        "contents": lambda: check_contents(wheel, sdist),
        "sdist rebuilds the wheel": lambda: check_rebuild(wheel, sdist),
    }
    if args.install:
        checks["fresh-venv install"] = lambda: check_install(wheel)
    if args.tag or args.repository:
        checks["release"] = lambda: release_problems(args.tag or "", args.repository or "")
    failed = 0
    for name, check in checks.items():
        problems = check()
        failed += bool(problems)
        print(f"{'ok  ' if not problems else 'FAIL'} {name}" + "".join(f"\n     {p}" for p in problems))
    print(f"taskgate {version}: {wheel.name}, {sdist.name}: {len(checks) - failed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
