"""What the forty-first re-walk found (issue 38), read right now:

- "How many Electron launches lifted off from New Zealand, and how many from the United States?": a figure for
  each (it gave one count of both, marked answered);
- 每个季度各发射了几次？: 各 after a time bucket is each quarter's, not each rocket's (it counted per rocket and
  quarter, marked answered);
- "Which rockets failed there?" after the site with the most failures leans on that answer ("there" ending the
  question), and says what it cannot keep (it was read alone: every rocket that ever failed, marked answered).
"""

from __future__ import annotations

from tests.agent.planner.test_planner_followup import planner, sample  # noqa: F401 (fixtures)
from tests.agent.planner.test_planner_within_groups import _conversation, _rows


def test_how_many_and_how_many_are_two_figures(planner, sample_db_path):
    plan = planner.plan("How many Electron launches lifted off from New Zealand, and how many from the United States?")
    gold = ("SELECT c.name, COUNT(*) FROM launches l JOIN launch_vehicles v ON v.id = l.vehicle_id JOIN launch_sites s "
            "ON s.id = l.site_id JOIN countries c ON c.id = s.country_id WHERE v.name = 'Electron' "
            "AND c.name IN ('New Zealand', 'United States') GROUP BY c.name")
    assert plan.caveat is None and _rows(planner, plan.sql) == sorted(sample(sample_db_path, gold))


def test_each_after_each_quarter_is_the_quarters(planner, sample_db_path):
    plan = planner.plan("去年长征系列火箭每个季度各发射了几次？")
    gold = ("SELECT (CAST(substr(l.launch_date, 6, 2) AS INTEGER) + 2) / 3, COUNT(*) FROM launches l JOIN launch_vehicles v "
            "ON v.id = l.vehicle_id JOIN vehicle_families f ON f.id = v.family_id WHERE f.name = 'Long March' "
            "AND l.launch_date LIKE '2025%' GROUP BY 1")
    assert plan.caveat is None
    assert sorted(r[-1] for r in _rows(planner, plan.sql)) == sorted(r[-1] for r in sample(sample_db_path, gold))


def test_there_ending_a_follow_up_leans_on_the_previous_answer(sample_db_path, tmp_path):
    answer = _conversation(sample_db_path, tmp_path, "Which launch site saw the most failed launches from 2015 through "
                           "2024?", "Which rockets failed there?")
    assert not answer.ok and "2015" in answer.data.sql  # the previous answer's years kept, the site said as not kept
