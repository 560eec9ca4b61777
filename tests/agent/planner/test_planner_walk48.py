"""Left by the forty-seventh re-walk's fixes and the forty-eighth re-walk (issue 38), read right now:

- 2025年发射的通信卫星里，其他国家运营的有多少颗？: the countries before 运营的 say who operates what is counted (the
  satellites, the table word before them), not the thing counted (it counted countries).
- 美国以外的国家 (other than the US, said after the value): the value is excluded, as 除了美国以外 excludes it (it was
  read as the US itself, or flagged).
"""

from __future__ import annotations

from tests.agent.planner.test_planner_followup import planner, sample  # noqa: F401 (fixtures)
from tests.agent.planner.test_planner_within_groups import _rows

_COMMS_2025 = ("SELECT COUNT(*) FROM payloads p JOIN launches l ON l.id = p.launch_id LEFT JOIN countries c ON "
               "c.id = p.operator_country_id WHERE l.launch_date LIKE '2025%' AND p.purpose = 'communications'")


def test_a_clause_before_the_count_says_who_not_what(planner):
    plan = planner.plan("2025年发射的通信卫星里，其他国家运营的有多少颗？")
    assert "FROM payloads" in plan.sql and "COUNT(DISTINCT" not in plan.sql
    assert plan.caveat is not None and "其他" in plan.caveat  # the others: of which country, not said


def test_outside_a_value_said_after_it_excludes_it(planner, sample_db_path):
    plan = planner.plan("2025年发射的通信卫星里，美国以外的国家运营的有多少颗？")
    gold = _COMMS_2025 + " AND c.name_zh != '美国'"
    assert plan.caveat is None and _rows(planner, plan.sql) == sample(sample_db_path, gold)
    plan = planner.plan("2024年，SpaceX之外的制造商造了多少颗卫星？")
    gold = ("SELECT COUNT(*) FROM payloads p JOIN launches l ON l.id = p.launch_id JOIN manufacturers m ON "
            "m.id = p.manufacturer_id WHERE l.launch_date LIKE '2024%' AND m.name != 'SpaceX'")
    assert plan.caveat is None and _rows(planner, plan.sql) == sample(sample_db_path, gold)


def test_outside_closing_an_except_is_read_once(planner, sample_db_path):
    plan = planner.plan("除了美国以外，哪个国家运营的卫星最多？")
    gold = ("SELECT c.name_zh FROM payloads p JOIN countries c ON c.id = p.operator_country_id WHERE c.name_zh != '美国' "
            "GROUP BY c.id ORDER BY COUNT(*) DESC LIMIT 1")
    assert plan.caveat is None and _rows(planner, plan.sql)[0][0] == sample(sample_db_path, gold)[0][0]
