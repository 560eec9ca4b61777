"""Follow-ups only on evidence (issue 38): a question is read against the previous answer when its words
point back ("those", 其中), it is an ellipsis ("and in 2020?", "what about …") or a fragment with no subject
or measure of its own; a complete question stands alone. A follow-up's first sentence says so."""

from __future__ import annotations

from datetime import date

import pytest

from agent.offline_planner import OfflinePlanner
from agent.sources.sqlite import SQLiteSource
from bench.planner_questions import Conversation
from agent.vocabulary.domain import DomainVocabulary

TODAY = date(2026, 3, 15)


@pytest.fixture(scope="module")
def planner(sample_db_path) -> OfflinePlanner:
    return OfflinePlanner(SQLiteSource(sample_db_path), today=TODAY, vocabulary=DomainVocabulary.beside(sample_db_path))


@pytest.fixture
def talk(planner) -> Conversation:
    return Conversation(planner, planner.database)


def rows(talk: Conversation, sql: str) -> list[tuple]:
    return [tuple(r) for r in talk.database.execute(sql, max_rows=10_000).rows]


@pytest.mark.parametrize("first", ["Which Boeing aircraft are still in service?", "How many aircraft does Boeing make?"])
def test_a_complete_question_after_another_stands_alone(talk, first):
    talk.ask(first)
    _, answer = talk.ask("What is the most expensive part on the Boeing 787-9?")
    assert "'Boeing 787-9'" in answer["sql"] and "manufacturers" not in answer["sql"]
    assert "caveat" not in answer and not answer["text"].startswith("Following")
    assert rows(talk, answer["sql"]) == [("GEnx-1B",)]


@pytest.mark.parametrize("first", ["How many launches were there in 2020?", "2019年有多少次发射？",
                                   "List the launch sites in China"])
def test_a_complete_chinese_question_stands_alone_as_its_english_twin_does(talk, planner, first):
    talk.ask(first)
    _, answer = talk.ask("2024年发射次数最多的三个发射场是哪些？")
    assert "caveat" not in answer and not answer["text"].startswith("接着上一个问题")
    english = planner.plan("Which 3 launch sites had the most launches in 2024?")
    assert [r[1:] for r in rows(talk, answer["sql"])] == [r[1:] for r in rows(talk, english.sql)]
    assert "LIMIT 3" in answer["sql"] and "China" not in answer["sql"]


def test_which_of_those_keeps_the_previous_answers_subject(talk):
    talk.ask("Which launch vehicles flew more than 10 times since 2015?")
    _, answer = talk.ask("which of those are retired?")
    sql = answer["sql"]
    assert "launch_vehicles.name" in sql and "launch_vehicles.status = 'retired'" in sql
    assert "HAVING COUNT(*) > 10" in sql and "launch_date >= '2015-01-01'" in sql
    assert answer["text"].startswith("Following your last question: ")
    assert {r[0] for r in rows(talk, sql)} >= {"Ariane 5 ECA", "H-IIA"}


def test_which_of_those_with_a_filter_on_the_counted_rows_lists_those_rows(talk):
    talk.ask("Which launch vehicles flew more than 10 times since 2015?")
    _, answer = talk.ask("which of those failed?")
    assert "launches.outcome = 'failure'" in answer["sql"] or "outcome = 'failure'" in answer["sql"]
    assert "HAVING" not in answer["sql"]  # a filter on the launches would change the counts


@pytest.mark.parametrize("first, follow_up, opening", [
    ("How many launches were there in 2020?", "and in 2021?", "Following your last question: counted launches"),
    ("List the launch sites in China", "what about Russia?", "Following your last question: listed"),
    ("2019年有多少次发射？", "其中失败的有哪些？", "接着上一个问题：列出了"),
    ("每个国家有多少个发射场？", "俄罗斯呢？", "接着上一个问题："),
])
def test_a_follow_up_says_it_follows_in_its_first_sentence(talk, first, follow_up, opening):
    talk.ask(first)
    _, answer = talk.ask(follow_up)
    assert answer["text"].startswith(opening), answer["text"]


def test_a_question_read_alone_does_not_say_it_follows(talk):
    _, answer = talk.ask("How many launches were there in 2020?")
    assert answer["text"].startswith("Counted launches")
