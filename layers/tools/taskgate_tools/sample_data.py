"""A year of sample orders in SQLite, generated deterministically.

Every instance builds the same data from the same seed, so results are
reproducible, and a tool builds its copy in its run's ``ctx.scratch_dir``: it goes
when the run (a task's step, or a plain call) ends, whatever the end, so the sample
tools keep nothing on disk between runs. At most ``orders`` = 500,000 (about 28 MB, 2 s
to build) per running step. A real deployment keeps its data in a real database.
"""

from __future__ import annotations

import random
import sqlite3
import threading
from datetime import date, timedelta
from pathlib import Path

CATEGORIES = ("books", "electronics", "garden", "grocery", "toys", "clothing")
REGIONS = ("north", "south", "east", "west")
_lock = threading.Lock()


def ensure_orders(path: Path, year: int, orders: int = 50_000) -> Path:
    """``path``, holding the sample orders of ``year`` (built there if it is not yet)."""
    with _lock:
        if path.exists():
            return path
        path.parent.mkdir(parents=True, exist_ok=True)
        rng = random.Random(f"orders-{year}-{orders}")
        tmp = path.with_suffix(".partial")
        tmp.unlink(missing_ok=True)
        con = sqlite3.connect(tmp)
        try:
            con.execute(
                "CREATE TABLE orders (id INTEGER PRIMARY KEY, ordered_on TEXT NOT NULL,"
                " category TEXT NOT NULL, region TEXT NOT NULL, quantity INTEGER NOT NULL,"
                " unit_price_cents INTEGER NOT NULL)"
            )
            start = date(year, 1, 1)
            days = (date(year + 1, 1, 1) - start).days
            con.executemany(
                "INSERT INTO orders VALUES (?, ?, ?, ?, ?, ?)",
                (
                    (
                        i,
                        (start + timedelta(days=rng.randrange(days))).isoformat(),
                        rng.choice(CATEGORIES),
                        rng.choice(REGIONS),
                        rng.randint(1, 5),
                        rng.randint(199, 49_999),
                    )
                    for i in range(1, orders + 1)
                ),
            )
            con.execute("CREATE INDEX orders_by_day ON orders (ordered_on)")
            con.commit()
        finally:
            con.close()
        # Rename last so a crash never leaves a half-built file that looks complete.
        tmp.replace(path)
        return path
