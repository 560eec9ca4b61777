"""What the load benchmarks share: how many users, the tiny database they ask about, percentiles."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from bench.responders import THREE_TOOL_TURN

USERS, TURNS, STEPS_PER_TURN = 20, 10, len(THREE_TOOL_TURN) + 1


def percentile(values: list[float], share: float) -> float:
    """The value below which `share` of `values` lie (nearest rank); 0.0 for none."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))] if ordered else 0.0


def tiny_database(directory: Path) -> Path:
    path = directory / "sites.db"
    with sqlite3.connect(path) as conn:
        conn.executescript("CREATE TABLE sites (id INTEGER PRIMARY KEY, name TEXT);"
                           "INSERT INTO sites (name) VALUES ('Jiuquan'), ('Xichang'), ('Cape Canaveral');")
    return path
