"""What the forty-second re-walk found (issue 38), read right now:

- "How many payloads was that?" after the manufacturer with the greatest total mass: that pick's count beside its
  mass (it was read alone: every payload, marked answered);
- 按轨道分别是多少？ after an average mass: that average per orbit (多少 is "how much" here; it counted payloads);
- a day in a date (从2024年10月1日起, "since 1 January last year", "on 2024-03-15"): declined in the 41st and 42nd walks
  ("I could not tell what 1 refers to").
"""

from __future__ import annotations

from datetime import date

import pytest

from agent.planner.period_grammar import named_periods
from tests.agent.planner.test_planner_followup import planner, sample  # noqa: F401 (fixtures)
from tests.agent.planner.test_planner_within_groups import _conversation, _rows


def test_how_many_was_that_counts_the_pick(sample_db_path, tmp_path):
    answer = _conversation(sample_db_path, tmp_path, "Which manufacturer's payloads launched last year had the greatest "
                           "total mass?", "How many payloads was that?")
    gold = ("SELECT m.name, COUNT(*) FROM payloads p JOIN launches l ON l.id = p.launch_id JOIN manufacturers m "
            "ON m.id = p.manufacturer_id WHERE l.launch_date LIKE '2025%' AND m.name = 'SpaceX'")
    assert answer.ok and [(r[0], r[-1]) for r in answer.data.rows] == sample(sample_db_path, gold)


def test_what_each_is_after_an_average_is_that_average_per_group(sample_db_path, tmp_path):
    answer = _conversation(sample_db_path, tmp_path, "空客防务与航天公司制造的有效载荷平均质量是多少公斤？", "按轨道分别是多少？")
    gold = ("SELECT p.orbit, AVG(p.mass_kg) FROM payloads p JOIN manufacturers m ON m.id = p.manufacturer_id "
            "WHERE m.name_zh = '空客防务与航天公司' GROUP BY p.orbit")
    assert answer.ok and "AVG" in answer.data.sql.upper()
    assert len(answer.data.rows) == len(sample(sample_db_path, gold))


@pytest.mark.parametrize("text, since, until", [
    ("从2024年10月1日起", date(2024, 10, 1), None), ("2024年3月15日", date(2024, 3, 15), date(2024, 3, 16)),
    ("since 1 January last year", date(2025, 1, 1), None), ("since January 1, 2024", date(2024, 1, 1), None),
    ("after the 3rd of March 2023", date(2023, 3, 4), None), ("before 2024-03-15", None, date(2024, 3, 15)),
])
def test_a_day_in_a_date(text, since, until):
    period, = named_periods(text, date(2026, 11, 29))
    assert (period.kind, period.since, period.until) == ("day", since, until)


def test_a_day_after_which_launches_are_counted(planner, sample_db_path):
    plan = planner.plan("从2024年10月1日起，长征系列火箭发射了多少次？")
    gold = ("SELECT COUNT(*) FROM launches l JOIN launch_vehicles v ON v.id = l.vehicle_id JOIN vehicle_families f "
            "ON f.id = v.family_id WHERE f.name = 'Long March' AND l.launch_date >= '2024-10-01'")
    assert plan.caveat is None and _rows(planner, plan.sql) == sample(sample_db_path, gold)
