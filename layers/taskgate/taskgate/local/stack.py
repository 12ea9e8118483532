"""taskgate's stack, for a project that holds only its tools: ``python -m taskgate.local.stack``.

A deployer's repository (``sam init --location <taskgate>/templates/taskgate-project``) has
its own small ``template.yaml`` that nests taskgate's as an ``AWS::Serverless::Application``
at ``.taskgate/template.yaml``. This writes that directory from the installed package, so
what deploys is the taskgate version the project pins and tests with:

    .taskgate/template.yaml                 taskgate's template; its ToolsLayer built from ../tools
    .taskgate/statemachines/, functions/    the state machine and the three functions
    .taskgate/layers/Makefile               taskgate's layer build, unchanged
    .taskgate/layers/taskgate/taskgate/     the installed package (the build leaves out local/
                                            and testing/, as it does here)
    .taskgate/requirements-sam.txt          the SAM CLI version this taskgate is built and tested with

Upgrading taskgate in a project is a new pin and ``make stack`` (this, again); the project's
own template.yaml, tools and tests are never touched. The files come from the wheel's
``taskgate/_stack`` (setup.py puts them there) or, in a checkout of taskgate, from the top
of the checkout, where they live.
"""

from __future__ import annotations

import argparse
import re
import shutil
import sys
from pathlib import Path

import taskgate

# The top-level files of taskgate's stack (setup.py copies the same list into the wheel).
STACK_FILES = (
    "template.yaml",
    "statemachines",
    "functions",
    # `make deploy` of a project: the same questions, only its answers saved.
    "scripts/deploy.py",
    "layers/Makefile",
    "layers/taskgate/requirements.txt",
    # The SAM CLI taskgate is built with: a project's `make build` installs it (.venv-sam).
    "requirements-sam.txt",
)
MARKER = ".written-by-taskgate"
PACKAGE = Path(taskgate.__file__).resolve().parent
_TOOLS_LAYER = re.compile(r"(?ms)^  ToolsLayer:\n.*?(?=^  \S)")


def source() -> Path:
    """Where the stack's files are: the installed wheel's copy, or this checkout's top."""
    bundled = PACKAGE / "_stack"
    if (bundled / "template.yaml").exists():
        return bundled
    for parent in PACKAGE.parents:
        if (parent / "statemachines" / "task.asl.json").exists() and (parent / "template.yaml").exists():
            return parent
    raise FileNotFoundError(
        "taskgate's stack files are missing: install taskgate from its wheel (make dist) or run from a checkout"
    )


def nested_template(text: str, tools: str) -> str:
    """taskgate's template with its ToolsLayer built from ``tools`` (relative to the written
    template): the project's tools directory, whose Makefile has ``build-ToolsLayer``."""
    blocks = _TOOLS_LAYER.findall(text)
    if len(blocks) != 1 or blocks[0].count("ContentUri: layers/") != 1:
        raise ValueError("template.yaml: expected one ToolsLayer with ContentUri: layers/")
    block = blocks[0].replace("ContentUri: layers/", f"ContentUri: {tools}")
    return text.replace(blocks[0], block)


def write(target: Path, *, tools: str = "../tools/") -> Path:
    """(Re)write ``target`` with this taskgate's stack; returns ``target``."""
    if target.exists():
        if not (target / MARKER).exists():
            raise FileExistsError(f"{target} exists and was not written by taskgate: not replacing it")
        shutil.rmtree(target)
    origin = source()
    for name in STACK_FILES:
        src, dest = origin / name, target / name
        dest.parent.mkdir(parents=True, exist_ok=True)
        if src.is_dir():
            shutil.copytree(src, dest, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy2(src, dest)
    template = target / "template.yaml"
    template.write_text(nested_template(template.read_text(), tools))
    shutil.copytree(
        PACKAGE,
        target / "layers" / "taskgate" / "taskgate",
        ignore=shutil.ignore_patterns("__pycache__", "_stack", "_botocore_data"),
    )
    (target / MARKER).write_text(f"taskgate {taskgate.__version__}\n")
    return target


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m taskgate.local.stack", description=__doc__.split("\n\n")[0]
    )
    commands = parser.add_subparsers(dest="command", required=True)
    out = commands.add_parser("write", help="write taskgate's stack into DIR (replacing an earlier one)")
    out.add_argument("dir", type=Path)
    out.add_argument("--tools", default="../tools/", help="the tools layer's directory, relative to DIR")
    commands.add_parser("source", help="print where the stack's files come from")
    args = parser.parse_args(argv)
    if args.command == "source":
        print(source())
        return 0
    written = write(args.dir, tools=args.tools)
    print(f"taskgate {taskgate.__version__}: wrote {written}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
