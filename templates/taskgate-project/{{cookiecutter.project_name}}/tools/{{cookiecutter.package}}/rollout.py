"""An example tool: roll a service out in waves, once a person has said yes.

It shows what a taskgate tool may do: ask a question (the task parks, without compute, until
the answer comes; then the tool runs again from the top), report progress, log, keep its
place with a checkpoint, and stop when the caller cancels (``ctx.progress`` raises).
"""

from __future__ import annotations

import asyncio

from pydantic import BaseModel, Field

from taskgate.tools import Elicit, ToolContext, ToolError, tool


class RolloutInput(BaseModel):
    service: str = Field(description="The service to roll out")
    waves: int = Field(default=3, ge=1, le=20, description="How many waves")


@tool(description="Roll a service out in waves, once a person confirms.", task_support="optional")
async def rollout(args: RolloutInput, ctx: ToolContext) -> str:
    # Before the question: cheap, because it runs again once the question is answered.
    answer = ctx.ask(
        "confirm",
        Elicit(
            message=f"Roll {args.service} out in {args.waves} waves?",
            properties={"ok": {"type": "boolean", "title": "Go ahead"}},
            required=["ok"],
        ),
    )
    if not (answer.accepted and answer.content.get("ok")):
        raise ToolError(f"{args.service} was not rolled out: not confirmed")
    done = (ctx.state or {}).get("waves_done", 0)  # where an earlier step got to
    for wave in range(done + 1, args.waves + 1):
        await asyncio.sleep(0.2)  # stands in for the real work of one wave
        ctx.checkpoint({"waves_done": wave})  # a later step starts after this wave
        ctx.progress(f"wave {wave} of {args.waves}", progress=wave, total=args.waves)
        ctx.log("info", f"{args.service}: wave {wave} done")
    return f"{args.service} rolled out in {args.waves} waves"
