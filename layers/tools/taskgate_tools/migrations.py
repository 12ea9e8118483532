"""An operation that asks before it acts: archive old orders out of a live table.

It works on a sample copy of the orders built for the run in its scratch directory, so
another caller's orders (or reports) are never touched, and nothing is left behind
however the task ends: confirmed, declined, cancelled, failed or never answered (the
copy of the step that asked is gone once it parks; the step that resumes builds its own)."""

from __future__ import annotations

import sqlite3

from pydantic import BaseModel, Field

from taskgate.tools import Elicit, ToolContext, ToolError, tool

from .sample_data import ensure_orders


class ArchiveOrdersInput(BaseModel):
    year: int = Field(default=2025, ge=2000, le=2100)
    before: str = Field(
        default="2025-04-01",
        pattern=r"^\d{4}-\d{2}-\d{2}$",
        description="Archive orders placed before this date (YYYY-MM-DD)",
    )
    orders: int = Field(default=50_000, ge=100, le=500_000)
    batch_size: int = Field(default=5_000, ge=100, le=50_000)


@tool(
    description="Move orders placed before a date into an archive table, after the user "
    "confirms the plan. Runs in batches and can be cancelled between them. Works on a "
    "sample copy of the orders made for the task, removed when it ends.",
    task_support="required",
    title="Archive old orders",
)
def archive_orders(args: ArchiveOrdersInput, ctx: ToolContext) -> str:
    con = sqlite3.connect(ensure_orders(ctx.scratch_dir / "orders.db", args.year, args.orders))
    try:
        con.execute("CREATE TABLE IF NOT EXISTS orders_archive AS SELECT * FROM orders WHERE 0")
        (pending,) = con.execute(
            "SELECT COUNT(*) FROM orders WHERE ordered_on < ?", (args.before,)
        ).fetchone()
        if pending == 0:
            return f"Nothing to archive: no orders before {args.before}."
        answer = ctx.ask(
            f"confirm_archive_{args.before}",
            Elicit(
                message=f"Archive {pending} orders placed before {args.before}? "
                "They leave the live orders table.",
                properties={"confirm": {"type": "boolean", "title": "Archive them"}},
                required=["confirm"],
            ),
        )
        if not (answer.accepted and answer.content.get("confirm") is True):
            raise ToolError(f"Archive declined; {pending} orders left in place.")
        moved = 0
        while True:
            ids = [
                row[0]
                for row in con.execute(
                    "SELECT id FROM orders WHERE ordered_on < ? LIMIT ?", (args.before, args.batch_size)
                )
            ]
            if not ids:
                break
            marks = ",".join("?" * len(ids))
            # One transaction per batch: a cancel between batches leaves no half batch.
            with con:
                con.execute(f"INSERT INTO orders_archive SELECT * FROM orders WHERE id IN ({marks})", ids)
                con.execute(f"DELETE FROM orders WHERE id IN ({marks})", ids)
            moved += len(ids)
            ctx.progress(f"Archived {moved}/{pending} orders")
        return f"Archived {moved} orders placed before {args.before}."
    finally:
        con.close()
