"""The period grammar (issue 38), shared by the offline planner and the trust checks: halves, quarters,
months and month ranges, ranges open at one end, decades and periods counted from today, in English and
Chinese, each a half-open range of dates on the date column, stated in the answer's first sentence.

Planned directly and through the loop's tools, with `today` fixed."""

from __future__ import annotations

from datetime import date

import pytest

from agent.notes import note

from agent.offline_planner import OfflinePlanner
from agent.planner.period_grammar import named_periods
from agent.sources.sqlite import SQLiteSource
from agent.checks.turn import missing_periods
from bench.planner_questions import Conversation
from agent.vocabulary.domain import DomainVocabulary

TODAY = date(2026, 3, 15)


@pytest.fixture(scope="module")
def planner(sample_db_path) -> OfflinePlanner:
    return OfflinePlanner(SQLiteSource(sample_db_path), today=TODAY, vocabulary=DomainVocabulary.beside(sample_db_path))


@pytest.mark.parametrize("text, since, until", [
    ("the second half of 2022", "2022-07-01", "2023-01-01"),
    ("H1 2023", "2023-01-01", "2023-07-01"),
    ("2023年下半年", "2023-07-01", "2024-01-01"),
    ("Q3 2021", "2021-07-01", "2021-10-01"),
    ("the third quarter of 2021", "2021-07-01", "2021-10-01"),
    ("2021年第三季度", "2021-07-01", "2021-10-01"),
    ("between March and June 2021", "2021-03-01", "2021-07-01"),
    ("from March to June 2021", "2021-03-01", "2021-07-01"),
    ("2021年3月到6月", "2021-03-01", "2021-07-01"),
    ("since March 2024", "2024-03-01", None),
    ("2024年3月以后", "2024-03-01", None),  # 以后 includes the month it follows
    ("before 2010", None, "2010-01-01"),
    ("2010年之前", None, "2010-01-01"),
    ("after 2015", "2016-01-01", None),
    ("the last 6 months", "2025-09-15", "2026-03-16"),
    ("this quarter", "2026-01-01", "2026-04-01"),
    ("year to date", "2026-01-01", "2026-03-16"),
    ("YTD", "2026-01-01", "2026-03-16"),
    ("今年以来", "2026-01-01", "2026-03-16"),
    ("the 2010s", "2010-01-01", "2020-01-01"),
    ("2010年代", "2010-01-01", "2020-01-01"),
])
def test_the_grammar_reads_each_shape_as_a_half_open_range(text, since, until):
    [period] = named_periods(f"How many launches {text}?", TODAY)
    assert period.text == text
    assert (str(period.since) if period.since else None, str(period.until) if period.until else None) == (since, until)


def test_periods_counted_from_today_need_a_today():
    assert named_periods("How many launches this quarter?") == []
    assert [p.text for p in named_periods("How many launches in Q3 2021?")] == ["Q3 2021"]


@pytest.mark.parametrize("question, condition, stated", [
    ("How many launches were there in the second half of 2022?",
     "launch_date >= '2022-07-01' AND launch_date < '2023-01-01'", "from 2022-07-01 to 2022-12-31"),
    ("How many launches in H1 2023?", "launch_date >= '2023-01-01' AND launch_date < '2023-07-01'",
     "from 2023-01-01 to 2023-06-30"),
    ("2023年下半年有多少次发射？", "launch_date >= '2023-07-01' AND launch_date < '2024-01-01'",
     "2023-07-01至2023-12-31"),
    ("How many launches in Q3 2021?", "launch_date >= '2021-07-01' AND launch_date < '2021-10-01'",
     "from 2021-07-01 to 2021-09-30"),
    ("How many launches in the third quarter of 2021?", "launch_date >= '2021-07-01' AND launch_date < '2021-10-01'",
     "from 2021-07-01 to 2021-09-30"),
    ("2021年第三季度有多少次发射？", "launch_date >= '2021-07-01' AND launch_date < '2021-10-01'",
     "2021-07-01至2021-09-30"),
    ("How many launches between March and June 2021?", "launch_date >= '2021-03-01' AND launch_date < '2021-07-01'",
     "from 2021-03-01 to 2021-06-30"),
    ("2021年3月到6月有多少次发射？", "launch_date >= '2021-03-01' AND launch_date < '2021-07-01'",
     "2021-03-01至2021-06-30"),
    ("How many launches since March 2024?", "launch_date >= '2024-03-01'", "from 2024-03-01 on"),
    ("2024年3月以后有多少次发射？", "launch_date >= '2024-03-01'", "2024-03-01及以后"),
    ("How many launches before 2010?", "launch_date < '2010-01-01'", "before 2010"),
    ("How many launches after 2015?", "launch_date >= '2016-01-01'", "after 2015"),
    ("How many launches in the last 6 months?", "launch_date >= '2025-09-15' AND launch_date < '2026-03-16'",
     "from 2025-09-15 to 2026-03-15"),
    ("How many launches this quarter?", "launch_date >= '2026-01-01' AND launch_date < '2026-04-01'",
     "from 2026-01-01 to 2026-03-31"),
    ("How many launches year to date?", "launch_date >= '2026-01-01' AND launch_date < '2026-03-16'",
     "from 2026-01-01 to 2026-03-15"),
    ("今年以来有多少次发射？", "launch_date >= '2026-01-01' AND launch_date < '2026-03-16'", "2026-01-01至2026-03-15"),
    ("How many launches in the 2010s?", "launch_date >= '2010-01-01' AND launch_date < '2020-01-01'",
     "from 2010-01-01 to 2019-12-31"),
    ("2010年代有多少次发射？", "launch_date >= '2010-01-01' AND launch_date < '2020-01-01'", "2010-01-01至2019-12-31"),
])
def test_a_period_is_a_range_on_the_date_stated_in_the_first_sentence(planner, question, condition, stated):
    plan = planner.plan(question)
    # a period counted back from today (2026-03-15) runs past the sample's last launch: said after the result,
    # and as the caveat when none of the data is in it (this year's)
    assert plan.caveat == (past_the_data(plan) if plan.frame.data_none else None), plan.caveat
    assert f"WHERE {condition}" in plan.sql and "GROUP BY" not in plan.sql
    _, answer = Conversation(planner, planner.database).ask(question)
    text = answer["text"].removeprefix(plan.caveat or "").strip()  # the first sentence after the caveat
    first = text.split("。")[0] if "。" in text else text.split(". ")[0]
    assert stated in first
    assert missing_periods(question, plan.sql) == []  # the check agrees with the planner


def test_a_year_column_takes_the_years_and_says_what_part_of_a_year_it_cannot_hold(planner):
    plan = planner.plan("How many launch sites opened in the 2010s?")
    assert "opened_year BETWEEN 2010 AND 2019" in plan.sql and plan.caveat is None
    plan = planner.plan("Which launch sites opened in the second half of 2010?")
    assert "opened_year BETWEEN 2010 AND 2010" in plan.sql
    assert plan.caveat == "I could not use 'the second half of 2010': the answer below leaves it out."


def test_a_follow_up_replaces_the_year_with_the_period(planner):
    talk = Conversation(planner, planner.database)
    talk.ask("How many launches were there in 2020?")
    _, answer = talk.ask("and in the second half of 2021?")
    assert "launch_date >= '2021-07-01' AND launch_date < '2022-01-01'" in answer["sql"]
    assert "2020" not in answer["sql"]


def past_the_data(plan) -> str | None:
    """The note a period counted past the data's last date adds after the result (`planner.past_the_data`)."""
    return note("planner.past_the_data", zh=plan.zh, last=plan.frame.data_end) if plan.frame.data_end else None


def test_a_period_past_the_data_is_said_and_in_the_data_is_counted_back_from_its_end(planner):
    """The query uses every word, so the answer stands (issue 38's walks read a caveat here as a right answer
    flagged); the data's end is said after the result."""
    plan = planner.plan("How many launches in the last 6 months?")
    assert plan.frame.data_end == "2025-12-28" and plan.caveat is None
    _, answer = Conversation(planner, planner.database).ask("How many launches in the last 6 months?")
    assert answer["text"].endswith(past_the_data(plan)) and "caveat" not in answer
    kept = planner.plan("How many launches in the last 6 months in the data?")
    assert kept.caveat is None and "launch_date >= '2025-06-28' AND launch_date < '2025-12-29'" in kept.sql
