"""The offline planner's documented questions on MySQL/MariaDB and DuckDB: each conversation played
as the loop plays it (tests/agent/test_offline_planner.py), the planner writing the engine's SQL
(transpiled from its SQLite plan), its rows compared with the gold SQL's on the SQLite file."""

from __future__ import annotations

from datetime import date

import pytest

from agent.offline_planner import OfflinePlanner
from agent.sources.factory import open_source
from agent.vocabulary.domain import DomainVocabulary
from bench.planner_questions import QUESTIONS, Conversation, check_question

SAMPLE_QUESTIONS = [q for q in QUESTIONS if q["db"] == "sample"]
ENGINE_LOCATIONS = {"mysql": "mariadb_analytics_url", "duckdb": "duckdb_sample_path", "postgres": "postgres_analytics_url"}


@pytest.fixture(scope="module", params=sorted(ENGINE_LOCATIONS))
def planner(request, sample_db_path):
    """One source and planner per engine for the module, with the sample database's own words: the
    schema index is built once each."""
    source = open_source(request.getfixturevalue(ENGINE_LOCATIONS[request.param]))
    yield OfflinePlanner(source, vocabulary=DomainVocabulary.beside(sample_db_path)), source
    source.close()


@pytest.mark.parametrize("entry", SAMPLE_QUESTIONS, ids=[q["id"] for q in SAMPLE_QUESTIONS])
def test_documented_question_matches_gold(entry, planner, sample_db_path):
    ok, detail = check_question(entry, Conversation(*planner), sample_db_path)
    assert ok, f"{entry['question']} on {planner[1].engine}\n{detail}"


def test_the_datas_last_date_is_read_on_every_engine(planner, sample_db_path):
    """A period counted from today past the sample's last launch is said, and 'in the data' counts back from it, on
    each engine (its SQL quoted as the engine quotes names)."""
    source = planner[1]
    late = OfflinePlanner(source, today=date(2026, 11, 29),
                          vocabulary=DomainVocabulary.beside(sample_db_path))
    assert late.plan("How many launches were there in the past 2 years?").frame.data_end == "2025-12-28"
    kept = late.plan("How many launches were there in the past 2 years in the data?")
    assert kept.caveat is None and "2025-12-28" in " ".join(kept.frame.periods)
