"""The offline planner follows a conversation (issue 17): each follow-up move changes the
previous turn's frame, the answer says what was carried over, and the frame lives in the
conversation's state, so it survives a reload (the store) and a restart (a new AskDB).
"""

from __future__ import annotations

import sqlite3
from datetime import date
from pathlib import Path

import pytest

from agent.offline_planner import OfflinePlanner
from agent.sources.sqlite import SQLiteSource
from agent.state import AgentState
from app.core import AskDB
from app.settings import Settings
from bench.planner_questions import Conversation
from agent.vocabulary.domain import DomainVocabulary


@pytest.fixture(scope="module")
def planner(sample_db_path) -> OfflinePlanner:
    return OfflinePlanner(SQLiteSource(sample_db_path), today=date(2026, 11, 24), vocabulary=DomainVocabulary.beside(sample_db_path))


@pytest.fixture
def talk(planner) -> Conversation:
    return Conversation(planner, planner.database)


def sample(sample_db_path: Path, sql: str) -> list[tuple]:
    with sqlite3.connect(sample_db_path) as conn:
        return [tuple(r) for r in conn.execute(sql)]


def result(talk: Conversation) -> list[tuple]:
    return [tuple(r) for r in talk.database.execute(talk.last_sql, max_rows=10_000).rows]


def test_a_new_year_replaces_the_old_one_and_the_answer_says_what_was_kept(talk, sample_db_path):
    talk.ask("How many launches were there in 2020?")
    _, answer = talk.ask("and in 2021?")
    assert result(talk) == sample(sample_db_path, "SELECT COUNT(*) FROM launches WHERE launch_date LIKE '2021-%'")
    assert "kept from the previous question: launches" in answer["text"] and "caveat" not in answer


def test_a_new_value_replaces_the_filter_on_its_column_in_either_language(talk, sample_db_path):
    talk.ask("List the launch sites in China")
    talk.ask("what about Russia?")
    russia = sample(sample_db_path, "SELECT s.name FROM launch_sites s JOIN countries c ON s.country_id = c.id "
                                    "WHERE c.name = 'Russia'")
    assert sorted(result(talk)) == sorted(russia)
    _, answer = talk.ask("美国呢？")
    assert len(result(talk)) == 6 and "沿用上一个问题的" in answer["text"]


def test_only_and_just_add_filters(talk, sample_db_path):
    talk.ask("How many launches were there in 2020?")
    talk.ask("only the successful ones")
    assert result(talk) == sample(sample_db_path, "SELECT COUNT(*) FROM launches WHERE launch_date LIKE '2020-%' "
                                                  "AND outcome = 'success'")
    talk.ask("just for China")
    assert result(talk) == sample(sample_db_path, "SELECT COUNT(*) FROM launches l JOIN launch_sites s ON "
                                                  "l.site_id = s.id JOIN countries c ON s.country_id = c.id WHERE "
                                                  "launch_date LIKE '2020-%' AND outcome = 'success' AND c.name = 'China'")


def test_which_of_those_lists_the_rows_behind_the_previous_answer(talk, sample_db_path):
    talk.ask("How many launches were there in 2020?")
    talk.ask("which of those failed?")
    assert sorted(result(talk)) == sorted(sample(sample_db_path, "SELECT mission_name FROM launches WHERE "
                                                 "launch_date LIKE '2020-%' AND outcome = 'failure'"))
    talk.ask("2019年有多少次发射？")
    talk.ask("其中失败的有哪些？")
    assert sorted(result(talk)) == sorted(sample(sample_db_path, "SELECT mission_name FROM launches WHERE "
                                                 "launch_date LIKE '2019-%' AND outcome = 'failure'"))


def test_a_new_grouping_or_time_bucket_replaces_the_old_one(talk, sample_db_path):
    by_month = ("SELECT substr(launch_date, 1, 7) m, COUNT(*) FROM launches WHERE launch_date LIKE '2020-%' "
                "GROUP BY m ORDER BY m")
    for question in ("How many launches were there in 2020?", "and by month?"):
        talk.ask(question)
    assert result(talk) == sample(sample_db_path, by_month)
    talk.ask("How many launches per year since 2015?")
    talk.ask("by quarter instead")
    assert len(result(talk)) > 12 and result(talk)[0][0] == "2015-Q1"


def test_same_but_by_another_measure_ranks_by_it(talk, sample_db_path):
    talk.ask("Top 5 manufacturers by payload mass")
    _, answer = talk.ask("same but by average payload mass")
    expected = sample(sample_db_path, "SELECT m.name, AVG(p.mass_kg) a FROM payloads p JOIN manufacturers m "
                                      "ON p.manufacturer_id = m.id GROUP BY m.id ORDER BY a DESC LIMIT 5")
    assert [(r[0], r[-1]) for r in result(talk)] == expected
    assert "the top 5" in answer["text"]


def test_a_question_that_stands_alone_is_not_a_follow_up(talk, sample_db_path):
    talk.ask("How many launches were there in 2020?")
    talk.ask("List the launch sites in China")
    assert len(result(talk)) == 6


def test_an_old_state_without_a_frame_loads():
    state = AgentState.model_validate({"state_version": 2, "question": "q", "messages": []})
    assert state.planner_frame is None


def test_the_frame_survives_a_reload_and_a_restart(tmp_path, sample_db_path):
    settings = Settings(store=tmp_path / "store.db", database=sample_db_path, llm="offline", memory_embedder="none")
    first = AskDB(settings)
    try:
        events = list(first.ask("How many launches were there in 2020?", user_id="u"))
        thread = events[0].thread_id
        assert first.store.load(thread, user_id="u").state.planner_frame["fact"] == "launches"
    finally:
        first.close()
    second = AskDB(settings)  # a restart: a new core over the same store
    try:
        events = list(second.ask("and in 2021?", user_id="u", thread_id=thread))
        answer = next(e.answer for e in events if e.type == "answer")
        assert "2021" in answer.data.sql and "kept from the previous question" in answer.data.text
    finally:
        second.close()


def test_a_negated_frame_survives_the_state_and_takes_a_follow_up(talk, sample_db_path):
    talk.ask("Which launch vehicles have never failed?")
    assert talk.context.state.planner_frame["absent"][0]["tables"] == ["launches"]
    _, answer = talk.ask("just the active ones")
    expected = sample(sample_db_path, "SELECT v.name FROM launch_vehicles v WHERE v.status = 'active' AND NOT EXISTS "
                                      "(SELECT 1 FROM launches l WHERE l.vehicle_id = v.id AND l.outcome = 'failure')")
    assert sorted(result(talk)) == sorted(expected) and "kept from the previous question" in answer["text"]


def test_how_many_are_there_counts_the_rows_listed_before(talk):
    """A bare count has nothing else to count: it points back at the rows listed before."""
    talk.ask("List the launch sites in China")
    _, answer = talk.ask("How many are there?")
    assert result(talk) == [(6,)]
    assert "caveat" not in answer


def test_their_columns_are_shown_for_the_rows_behind_the_previous_answer(talk, sample_db_path):
    talk.ask("How many launch sites are in China?")
    talk.ask("What are their latitudes?")
    assert sorted(result(talk)) == sorted(sample(sample_db_path, "SELECT s.latitude FROM launch_sites s JOIN countries c "
                                                                 "ON s.country_id = c.id WHERE c.name = 'China'"))


def test_a_reference_with_nothing_to_point_at_is_named_in_the_caveat(planner):
    talk = Conversation(planner, planner.database)
    _, answer = talk.ask("What are their latitudes?")
    assert answer["caveat"].startswith("I could not use 'their'")


def test_its_and_this_point_back_at_the_previous_answer(talk, sample_db_path):
    talk.ask("List the launch vehicles with the name Falcon 9")
    talk.ask("What is its height?")
    assert result(talk) == sample(sample_db_path, "SELECT height_m FROM launch_vehicles WHERE name = 'Falcon 9'")
    this_year = OfflinePlanner(talk.database, today=date(2025, 6, 1)).plan("How many launches were there this year?")
    assert this_year.caveat is None
