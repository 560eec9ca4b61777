"""What the thirty-fifth re-walk found (issue 38), read right now:

- "How many times did rockets lift off from Jiuquan …?" counts the launches (the dated rows below the rockets), not the
  rockets that flew;
- 按速度从高到低排列 orders by a column named in part (速度 of the one speed column);
- 再 ("again"), the numbers of the question an answer builds on, and Jiuquan carried into "Break that down by rocket."
  raise no caveat.
"""

from __future__ import annotations

from tests.agent.planner.test_planner_followup import planner, sample  # noqa: F401 (fixtures)
from tests.agent.planner.test_planner_within_groups import _conversation, _rows


def test_how_many_times_counts_the_rows_below_the_things_named(planner, sample_db_path):
    plan = planner.plan("How many times did rockets lift off from Jiuquan between January and April 2025?")
    gold = ("SELECT COUNT(*) FROM launches l JOIN launch_sites s ON s.id = l.site_id WHERE s.name LIKE 'Jiuquan%' "
            "AND l.launch_date BETWEEN '2025-01-01' AND '2025-04-30'")
    assert plan.caveat is None and "DISTINCT" not in plan.sql
    assert _rows(planner, plan.sql) == sorted(sample(sample_db_path, gold))


def test_by_a_column_named_in_part_from_high_to_low_orders_by_it(planner, sample_db_path):
    plan = planner.plan("最高速度超过2000公里/小时的战斗机有哪些？按速度从高到低排列。")
    assert plan.caveat is None and "ORDER BY max_speed_kmh DESC" in plan.sql and "GROUP BY" not in plan.sql


def test_again_and_what_the_answer_builds_on_raise_no_caveat(sample_db_path, tmp_path):
    again = _conversation(sample_db_path, tmp_path, "哪些火箭家族从2018年起就没有再发射过？")
    assert again.ok and again.data.caveat is None, again.data.caveat
    month = _conversation(sample_db_path, tmp_path, "2025年1月到5月，按月统计发射次数。", "哪个月的失败次数最多？")
    assert month.ok and month.data.caveat is None, month.data.caveat
    rocket = _conversation(sample_db_path, tmp_path,
                           "How many times did rockets lift off from Jiuquan between January and April 2025?",
                           "Break that down by rocket.")
    assert rocket.ok and rocket.data.caveat is None, rocket.data.caveat
    assert sum(row[-1] for row in rocket.data.rows) == 10
