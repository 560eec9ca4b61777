"""What the fifty-eighth re-walk found (issue 38; 18 right, 8 right with a caveat, 3 confidently wrong), read now:

- E6 "Which operator countries had payloads launched from the Guiana Space Centre?": the site's own country (France)
  was shown; the value is reached the way the words go, through the payloads named before it, and a period then
  dates the launches named, not the year the site opened.
- E17 "Which of those are American?" after the makers with at least three models: the makers' own country keeps
  them and their count, not the models of every American maker.
- Z12/Z13 可重复使用的运载火箭一共有几种？ then 其中还在役的有哪些？: a yes/no column said before its table is which of
  the rows (reusable = 1), not a total of the flag or one group of each value.
- Z11 2020年代以来: from the decade on ("since the 2010s" too), not the decade alone.
- Right answers flagged by words that say nothing: "racked up", "still … today", 去 (去太阳同步轨道), 处于; and a
  period counted from today past the data's end, said after the result, not as a caveat (Z14).
"""

from __future__ import annotations

from datetime import date

import pytest

from agent.offline_planner import OfflinePlanner
from agent.planner.reading import data_ends
from agent.sources.sqlite import SQLiteSource
from agent.vocabulary.domain import DomainVocabulary
from tests.agent.planner.test_planner_followup import planner, result, sample, talk  # noqa: F401 (fixtures)
from tests.agent.planner.test_planner_within_groups import _rows

_OPERATORS = ("SELECT DISTINCT c.name FROM payloads p JOIN countries c ON c.id = p.operator_country_id JOIN launches l "
              "ON l.id = p.launch_id JOIN launch_sites s ON s.id = l.site_id WHERE s.name = '{site}'")


@pytest.mark.parametrize("question", ["Which operator countries had payloads launched from the Guiana Space Centre?",
                                      "Which countries operated payloads launched from the Guiana Space Centre?"])
def test_a_value_is_reached_through_the_rows_named_before_it(planner, sample_db_path, question):
    plan = planner.plan(question)
    gold = sample(sample_db_path, _OPERATORS.format(site="Guiana Space Centre"))
    assert plan.caveat is None and _rows(planner, plan.sql) == sorted(gold) and len(gold) == 7


def test_a_period_dates_the_rows_named_not_the_values_table(planner, sample_db_path):
    plan = planner.plan("Which operator countries had payloads launched from Baikonur in 2020?")
    gold = _OPERATORS.format(site="Baikonur Cosmodrome") + " AND l.launch_date LIKE '2020%'"
    assert "opened_year" not in plan.sql and _rows(planner, plan.sql) == sorted(sample(sample_db_path, gold))


def test_which_of_those_keeps_the_groups_by_their_own_country(talk, sample_db_path):
    talk.ask("Which aircraft manufacturers have at least three aircraft models in the database?")
    _, answer = talk.ask("Which of those are American?")
    gold = ("SELECT m.name, COUNT(*) FROM aircraft a JOIN manufacturers m ON m.id = a.manufacturer_id JOIN countries c "
            "ON c.id = m.country_id WHERE c.name = 'United States' GROUP BY m.id HAVING COUNT(*) >= 3")
    assert "caveat" not in answer and sorted(result(talk)) == sorted(sample(sample_db_path, gold))


@pytest.mark.parametrize("question", ["可重复使用的运载火箭一共有几种？", "可重复使用的运载火箭有几种？"])
def test_a_flag_before_its_table_says_which_rows(talk, sample_db_path, question):
    _, answer = talk.ask(question)
    assert "caveat" not in answer and result(talk) == sample(sample_db_path,
                                                             "SELECT COUNT(*) FROM launch_vehicles WHERE reusable = 1")
    _, answer = talk.ask("其中还在役的有哪些？")
    gold = "SELECT name_zh FROM launch_vehicles WHERE reusable = 1 AND status = 'active'"
    assert "caveat" not in answer and sorted(result(talk)) == sorted(sample(sample_db_path, gold))


@pytest.mark.parametrize("question, condition", [
    ("2010年代以来长征火箭发射了多少次？", "launch_date >= '2010-01-01'\n"),
    ("How many launches have there been since the 2010s?", "launch_date >= '2010-01-01'\n"),
    ("上世纪90年代以前首飞的飞机有哪些？", "first_flight_date < '1990-01-01'\n"),
])
def test_a_decade_with_since_or_before_is_open(planner, question, condition):
    plan = planner.plan(question)
    assert plan.caveat is None and condition in plan.sql + "\n", plan.sql


@pytest.mark.parametrize("question", ["Which rocket racked up the most successes in 2022?",
                                      "Of all payloads put up during the 2010s, what percentage is still operational today?",
                                      "2022年4月到8月有多少次发射是去太阳同步轨道的？",
                                      "各国运营的有效载荷中，处于失效状态的比例分别是多少？"])
def test_words_that_say_nothing_raise_no_caveat(planner, question):
    plan = planner.plan(question)
    assert plan.sql is not None and plan.caveat is None, plan.caveat
    assert planner.plan("How many launches were there today?").caveat is not None  # "today" alone is a period


def test_a_period_past_the_data_is_said_after_the_result(sample_db_path):
    late = OfflinePlanner(SQLiteSource(sample_db_path), today=date(2026, 11, 30),
                          vocabulary=DomainVocabulary.beside(sample_db_path))
    plan = late.plan("过去三年里，从萨迪什·达万航天中心发射了多少次？")
    assert plan.caveat is None and "2025-12-28" in data_ends(plan.frame)
    none = late.plan("How many launches were there in March this year?")  # none of the data: not an answer
    assert none.caveat is not None and data_ends(none.frame) is None
