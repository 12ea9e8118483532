"""A long report with progress: a year of orders aggregated month by month."""

from __future__ import annotations

import sqlite3
import time

from pydantic import BaseModel, Field

from taskgate.tools import ToolContext, tool

from .sample_data import ensure_orders


class OrdersReportInput(BaseModel):
    year: int = Field(default=2025, ge=2000, le=2100, description="Calendar year to report on")
    orders: int = Field(default=50_000, ge=100, le=500_000, description="Size of the sample dataset")
    pause_seconds: float = Field(
        default=0.0,
        ge=0,
        le=60,
        description="Extra pause per month, to watch progress on a fast machine",
    )


class MonthTotal(BaseModel):
    month: str
    orders: int
    revenue: float
    top_category: str


class OrdersReport(BaseModel):
    year: int
    orders: int
    revenue: float
    months: list[MonthTotal]


@tool(
    description="Aggregate a year of orders month by month (revenue, order count, top category), "
    "reporting progress as each month is done.",
    task_support="required",
    title="Yearly orders report",
)
def orders_report(args: OrdersReportInput, ctx: ToolContext) -> OrdersReport:
    # Months already aggregated by an earlier invocation come back in ctx.state.
    months = [MonthTotal.model_validate(m) for m in (ctx.state or {}).get("months", [])]
    ctx.progress(f"Preparing {args.orders} sample orders for {args.year}")
    # The sample, built in this step's scratch directory and gone with it.
    con = sqlite3.connect(ensure_orders(ctx.scratch_dir / "orders.db", args.year, args.orders))
    try:
        for m in range(len(months) + 1, 13):
            prefix = f"{args.year}-{m:02d}"
            count, cents = con.execute(
                "SELECT COUNT(*), COALESCE(SUM(quantity * unit_price_cents), 0)"
                " FROM orders WHERE ordered_on LIKE ?",
                (prefix + "%",),
            ).fetchone()
            top = con.execute(
                "SELECT category FROM orders WHERE ordered_on LIKE ?"
                " GROUP BY category ORDER BY SUM(quantity * unit_price_cents) DESC LIMIT 1",
                (prefix + "%",),
            ).fetchone()
            months.append(
                MonthTotal(
                    month=prefix, orders=count, revenue=cents / 100, top_category=top[0] if top else ""
                )
            )
            if args.pause_seconds:
                time.sleep(args.pause_seconds)
            ctx.progress(f"Aggregated {m}/12 months ({prefix}: {count} orders)")
            # Each month is kept: if this invocation runs short of time, the next
            # one starts at the following month instead of January.
            ctx.checkpoint({"months": [x.model_dump() for x in months]})
    finally:
        con.close()
    return OrdersReport(
        year=args.year,
        orders=sum(x.orders for x in months),
        revenue=round(sum(x.revenue for x in months), 2),
        months=months,
    )
