"""Build step: cut botocore's data down to what taskgate's clients use.

    python -m taskgate.adapters.botocore_trim [OUT_DIR]

Run with the botocore the deployment ships (layers/Makefile runs it against the
layer's site-packages). Writes OUT_DIR (default: ``_botocore_data`` beside
aws_clients) with:

- ``endpoints.json``: every partition whole (regions, defaults, variants), but only
  the entries of our services' endpoint prefixes;
- ``<service>/<version>/service-2.json``: the latest model, with only the
  operations in ``aws_clients.OPERATIONS`` (plus the endpoint-discovery operation,
  if the service has one), the shapes they reach, and no documentation;
- ``stamp.json``: the botocore version and the operations, so a runtime with another
  botocore (or another list) ignores the copy.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import botocore
from botocore.loaders import Loader

from .aws_clients import OPERATIONS, TRIMMED_DATA

_DOC_KEYS = ("documentation", "documentationUrl")


def _strip_docs(node: dict[str, Any]) -> None:
    for key in _DOC_KEYS:
        if isinstance(node.get(key), str):
            del node[key]


def _reach(name: str, shapes: dict[str, Any], seen: set[str]) -> None:
    if name in seen:
        return
    seen.add(name)
    shape = shapes[name]
    for key in ("member", "key", "value"):
        if key in shape:
            _reach(shape[key]["shape"], shapes, seen)
    for member in shape.get("members", {}).values():
        _reach(member["shape"], shapes, seen)


def trim_model(model: dict[str, Any], keep_ops: tuple[str, ...]) -> dict[str, Any]:
    missing = set(keep_ops) - set(model["operations"])
    if missing:
        raise SystemExit(f"botocore_trim: {model['metadata']['serviceId']} has no {sorted(missing)}")
    ops = {
        name: op
        for name, op in model["operations"].items()
        if name in keep_ops or op.get("endpointoperation")
    }
    seen: set[str] = set()
    for op in ops.values():
        for key in ("input", "output"):
            if key in op:
                _reach(op[key]["shape"], model["shapes"], seen)
        for error in op.get("errors", ()):
            _reach(error["shape"], model["shapes"], seen)
        _strip_docs(op)
    shapes = {name: shape for name, shape in model["shapes"].items() if name in seen}
    for shape in shapes.values():
        _strip_docs(shape)
        for member in shape.get("members", {}).values():
            _strip_docs(member)
    out = {k: v for k, v in model.items() if k not in ("operations", "shapes", *_DOC_KEYS)}
    return {**out, "operations": ops, "shapes": shapes}


def main(out: Path) -> None:
    loader = Loader(include_default_search_paths=False, extra_search_paths=[Loader.BUILTIN_DATA_PATH])
    prefixes = set()
    out.mkdir(parents=True, exist_ok=True)
    for service, keep_ops in OPERATIONS.items():
        version = loader.determine_latest_version(service, "service-2")
        model = loader.load_service_model(service, "service-2", version)
        prefixes.add(model["metadata"]["endpointPrefix"])
        target = out / service / version / "service-2.json"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(json.dumps(trim_model(model, keep_ops), separators=(",", ":")))
    endpoints = loader.load_data("endpoints")
    for partition in endpoints["partitions"]:
        partition["services"] = {k: v for k, v in partition["services"].items() if k in prefixes}
    (out / "endpoints.json").write_text(json.dumps(endpoints, separators=(",", ":")))
    stamp = {"botocore": botocore.__version__, "operations": {k: list(v) for k, v in OPERATIONS.items()}}
    (out / "stamp.json").write_text(json.dumps(stamp))
    size = sum(f.stat().st_size for f in out.rglob("*.json"))
    print(f"botocore_trim: {out} ({size:,} bytes) from botocore {botocore.__version__}", file=sys.stderr)


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else TRIMMED_DATA)
