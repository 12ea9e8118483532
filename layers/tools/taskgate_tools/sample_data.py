"""A year of sample orders in SQLite, generated deterministically.

Every instance builds the same data from the same seed, so results are
reproducible. Where a database lives is the caller's business: an owner's own
orders (``owner_database``, kept between tasks and changed only by that owner's
tools) or a throwaway copy in a run's ``ctx.scratch_dir``. Lambda's /tmp is per
instance: a real deployment keeps owners' data in a real database.
"""

from __future__ import annotations

import hashlib
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


def data_root() -> Path:
    return Path(os.environ.get("TASKGATE_DATA_DIR", tempfile.gettempdir()))


def owner_database(owner: str, year: int, orders: int) -> Path:
    """Where ``owner``'s own orders live: one directory per owner (named by a hash,
    since owners are issuer URLs and ARNs), never shared with another caller."""
    digest = hashlib.sha256(owner.encode()).hexdigest()[:32]
    return data_root() / "taskgate-owners" / digest / f"orders-{year}-{orders}.sqlite3"


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
