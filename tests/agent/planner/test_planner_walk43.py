"""What the forty-third re-walk found (issue 38), read right now:

- 哪个国家的飞机制造商生产的战斗机型号最多？: the most models (each aircraft row one), counted per country, not the most
  common model (it grouped by country and model, every count 1, all 17 fighters tied, marked answered);
- "Give me the monthly launch counts for 2025.": "counts" is a count (a false caveat on a right answer).
"""

from __future__ import annotations

from tests.agent.planner.test_planner_followup import planner, sample  # noqa: F401 (fixtures)
from tests.agent.planner.test_planner_within_groups import _rows


def test_the_most_models_counts_them(planner, sample_db_path):
    plan = planner.plan("哪个国家的飞机制造商生产的战斗机型号最多？")
    gold = ("SELECT c.name_zh, COUNT(*) FROM aircraft a JOIN manufacturers m ON m.id = a.manufacturer_id JOIN countries c "
            "ON c.id = m.country_id WHERE a.role = 'fighter' GROUP BY c.id ORDER BY 2 DESC LIMIT 1")
    assert plan.caveat is None and _rows(planner, plan.sql) == sample(sample_db_path, gold)


def test_counts_is_a_count(planner, sample_db_path):
    plan = planner.plan("Give me the monthly launch counts for 2025.")
    gold = "SELECT substr(launch_date, 1, 7), COUNT(*) FROM launches WHERE launch_date LIKE '2025%' GROUP BY 1"
    assert plan.caveat is None and _rows(planner, plan.sql) == sorted(sample(sample_db_path, gold))
