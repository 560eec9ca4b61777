"""The planner's vocabulary (issue 38): words of a total read as the SUM of the measure they follow or
precede, from one list (`agent.planner.lexicon.KEYWORDS`, `ZH_WORDS`); filler and question words never
raise a caveat, while a word naming a condition, measure or grouping the query does not use still does."""

from __future__ import annotations

from datetime import date

import pytest

from agent.offline_planner import OfflinePlanner
from agent.sources.sqlite import SQLiteSource
from agent.vocabulary.domain import DomainVocabulary

TODAY = date(2026, 3, 15)


@pytest.fixture(scope="module")
def planner(sample_db_path) -> OfflinePlanner:
    return OfflinePlanner(SQLiteSource(sample_db_path), today=TODAY, vocabulary=DomainVocabulary.beside(sample_db_path))


@pytest.mark.parametrize("question", [
    "发射的载荷质量总和是多少？", "载荷质量合计是多少？", "载荷质量总计是多少？", "载荷质量一共是多少？", "载荷质量总共是多少？",
    "载荷的总质量是多少？", "What is the payload mass in total?", "What is the combined mass of payloads?",
    "What is the mass of all payloads altogether?", "What is the sum of payload mass?", "What is the total payload mass?",
])
def test_a_word_of_a_total_with_a_numeric_measure_is_its_sum(planner, question):
    plan = planner.plan(question)
    assert "SUM(" in plan.sql and "mass_kg" in plan.sql and "COUNT" not in plan.sql, plan.sql
    assert plan.caveat is None, plan.caveat


@pytest.mark.parametrize("question", ["一共有多少次发射？", "总共有多少次发射？", "How many launches in total?",
                                      "How many launches were there altogether?", "2020年一共有多少次发射？"])
def test_a_count_in_total_stays_a_count(planner, question):
    plan = planner.plan(question)
    assert "COUNT(*)" in plan.sql and "SUM(" not in plan.sql, plan.sql
    assert plan.caveat is None, plan.caveat


# -- filler and question words never raise a caveat --------------------------------------------------

@pytest.mark.parametrize("question", [
    "Which launch vehicles are still active?",
    "How many launch vehicles are currently active?",
    "How many launches has SpaceX made so far?",
    "How many satellites does China operate?",
    "Which country operates the most satellites?",
    "How many aircraft models does Boeing have?",
    "How many models does Airbus make?",
    "Which manufacturers make launch vehicles?",
    "载荷的平均质量是多少？",
    "中国目前有多少颗卫星？",
    "现在有多少枚火箭？",
    "波音公司生产了多少种飞机？",
    "波音有多少架飞机？",
    # The third and fourth re-walks: verbs of sending and carrying out, 境内, "jets" for aircraft.
    "What was the total payload mass sent to GTO in Q3 2020?",
    "What share of Falcon 9 launches went to LEO?",
    "Which fighter jets have a max speed above 2,400 km/h?",
    "俄罗斯境内有哪些发射场？",
    "2023年下半年太原卫星发射中心执行了哪些发射任务？",
    # The fifth re-walk: carrying out, "over the last 2 years", "with its" of the rows listed.
    "How many launches did China carry out in the first half of 2022?",
    "Number of launches per orbit over the last 2 years",
    "List every Falcon Heavy launch with its date and mission name.",
    # The sixth re-walk: a kind word after its column, 年间, a ranking in a period.
    "2013年到2016年间，各轨道类型的发射次数分别是多少？",
    "How many launches per orbit type in 2020?",
    "Which three launch vehicles flew the most in the first half of 2023?",
])
def test_filler_and_question_words_raise_no_caveat(planner, question):
    plan = planner.plan(question)
    assert plan.sql is not None, plan.failure
    assert plan.caveat is None, plan.caveat  # "over the last 2 years" in 2026: the data's end said after the result


@pytest.mark.parametrize("question, named", [
    # a condition the query does not use ("in service" is the sample vocabulary's phrase for the vehicles' 'active')
    ("Which Boeing aircraft are still in service?", "'active'"),
    ("How many launches were there in 2020 on a Tuesday?", "'Tuesday'"),
    ("现在有多少枚火箭仍在使用？", "“使用”"),
    ("How many launch vehicles are still active per weekday?", "'weekday'"),
])
def test_a_word_naming_what_the_query_does_not_use_still_raises_one(planner, question, named):
    caveat = planner.plan(question).caveat
    assert caveat is not None and named in caveat
    assert "still" not in caveat and "现在" not in caveat and "枚" not in caveat


@pytest.mark.parametrize("question, measured", [("How high was the success rate of launches in 2020?", "percent"),
                                                ("2020年发射的成功率有多高？", "percent"),
                                                ("猎鹰9号有多高？", "height_m")])
def test_how_high_asks_for_the_rate_or_for_a_height(planner, question, measured):
    plan = planner.plan(question)
    assert measured in plan.sql and plan.caveat is None, plan.sql
