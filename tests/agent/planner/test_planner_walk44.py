"""What the forty-third re-walk left and the forty-fourth found (issue 38), read right now:

- 2023年第四季度，有多少次发射搭载了不止一个有效载荷？: 不止 is "more than" (it read 一 as a number with nothing to
  count, and declined).
"""

from __future__ import annotations

from tests.agent.planner.test_planner_followup import planner, sample  # noqa: F401 (fixtures)
from tests.agent.planner.test_planner_within_groups import _rows


def test_not_only_one_is_more_than_one(planner, sample_db_path):
    plan = planner.plan("2023年第四季度，有多少次发射搭载了不止一个有效载荷？")
    gold = ("SELECT COUNT(*) FROM (SELECT l.id FROM launches l JOIN payloads p ON p.launch_id = l.id "
            "WHERE l.launch_date BETWEEN '2023-10-01' AND '2023-12-31' GROUP BY l.id HAVING COUNT(*) > 1)")
    assert plan.caveat is None and _rows(planner, plan.sql) == sample(sample_db_path, gold)
