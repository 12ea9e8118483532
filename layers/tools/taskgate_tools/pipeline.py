"""A data pipeline handed off to Step Functions: the task waits for it at no compute.

``run_pipeline`` starts the example pipeline (``statemachines/pipeline.asl.json``: an
extract, a transform and a load stage) as a child execution and ends its step. Nothing
of taskgate runs while the pipeline does; ``tasks/get`` shows which stage it is in, a
cancel stops it, and once it ends the tool runs again with its output.

The template deploys the pipeline (PipelineStateMachine) and names it to the worker in
PIPELINE_STATE_MACHINE_ARN; the local runtime creates it in moto.
"""

from __future__ import annotations

import os
from typing import Literal

from pydantic import BaseModel, Field

from taskgate.tools import StepFunctionsExecution, ToolContext, ToolError, tool


class PipelineInput(BaseModel):
    source: str = Field(default="s3://example-data/2027-01-15/", description="What the pipeline loads")
    stage_seconds: int = Field(
        default=5, ge=0, le=3600, description="How long each of its three stages takes"
    )
    fail_at: Literal["", "transform"] = Field(
        default="", description="A stage to fail in ('transform'), to see a failed pipeline"
    )


class PipelineRun(BaseModel):
    source: str
    rows_loaded: int
    stages: list[str]


@tool(
    description=(
        "Run the data pipeline (a Step Functions state machine) on a source and return what it "
        "loaded. The task waits for the pipeline without holding any compute; its status says "
        "which stage the pipeline is in."
    ),
    task_support="optional",
)
def run_pipeline(args: PipelineInput, ctx: ToolContext) -> PipelineRun:
    arn = os.environ.get("PIPELINE_STATE_MACHINE_ARN", "")
    if not arn:
        raise ToolError("No pipeline is deployed here: PIPELINE_STATE_MACHINE_ARN is not set.")
    job = StepFunctionsExecution(
        arn, {"source": args.source, "stageSeconds": args.stage_seconds, "failAt": args.fail_at}
    )
    output = ctx.hand_off("pipeline", job).output
    return PipelineRun(source=output["source"], rows_loaded=output["rowsLoaded"], stages=output["stages"])
