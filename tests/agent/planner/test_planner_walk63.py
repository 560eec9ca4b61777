"""What the sixty-third re-walk found (issue 38; 16 right, 4 right with a caveat, 7 confidently wrong), read so far:

- E16 "What is the average height of the rockets that have launched from Wenchang?" averaged once per launch (each
  rocket repeated by the join to its launches): an average or total of the rows' own column over conditions on rows
  below them takes each row once (`WHERE key IN (…)`).
- Z16 2010年代，哪个国家的火箭失败次数最多？失败率是多少？ ranked by all launches: the count the question ranks by is
  the rate's own condition (the failures).
- Z5 换成美国的火箭呢？ after counts per quarter of Chinese rockets listed American rockets: a table word right after
  the new value says whose it is, the same figure.
"""

from __future__ import annotations

from tests.agent.planner.test_planner_followup import planner, result, sample, talk  # noqa: F401 (fixtures)
from tests.agent.planner.test_planner_within_groups import _rows


def test_an_average_of_the_rows_own_column_takes_each_row_once(planner, sample_db_path):
    plan = planner.plan("What is the average height of the rockets that have launched from Wenchang?")
    gold = ("SELECT AVG(height_m) FROM launch_vehicles WHERE id IN (SELECT l.vehicle_id FROM launches l JOIN launch_sites s "
            "ON s.id = l.site_id WHERE s.name = 'Wenchang Space Launch Site')")
    assert plan.caveat is None and _rows(planner, plan.sql) == sample(sample_db_path, gold)


def test_the_count_ranked_by_is_the_rates_condition(planner, sample_db_path):
    plan = planner.plan("2010年代，哪个国家的火箭失败次数最多？失败率是多少？")
    rows = _rows(planner, plan.sql)
    assert plan.caveat is None and len(rows) == 1 and rows[0][0] == "美国" and rows[0][-1] == 6


def test_a_new_value_with_its_table_word_keeps_the_figure(talk):
    talk.ask("2022年第二季度到2023年第一季度，中国的火箭每个季度各发射了多少次？")
    _, answer = talk.ask("换成美国的火箭呢？")
    assert "caveat" not in answer and "GROUP BY" in answer["sql"] and "'美国'" in answer["sql"]
    assert [len(r) for r in result(talk)] == [2, 2, 2, 2]


def test_their_after_a_part_of_a_whole_is_the_rows_own(talk):
    """Found asking the session's questions in one conversation on the page: "more than a quarter of their payloads"
    after another question was read as its follow-up (and flagged); "their" there is each country's own."""
    talk.ask("Which launch sites hosted both crewed and cargo launches?")
    _, answer = talk.ask("Which operator countries had more than a quarter of their payloads fail?")
    assert "caveat" not in answer and "/ COUNT(*) > 25" in answer["sql"] and "launch_sites" not in answer["sql"]
