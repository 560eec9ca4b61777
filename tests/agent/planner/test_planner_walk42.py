"""What the forty-second re-walk found (issue 38), read right now:

- "How many payloads was that?" after the manufacturer with the greatest total mass: that pick's count beside its
  mass (it was read alone: every payload, marked answered);
- 按轨道分别是多少？ after an average mass: that average per orbit (多少 is "how much" here; it counted payloads).
"""

from __future__ import annotations

from tests.agent.planner.test_planner_followup import sample  # noqa: F401 (fixtures)
from tests.agent.planner.test_planner_within_groups import _conversation


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
