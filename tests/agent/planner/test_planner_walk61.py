"""What the sixty-first re-walk found (issue 38; 11 right, 5 right with a caveat, none confidently wrong), read now:

- E1/E2 "How many payloads have gone up so far this decade?" grouped every decade (the right figure one row of three)
  and "the previous decade" was left out: "this decade", "so far this decade", "the previous decade" are periods.
- Right answers flagged by words that say nothing: "… alone" (for Chinese rockets alone), 来自 (from), 技术试验
  (the sample vocabulary's technology payloads), 送上天.
- Z7 有没有失败过？ was read as a negation: "has it ever failed" is how many times it did.
"""

from __future__ import annotations

import pytest

from tests.agent.planner.test_planner_followup import planner, sample, talk  # noqa: F401 (fixtures)
from tests.agent.planner.test_planner_within_groups import _rows


@pytest.mark.parametrize("question, condition", [
    ("How many payloads have gone up so far this decade?", "launch_date >= '2020-01-01' AND launches.launch_date < "),
    ("How many launches were there in the previous decade?", "launch_date >= '2010-01-01' AND launch_date < '2020-01-01'"),
    ("How many launches were there this decade?", "launch_date >= '2020-01-01' AND launch_date < '2030-01-01'"),
])
def test_this_and_the_previous_decade_are_periods(planner, question, condition):
    plan = planner.plan(question)
    assert plan.caveat is None and condition in plan.sql and "GROUP BY" not in plan.sql, plan.sql


@pytest.mark.parametrize("question", ["What share of launches went to LEO for Chinese rockets alone?",
                                      "去年发射的技术试验类有效载荷有多少个？"])
def test_words_that_say_nothing_here(planner, question):
    plan = planner.plan(question)
    assert plan.sql is not None and plan.caveat is None, plan.caveat


def test_has_it_ever_is_how_many_times(planner, sample_db_path):
    plan = planner.plan("织女星-C总共发射过几次？有没有失败过？")
    gold = ("SELECT COUNT(*), SUM(CASE WHEN l.outcome = 'failure' THEN 1 ELSE 0 END) FROM launches l JOIN launch_vehicles v "
            "ON v.id = l.vehicle_id WHERE v.name_zh = '织女星-C'")
    assert plan.caveat is None and _rows(planner, plan.sql) == sample(sample_db_path, gold)
