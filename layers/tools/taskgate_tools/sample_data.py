"""A year of sample orders in SQLite, generated deterministically on first use.

Lambda's /tmp (or the local temp dir) holds the file; every instance that
needs it builds the same data from the same seed, so results are reproducible.
"""

from __future__ import annotations

import os
import random
import sqlite3
import tempfile
import threading
from datetime import date, timedelta
from pathlib import Path

CATEGORIES = ("books", "electronics", "garden", "grocery", "toys", "clothing")
REGIONS = ("north", "south", "east", "west")
_lock = threading.Lock()


def database_path(year: int, orders: int) -> Path:
    root = Path(os.environ.get("TASKGATE_DATA_DIR", tempfile.gettempdir()))
    return root / f"taskgate-orders-{year}-{orders}.sqlite3"


def ensure_orders(year: int, orders: int = 50_000) -> Path:
    path = database_path(year, orders)
    with _lock:
        if path.exists():
            return path
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
