"""The multi-turn harness (app/eval/sparc.py): each interaction is one conversation, scored turn
by turn, on a Spider database kept in tests/data/spider (SParC's dev databases are Spider's)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from app.eval.harness import SuiteError
from app.eval.sparc import load_interactions, run_interactions, summarise_interactions
from app.settings import Settings

SPIDER = Path(__file__).resolve().parents[2] / "data" / "spider"
INTERACTIONS = [
    {"database_id": "concert_singer", "interaction": [
        {"utterance": "How many singers are from France?", "query": "SELECT count(*) FROM singer WHERE country = 'France'"},
        {"utterance": "what about the Netherlands?", "query": "SELECT count(*) FROM singer WHERE country = 'Netherlands'"},
    ]},
    {"database_id": "concert_singer", "interaction": [
        {"utterance": "What are all the stadiums?", "query": "SELECT * FROM stadium"},
        {"utterance": "How many are there?", "query": "SELECT count(*) FROM stadium"},
        {"utterance": "Which has the highest capacity?", "query": "SELECT name FROM stadium ORDER BY capacity DESC LIMIT 1"},
    ]},
    {"database_id": "not_here", "interaction": [{"utterance": "How many?", "query": "SELECT 1"}]},
]


def test_each_interaction_is_one_conversation_scored_turn_by_turn(tmp_path):
    settings = Settings(store=tmp_path / "unused.db", llm="offline", memory_embedder="none")
    done = run_interactions(INTERACTIONS, SPIDER, settings)
    assert [[t.correct for t in turns] for turns in done] == [[True, True], [True, True, False]]
    figures = summarise_interactions(done, seconds=1.0)
    assert (figures["interactions"], figures["questions"], figures["questions_correct"]) == (2, 5, 4)
    assert figures["question_accuracy"] == 80.0 and figures["interaction_accuracy"] == 50.0
    assert figures["confidently_wrong"]["answers"] == 5


def test_a_missing_sparc_set_is_a_clear_error(tmp_path):
    with pytest.raises(SuiteError, match="no SParC dev set"):
        load_interactions(tmp_path)
    (tmp_path / "sparc").mkdir()
    (tmp_path / "sparc" / "dev.json").write_text(json.dumps(INTERACTIONS))
    assert len(load_interactions(tmp_path)) == 3
