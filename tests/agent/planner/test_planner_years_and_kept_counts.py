"""Years named side by side, a count kept over other dates, and counts of one row each (issue 38, the
twenty-seventh re-walk's confidently wrong answers, each asked here as the analyst did).

2016年和2020年，各用途的载荷分别有多少个？ pooled both years into one count per purpose; "How many launches did each
of them host in 2025?" after the sites with more than 20 launches kept "more than 20" as a filter on 2025's
launches (no site had so many, and the answer said no rows match); 每个国家的飞机制造商中，机型最多的分别是哪家？ counted
each aircraft model's one maker and kept all 69 models as tied first.
"""

from __future__ import annotations

import pytest

from tests.agent.planner.test_planner_followup import planner, sample  # noqa: F401 (fixtures)
from tests.agent.planner.test_planner_within_groups import _conversation, _rows


@pytest.mark.parametrize("question", ["2016年和2020年，各用途的载荷分别有多少个？",
                                      "How many payloads of each purpose were launched in 2016 and in 2020, respectively?"])
def test_years_named_side_by_side_are_each_their_own_figure(planner, sample_db_path, question):
    plan = planner.plan(question)
    gold = ("SELECT strftime('%Y', l.launch_date), p.purpose, COUNT(*) FROM payloads p JOIN launches l "
            "ON l.id = p.launch_id WHERE strftime('%Y', l.launch_date) IN ('2016', '2020') GROUP BY 1, 2")
    assert plan.caveat is None and _rows(planner, plan.sql) == sorted(sample(sample_db_path, gold))


@pytest.mark.parametrize("question", ["How many launches were there in 2016 or 2020 for each vehicle?",
                                      "How many launches were there in 2016 and 2020?"])
def test_years_as_alternatives_or_with_no_each_stay_one_filter(planner, question):
    assert "GROUP BY strftime" not in planner.plan(question).sql


def test_the_years_of_a_filter_are_all_said(sample_db_path, tmp_path):
    answer = _conversation(sample_db_path, tmp_path, "2016年和2020年，各用途的载荷分别有多少个？")
    assert "2016年或2020年" in answer.data.text


@pytest.mark.parametrize("questions", [
    ("Which launch sites that opened in 2000 or later have hosted more than 20 launches?",
     "How many launches did each of them host in 2025?"),
    ("哪些火箭发射次数超过50次？", "其中2024年各发射了多少次？"),
])
def test_each_of_them_over_other_dates_does_not_count_them_again_by_the_old_threshold(sample_db_path, tmp_path,
                                                                                     questions):
    answer = _conversation(sample_db_path, tmp_path, *questions)
    assert not answer.ok and "HAVING" not in answer.data.sql and answer.data.rows
    assert ("20" if questions[0].isascii() else "50") in answer.data.caveat


def test_the_same_question_of_other_dates_keeps_its_count(sample_db_path, tmp_path):
    answer = _conversation(sample_db_path, tmp_path, "Which launch vehicles flew more than 10 times since 2015?",
                           "And since 2020?")
    assert answer.ok and "HAVING COUNT(*) > 10" in answer.data.sql and "2020" in answer.data.sql


def test_a_count_of_one_row_each_is_never_ok(sample_db_path, tmp_path):
    answer = _conversation(sample_db_path, tmp_path, "每个国家的飞机制造商中，机型最多的分别是哪家？")
    assert not answer.ok and "1" in answer.data.caveat
