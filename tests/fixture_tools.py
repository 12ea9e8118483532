"""Tools that exist only for the test suite. Importing this module registers them."""

from __future__ import annotations

from pydantic import BaseModel, Field

from taskgate.tools import ToolContext, tool


class BigResultInput(BaseModel):
    kilobytes: int = Field(ge=1, le=16384)


@tool(description="Return a text result of the given size (tests the S3 offload).", task_support="required")
def big_result(args: BigResultInput, ctx: ToolContext) -> str:
    # Distinct lines, so a truncated or reordered result would not compare equal.
    line = "0123456789abcdef" * 4 + "\n"
    lines = [f"{i:08d}:{line}" for i in range(args.kilobytes * 1024 // (len(line) + 9) + 1)]
    return "".join(lines)[: args.kilobytes * 1024]


class QuietInput(BaseModel):
    seconds: float = Field(ge=0, le=60)


@tool(description="Work without reporting progress.", task_support="required")
def quiet_work(args: QuietInput, ctx: ToolContext) -> str:
    import time

    time.sleep(args.seconds)
    return "quiet done"
