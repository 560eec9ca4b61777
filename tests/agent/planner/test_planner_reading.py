"""The offline planner accounts for every word of the question, or says which it did not use,
and states how it read the question (issue 17), on the sample database and Spider's.

Planned directly (`OfflinePlanner.plan`) and through the loop's tools (`Conversation`), with
`today` fixed so "last year" is reproducible.
"""

from __future__ import annotations

from datetime import date

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agent.offline_planner import OfflinePlanner
from agent.planner.reading import interpretation
from agent.sources.sqlite import SQLiteSource
from bench.planner_questions import Conversation
from agent.vocabulary.domain import DomainVocabulary

TODAY = date(2026, 11, 24)


@pytest.fixture(scope="module")
def planner(sample_db_path) -> OfflinePlanner:
    return OfflinePlanner(SQLiteSource(sample_db_path), today=TODAY, vocabulary=DomainVocabulary.beside(sample_db_path))


def rows(planner: OfflinePlanner, question: str) -> list[tuple]:
    plan = planner.plan(question)
    assert plan.sql is not None, plan.failure
    return [tuple(r) for r in planner.database.execute(plan.sql, max_rows=10_000).rows]


def gold(planner: OfflinePlanner, sql: str) -> list[tuple]:
    return [tuple(r) for r in planner.database.execute(sql, max_rows=10_000).rows]


# -- the examples ------------------------------------------------------------------

def test_top_n_ranks_by_the_named_measure_not_by_count(planner):
    got = rows(planner, "Top 5 manufacturers by payload mass")
    expected = gold(planner, "SELECT m.name, SUM(p.mass_kg) s FROM payloads p JOIN manufacturers m "
                             "ON p.manufacturer_id = m.id GROUP BY m.id ORDER BY s DESC LIMIT 5")
    assert [(r[0], r[-1]) for r in got] == expected
    assert planner.plan("Top 5 manufacturers by payload mass").caveat is None


def test_per_month_is_a_month_bucket(planner):
    plan = planner.plan("How many launches per month in 2020?")
    got = rows(planner, "How many launches per month in 2020?")
    assert got == gold(planner, "SELECT substr(launch_date, 1, 7) m, COUNT(*) FROM launches "
                                "WHERE launch_date LIKE '2020-%' GROUP BY m ORDER BY m")
    assert plan.caveat is None and len(got) == 12


def test_a_share_by_country_is_a_percentage_per_country(planner):
    got = rows(planner, "What share of launches failed, by country?")
    expected = gold(planner, "SELECT c.name, ROUND(100.0 * SUM(l.outcome = 'failure') / COUNT(*), 2), COUNT(*) "
                             "FROM launches l JOIN launch_sites s ON l.site_id = s.id JOIN countries c "
                             "ON s.country_id = c.id GROUP BY c.id")
    assert sorted(got) == sorted(expected)
    assert "percent" in planner.plan("What share of launches failed, by country?").sql


def test_a_word_matching_two_columns_takes_the_table_the_question_names(planner):
    plan = planner.plan("Which Falcon 9 launches failed?")
    assert "launches.outcome = 'failure'" in plan.sql and "payloads" not in plan.sql
    assert "outcome = failure" in interpretation(plan.frame)


def test_last_year_is_relative_to_today_and_stated(planner):
    plan = planner.plan("How many launches took place last year?")
    assert "launch_date >= '2025-01-01' AND launch_date < '2026-01-01'" in plan.sql
    assert plan.caveat is None
    conversation = Conversation(planner, planner.database)
    _, answer = conversation.ask("How many launches took place last year?")
    assert "'last year' as 2025 (today is 2026-11-24)" in answer["text"]
    _, answer = conversation.ask("过去5年有多少次发射？")
    assert "今天是 2026-11-24" in answer["text"] and "2021-11-24" in answer["text"]


# -- account for every word ------------------------------------------------------------------

def test_an_unused_word_is_named_in_the_caveat_which_opens_the_answer(planner):
    conversation = Conversation(planner, planner.database)
    _, answer = conversation.ask("How many launches were there in 2020 on a Tuesday?")
    assert answer["caveat"] == "I could not use 'Tuesday': the answer below leaves it out."
    assert answer["text"].startswith(answer["caveat"])
    _, answer = conversation.ask("2020年周末有多少次发射？")
    assert answer["caveat"].startswith("问题中的“周末”没有用上") and answer["text"].startswith(answer["caveat"])


def test_a_decline_carries_its_first_sentence_as_the_caveat(planner):
    _, answer = Conversation(planner, planner.database).ask("What is the meaning of life?")
    assert answer["sql"] is None and answer["text"].startswith(answer["caveat"])
    assert answer["caveat"].startswith("I could not map this question to the database")


BASE_QUESTIONS = ["How many launches were there in 2020?", "List the launch sites in China",
                  "What is the average payload mass by orbit?", "Top 5 manufacturers by payload mass",
                  "Which Falcon 9 launches failed?", "How many launches per month in 2020?"]
EXTRA_WORDS = st.sampled_from(["purple", "quickly", "weekend", "Tuesday", "banana", "elephants", "secret",
                               "haunted", "velvet", "nearby", "tomorrow", "umbrella", "giraffes", "lunar"])


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(base=st.sampled_from(BASE_QUESTIONS), word=EXTRA_WORDS, position=st.integers(0, 12))
def test_an_extra_content_word_never_yields_a_confident_changed_query(planner, base, word, position):
    words = base.rstrip("?").split()
    words.insert(min(position, len(words)), word)
    plan, original = planner.plan(" ".join(words) + "?"), planner.plan(base)
    if plan.sql is not None and plan.sql != original.sql:
        assert plan.caveat is not None, (words, plan.sql)
    if plan.sql is not None:
        assert plan.caveat is not None and word in plan.caveat  # the word is never dropped in silence


# -- say how it read the question ---------------------------------------------------------------

def test_every_answer_states_its_reading_in_the_questions_language(planner):
    conversation = Conversation(planner, planner.database)
    _, answer = conversation.ask("What share of launches failed, by country?")
    assert answer["text"].startswith("Computed the percentage of launches with outcome = failure and the "
                                     "number of launches, grouped by each country")
    _, answer = conversation.ask("每个国家有多少个发射场？")
    assert answer["text"].startswith("统计了发射场的数量，按每个国家分组。")


# -- negation through a subquery --------------------------------------------------------------

def test_never_and_no_keep_the_rows_with_no_matching_row(planner):
    got = rows(planner, "Which launch vehicles have never failed?")
    expected = gold(planner, "SELECT v.name FROM launch_vehicles v WHERE NOT EXISTS (SELECT 1 FROM launches l "
                             "WHERE l.vehicle_id = v.id AND l.outcome = 'failure')")
    assert sorted(got) == sorted(expected) and "NOT IN (SELECT" in planner.plan("Which launch vehicles have never failed?").sql
    assert sorted(rows(planner, "Which manufacturers have no launch vehicles?")) == sorted(gold(
        planner, "SELECT name FROM manufacturers WHERE id NOT IN (SELECT manufacturer_id FROM launch_vehicles "
                 "WHERE manufacturer_id IS NOT NULL)"))


def test_a_value_of_the_listed_rows_is_negated_directly(planner):
    sql = planner.plan("List the launch sites not in China").sql
    assert "countries.name != 'China'" in sql and "NOT IN" not in sql


def test_a_superlative_shows_every_row_tied_for_first(planner):
    got = rows(planner, "Which countries have the most launch sites?")
    assert sorted(r[0] for r in got) == ["China", "United States"] and {r[-1] for r in got} == {6}
    reading = interpretation(planner.plan("Which countries have the most launch sites?").frame)
    assert "keeping the first and any tied with it" in reading
    assert len(rows(planner, "Top 1 countries by number of launch sites")) == 1  # an explicit N is kept


def test_all_the_rows_asked_for_shows_every_column(planner):
    plan = planner.plan("What are all the launch sites?")
    assert [c.name for c in plan.frame.columns] == ["id", "name", "name_zh", "country_id", "latitude", "longitude",
                                                     "opened_year"]
    assert [c.name for c in planner.plan("List the launch sites in China").frame.columns] == ["name"]


# -- words linked by meaning (the local embedder) -------------------------------------------------

def test_a_word_linked_by_meaning_is_used_but_named_as_a_guess(sample_db_path):
    from agent.memory.embeddings import LocalEmbedder

    question = "What is the average elevation of launch vehicles?"
    linked = OfflinePlanner(SQLiteSource(sample_db_path), embedder=LocalEmbedder(), vocabulary=DomainVocabulary.beside(sample_db_path)).plan(question)
    assert "AVG(height_m)" in linked.sql
    assert linked.caveat == "I read 'elevation' as height by meaning, not by name: check that this is what you meant."
    alone = OfflinePlanner(SQLiteSource(sample_db_path), vocabulary=DomainVocabulary.beside(sample_db_path)).plan(question)
    assert alone.caveat.startswith("I could not use") and "elevation" in alone.caveat
