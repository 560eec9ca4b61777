"""What the thirty-ninth re-walk found (issue 38), read right now:

- 各国制造商…运载火箭, 各国火箭的发射: the table word right after 各国 whose rows belong to a country is the way to
  it (the makers' country; the rockets' makers' country), not the nearest way (a launch's site);
- a half or quarter of a year counted from today (去年第四季度, "the second half of last year");
- 同期西昌呢？ keeps the period and says nothing more; 全部 (all) is no condition;
- 前五名呢？ after the first and any tied: the first five;
- "And the year before?", 前一年呢？: the previous answer's one year (or its half), a year earlier (E12 listed the
  sites' opening years).
"""

from __future__ import annotations

import pytest

from tests.agent.planner.test_planner_followup import planner, sample  # noqa: F401 (fixtures)
from tests.agent.planner.test_planner_within_groups import _conversation, _rows

_COUNTRY = "JOIN manufacturers m ON m.id = v.manufacturer_id JOIN countries c ON c.id = m.country_id"


@pytest.mark.parametrize("question, gold", [
    ("各国制造商分别生产了多少款运载火箭？", f"SELECT c.name_zh, COUNT(*) FROM launch_vehicles v {_COUNTRY} GROUP BY c.id"),
    ("2020年以来，各国火箭的发射成功率分别是多少？",
     "SELECT c.name_zh, ROUND(100.0 * SUM(l.outcome = 'success') / COUNT(*), 2), COUNT(*) FROM launches l "
     f"JOIN launch_vehicles v ON v.id = l.vehicle_id {_COUNTRY} WHERE l.launch_date >= '2020-01-01' GROUP BY c.id"),
    ("去年第四季度一共有多少次发射？", "SELECT COUNT(*) FROM launches WHERE launch_date BETWEEN '2025-10-01' AND '2025-12-31'"),
    ("How many launches were there in the second half of last year?",
     "SELECT COUNT(*) FROM launches WHERE launch_date BETWEEN '2025-07-01' AND '2025-12-31'"),
    ("2025年，可重复使用火箭的发射占全部发射的百分之几？",
     "SELECT ROUND(100.0 * SUM(v.reusable) / COUNT(*), 2) FROM launches l JOIN launch_vehicles v ON v.id = l.vehicle_id "
     "WHERE l.launch_date LIKE '2025%'"),
])
def test_the_39th_walks_questions(planner, sample_db_path, question, gold):
    plan = planner.plan(question)
    assert plan.caveat is None and _rows(planner, plan.sql) == sorted(sample(sample_db_path, gold))


def test_the_same_period_at_another_site_keeps_the_period_and_says_nothing_more(sample_db_path, tmp_path):
    answer = _conversation(sample_db_path, tmp_path, "2023年到2025年，文昌每年发射多少次？", "同期西昌呢？")
    gold = ("SELECT SUBSTR(l.launch_date, 1, 4), COUNT(*) FROM launches l JOIN launch_sites s ON s.id = l.site_id "
            "WHERE s.name = 'Xichang Satellite Launch Center' AND l.launch_date BETWEEN '2023-01-01' AND '2025-12-31' "
            "GROUP BY 1")
    assert answer.ok and sorted(map(tuple, answer.data.rows)) == sorted(sample(sample_db_path, gold))


def test_the_top_five_after_the_first_and_any_tied(sample_db_path, tmp_path):
    answer = _conversation(sample_db_path, tmp_path, "2025年上半年，哪个发射场发射次数最多？", "前五名呢？")
    gold = ("SELECT s.name_zh, COUNT(*) FROM launches l JOIN launch_sites s ON s.id = l.site_id "
            "WHERE l.launch_date BETWEEN '2025-01-01' AND '2025-06-30' GROUP BY s.id ORDER BY 2 DESC LIMIT 5")
    assert answer.ok and [tuple(r) for r in answer.data.rows] == sample(sample_db_path, gold)


@pytest.mark.parametrize("questions, gold", [
    (("How many launches used Russian rockets in 2025?", "And the year before?"),
     f"SELECT COUNT(*) FROM launches l JOIN launch_vehicles v ON v.id = l.vehicle_id {_COUNTRY} "
     "WHERE c.name = 'Russia' AND l.launch_date LIKE '2024%'"),
    (("2024年上半年有多少次发射？", "前一年呢？"),
     "SELECT COUNT(*) FROM launches WHERE launch_date BETWEEN '2023-01-01' AND '2023-06-30'"),
])
def test_the_year_before_moves_the_previous_year_back(sample_db_path, tmp_path, questions, gold):
    answer = _conversation(sample_db_path, tmp_path, *questions)
    assert answer.ok and [tuple(r) for r in answer.data.rows] == sample(sample_db_path, gold)
