"""The yearly orders report as a resource, and prompts that ask for one.

A finished ``orders_report`` task is readable as ``reports://orders/{taskId}``
(Markdown), by the caller who ran it and nobody else: the resource reads through
``ctx.tasks``, which only ever holds the caller's own tasks. ``resources/list``
names the caller's finished reports; ``completion/complete`` offers their ids.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Literal

from pydantic import BaseModel, Field

from taskgate.tools.catalog import CompletionContext
from taskgate.tools.prompts import Message, PromptContext, embedded_resource_block, prompt
from taskgate.tools.resources import ResourceContext, ResourceNotFound, resource

TOOL = "orders_report"
URI = "reports://orders/{taskId}"


def _finished(ctx: ResourceContext | PromptContext | CompletionContext, limit: int = 50) -> list[Any]:
    return [t for t in ctx.tasks.recent(tool=TOOL, limit=limit) if t.status == "completed"]


def _list_reports(ctx: ResourceContext) -> Iterable[dict[str, Any]]:
    for task in _finished(ctx):
        yield {
            "uri": URI.format(taskId=task.task_id),
            "name": f"orders-report-{task.task_id}",
            "title": f"Orders report ({task.task_id[:8]})",
        }


def _complete_task_id(value: str, ctx: CompletionContext) -> list[str]:
    return [t.task_id for t in _finished(ctx) if t.task_id.startswith(value)]


class ReportRef(BaseModel):
    taskId: str = Field(min_length=1, max_length=64, description="Id of a finished orders_report task")


def render(report: dict[str, Any]) -> str:
    lines = [
        f"# Orders report {report.get('year', '')}",
        "",
        f"{report.get('orders', 0)} orders, revenue {report.get('revenue', 0):,.2f}",
        "",
        "| month | orders | revenue | top category |",
        "| --- | ---: | ---: | --- |",
    ]
    for m in report.get("months", []):
        lines.append(f"| {m['month']} | {m['orders']} | {m['revenue']:,.2f} | {m['top_category']} |")
    return "\n".join(lines) + "\n"


def _report(task_id: str, ctx: ResourceContext | PromptContext) -> dict[str, Any] | None:
    task = ctx.tasks.get(task_id, with_result=True)
    if task is None or task.tool != TOOL or task.status != "completed" or task.result is None:
        return None
    structured = task.result.get("structuredContent")
    return structured if isinstance(structured, dict) and "months" in structured else None


def _version(args: ReportRef, ctx: ResourceContext) -> str | None:
    task = ctx.tasks.get(args.taskId)
    return task.status if task is not None and task.tool == TOOL else None


@resource(
    URI,
    name="orders-report",
    title="Yearly orders report",
    description="A finished orders_report run as a Markdown table (yours only). Subscribe to one "
    "still running to hear when it is ready.",
    mime_type="text/markdown",
    complete={"taskId": _complete_task_id},
    version=_version,
    lister=_list_reports,
)
def orders_report_view(args: ReportRef, ctx: ResourceContext) -> str:
    report = _report(args.taskId, ctx)
    if report is None:
        raise ResourceNotFound(ctx.uri, "No finished orders report with that id")
    return render(report)


class RequestArgs(BaseModel):
    year: int = Field(ge=2000, le=2100, description="Calendar year to report on")
    focus: Literal["revenue", "orders", "categories"] = Field(
        default="revenue", description="What the summary should dwell on"
    )


def _complete_year(value: str, ctx: CompletionContext) -> list[str]:
    return [str(y) for y in range(2025, 1999, -1) if str(y).startswith(value)]


@prompt(
    title="Ask for a yearly orders report",
    description="Ask the assistant to run the orders_report tool for a year and summarise it.",
    complete={"year": _complete_year},
)
def request_orders_report(args: RequestArgs, ctx: PromptContext) -> list[Message]:
    return [
        Message.user(
            f"Run the orders_report tool for {args.year} (it runs as a task: wait for it to finish). "
            f"Then summarise the year in five bullet points, focusing on {args.focus}, and name the "
            "best and the worst month."
        )
    ]


class ReviewArgs(BaseModel):
    taskId: str = Field(min_length=1, max_length=64, description="Id of a finished orders_report task")


@prompt(
    title="Review a finished orders report",
    description="Embed one of your finished orders reports and ask for a review of it.",
    complete={"taskId": _complete_task_id},
)
def review_orders_report(args: ReviewArgs, ctx: PromptContext) -> list[Message]:
    report = _report(args.taskId, ctx)
    if report is None:
        return [Message.user(f"There is no finished orders report {args.taskId}; run orders_report first.")]
    uri = URI.format(taskId=args.taskId)
    return [
        Message.user(embedded_resource_block(uri, text=render(report), mime_type="text/markdown")),
        Message.user("Review this report: what stands out, and what should we look into next?"),
    ]
