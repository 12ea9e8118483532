"""Shared bits of the benchmark suite: paths, environments, statistics, tables. Stdlib only."""

from __future__ import annotations

import math
import os
import re
import statistics
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
# The bench shares the unit tier's in-memory fakes (tests/fakes.py).
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
TOOLS = ROOT / ".tools" / "bench"
RESULTS = BENCH / "results"

PROJECT_PY = ROOT / ".venv" / "bin" / "python"
MCP_PY = TOOLS / "mcp" / "bin" / "python"
FASTMCP_PY = TOOLS / "fastmcp" / "bin" / "python"
LAYER_PY = TOOLS / "layer" / "bin" / "python"

TASKGATE_PATH = os.pathsep.join(str(ROOT / p) for p in ("layers/taskgate", "layers/tools", "functions/api"))
STATE_MACHINE_ARN = "arn:aws:states:us-east-1:123456789012:stateMachine:taskgate-task"


def base_env() -> dict[str, str]:
    """A clean environment: nothing from the caller's AWS or Python settings leaks in."""
    env = {k: os.environ[k] for k in ("PATH", "HOME", "LANG", "TMPDIR") if k in os.environ}
    env["PYTHONHASHSEED"] = "0"
    return env


def lambda_env() -> dict[str, str]:
    """What the ApiFunction's environment holds in a deployment (template.yaml Globals +
    the function's own variables), with fake credentials and no endpoint override."""
    return {
        **base_env(),
        "TASK_TABLE": "taskgate-tasks",
        "STATE_MACHINE_ARN": STATE_MACHINE_ARN,
        "RESULT_BUCKET": "taskgate-results-bench",
        "AWS_REGION": "us-east-1",
        "AWS_DEFAULT_REGION": "us-east-1",
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_SESSION_TOKEN": "testing",
        "POWERTOOLS_SERVICE_NAME": "taskgate",
        "POWERTOOLS_METRICS_NAMESPACE": "taskgate",
        "POWERTOOLS_TRACE_DISABLED": "true",
        "PYDANTIC_DISABLE_PLUGINS": "__all__",
        # The sample events (events/api_tools_call_task.json) call the example fixtures.
        "TOOL_MODULES": "taskgate_conformance,taskgate_tools",
        "PYTHONPATH": TASKGATE_PATH,
    }


def median(values: Sequence[float]) -> float:
    return statistics.median(values) if values else math.nan


def percentile(values: Sequence[float], q: float) -> float:
    """Nearest-rank percentile (with few runs, p90 is the second-largest or the max)."""
    if not values:
        return math.nan
    ordered = sorted(values)
    return ordered[max(0, math.ceil(q / 100 * len(ordered)) - 1)]


def p90(values: Sequence[float]) -> float:
    return percentile(values, 90)


def percentiles(seconds: Sequence[float]) -> dict[str, Any]:
    """Latencies in seconds as count and p50/p95/p99/max in milliseconds."""
    if not seconds:
        return {"count": 0}
    ms = {f"p{q}_ms": round(percentile(seconds, q) * 1000, 1) for q in (50, 95, 99)}
    return {"count": len(seconds), **ms, "max_ms": round(max(seconds) * 1000, 1)}


def ratio(a: float, b: float) -> float:
    return a / b if b and not math.isnan(a) and not math.isnan(b) else math.nan


def fmt(value: Any, digits: int = 1) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        if math.isnan(value):
            return "n/a"
        return f"{value:,.{digits}f}"
    if isinstance(value, int):
        return f"{value:,}"
    return str(value)


_NUMERIC = re.compile(r"[-+]?[\d,]*\.?\d+( / [-+]?[\d,]*\.?\d+)*|n/a|-|")


def table(title: str, headers: Sequence[str], rows: Iterable[Sequence[Any]], note: str = "") -> str:
    """Plain-text table: numeric columns right-aligned, text left-aligned."""
    cells = [[str(h) for h in headers]] + [[str(c) for c in row] for row in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]
    numeric = [
        i > 0 and all(_NUMERIC.fullmatch(r[i]) for r in cells[1:]) and any(r[i] for r in cells[1:])
        for i in range(len(headers))
    ]

    def line(row: Sequence[str]) -> str:
        parts = [c.rjust(w) if num else c.ljust(w) for c, w, num in zip(row, widths, numeric, strict=True)]
        return "  ".join(parts).rstrip()

    out = [title, "=" * len(title), line(cells[0]), line(["-" * w for w in widths])]
    out += [line(r) for r in cells[1:]]
    if note:
        out.append("")
        out += [f"  {n}" for n in note.strip().splitlines()]
    return "\n".join(out) + "\n"


def say(text: str = "") -> None:
    print(text, flush=True)


def progress(text: str) -> None:
    print(f"  .. {text}", file=sys.stderr, flush=True)
