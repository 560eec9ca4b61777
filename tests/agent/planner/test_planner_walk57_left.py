"""What the fifty-seventh re-walk left flagged or declined (issue 38), read now:

- "both crewed and cargo payloads", 既…又…, 和…都: each row asked about with some rows of each value (two counts,
  each above zero), not rows of either value; "both" of a shape not read so still declines.
- Fractions compared ("more than a quarter of their payloads", 超过四分之一, 一半以上) and "10 percent of" are the
  percentage they say, kept by a HAVING as "10%" is.
- 每种部件的最高单价和最低单价: both ends per group (it was ranked by one row and shown as answered).
- "no launch site of their own" and "aren't" are read.
"""

from __future__ import annotations

import pytest

from tests.agent.planner.test_planner_followup import planner, result, sample, talk  # noqa: F401 (fixtures)
from tests.agent.planner.test_planner_within_groups import _rows

_BOTH = ("SELECT s.name_zh FROM payloads p JOIN launches l ON l.id = p.launch_id JOIN launch_sites s ON s.id = l.site_id "
         "GROUP BY s.id HAVING SUM(p.purpose = 'crewed') > 0 AND SUM(p.purpose = 'cargo') > 0")


@pytest.mark.parametrize("question", ["Which launch sites hosted both crewed and cargo launches?",
                                      "哪些发射场既发射过载人载荷又发射过货运载荷？", "哪些发射场载人和货运载荷都发射过？"])
def test_both_values_are_two_counts_each_above_zero(planner, sample_db_path, question):
    plan = planner.plan(question)
    shown = {row[0] for row in _rows(planner, plan.sql)}
    gold = {row[0] for row in sample(sample_db_path, _BOTH)}
    names = {row[0] for row in sample(sample_db_path, _BOTH.replace("s.name_zh", "s.name"))}
    assert plan.caveat is None and shown in (gold, names) and len(gold) == 7


def test_both_of_rows_not_counted_so_still_declines(planner):
    plan = planner.plan("Which orbits received both crewed and cargo payloads in 2024?")
    assert plan.sql is None and "two conditions at once" in str(plan.failure)


@pytest.mark.parametrize("question, percent", [
    ("Which operator countries had more than a quarter of their payloads fail?", "> 25"),
    ("哪些国家超过四分之一的载荷失败了？", "> 25"),
    ("Which operator countries had more than 10 percent of their payloads listed as failed?", "> 10"),
    ("哪些运营国家一半以上的载荷是通信卫星？", ">= 50"),
])
def test_a_fraction_compared_is_its_percentage(planner, question, percent):
    plan = planner.plan(question)
    assert plan.caveat is None and f"/ COUNT(*) {percent}" in plan.sql, plan.sql


def test_a_third_is_compared_exactly_and_their_is_the_groups(planner, sample_db_path):
    plan = planner.plan("Which orbits had more than a third of their payloads fail?")
    gold = ("SELECT orbit FROM payloads GROUP BY orbit HAVING 3 * SUM(status = 'failed') > COUNT(*)")
    assert plan.caveat is None
    assert {r[0] for r in _rows(planner, plan.sql)} == {r[0] for r in sample(sample_db_path, gold)}
    assert "the first quarter" not in planner.plan("How many launches happened in the first quarter of 2024?").sql


def test_both_ends_said_each_with_the_column_word_per_group(planner, sample_db_path):
    plan = planner.plan("每种部件类型的最高单价和最低单价分别是多少？")
    gold = "SELECT component, MIN(unit_cost_usd), MAX(unit_cost_usd) FROM aircraft_hardware GROUP BY component"
    assert plan.caveat is None and _rows(planner, plan.sql) == sorted(sample(sample_db_path, gold))
    plan = planner.plan("What are the highest and lowest unit costs for each component?")
    assert plan.caveat is None and _rows(planner, plan.sql) == sorted(sample(sample_db_path, gold))


def test_of_their_own_and_arent_are_read(planner, talk, sample_db_path):
    plan = planner.plan("Which countries operate payloads but have no launch site of their own?")
    assert plan.caveat is None
    talk.ask("Which aircraft models have more than 1000 units built?")
    _, answer = talk.ask("Which of them aren't airliners?")
    gold = "SELECT model FROM aircraft WHERE units_built > 1000 AND role != 'airliner'"
    assert "caveat" not in answer and sorted(result(talk)) == sorted(sample(sample_db_path, gold))
