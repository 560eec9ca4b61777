"""What the fortieth re-walk found (issue 38), read right now:

- "Which aircraft first flew between 2010 and 2015, and what role does each have?" shows which aircraft beside each
  role (it showed the roles alone, marked answered);
- 它总共失败过几次？ after 猎鹰9号's latest failed launch: 它 is the rocket the answer kept, read, not named as unused;
- 成功率各是多少？: 各 with no noun after it points back at the rows before;
- "November and December of last year": two months of a year counted from today.
"""

from __future__ import annotations

from tests.agent.planner.test_planner_followup import planner, sample  # noqa: F401 (fixtures)
from tests.agent.planner.test_planner_within_groups import _conversation, _rows


def test_which_rows_and_what_of_each_shows_the_rows_by_name(planner, sample_db_path):
    plan = planner.plan("Which aircraft first flew between 2010 and 2015, and what role does each have?")
    gold = "SELECT model, role FROM aircraft WHERE first_flight_date BETWEEN '2010-01-01' AND '2015-12-31'"
    assert plan.caveat is None and _rows(planner, plan.sql) == sorted(sample(sample_db_path, gold))


def test_it_after_a_named_rockets_latest_failure_is_the_rocket(sample_db_path, tmp_path):
    answer = _conversation(sample_db_path, tmp_path, "猎鹰9号最近一次发射失败是在什么时候？", "它总共失败过几次？")
    gold = ("SELECT COUNT(*) FROM launches l JOIN launch_vehicles v ON v.id = l.vehicle_id "
            "WHERE v.name = 'Falcon 9' AND l.outcome = 'failure'")
    assert answer.ok and [tuple(r) for r in answer.data.rows] == sample(sample_db_path, gold)


def test_each_with_no_noun_points_back(sample_db_path, tmp_path):
    answer = _conversation(sample_db_path, tmp_path, "2020年到2024年，日本和印度的火箭分别发射了多少次？", "成功率各是多少？")
    assert answer.ok and answer.data.caveat is None and len(answer.data.rows) == 2


def test_two_months_of_last_year(planner, sample_db_path):
    plan = planner.plan("How many launches were there in November and December of last year?")
    gold = "SELECT COUNT(*) FROM launches WHERE launch_date BETWEEN '2025-11-01' AND '2025-12-31'"
    assert plan.caveat is None and _rows(planner, plan.sql) == sample(sample_db_path, gold)
