"""What the thirty-seventh re-walk left (issue 38), read right now:

- a source's phrase of several words names a stored value ("sun-synchronous orbit": the orbit 'SSO'), through
  its vocabulary file's `[synonyms]` (sample_db/aerospace.vocabulary.toml);
- 各火箭家族的发射成功率 is a rate per family of its launches, not per launch (it was answered per launch, ok);
- 3月到8月期间: 期间 says no more than the range;
- "Delta IV Heavy's last launch" is its latest (as "the last launch of"), not "their first launch", one per row;
- the sample's words: "LEO payload capacity", 近地轨道运力 (`payload_leo_kg`), 启用 (`opened_year`), 机载部件 (the
  aircraft hardware), 部件类别 (`component`);
- a month of a year counted from today ("since June last year", 自去年6月以来, 前年3月到6月), said as resolved, and
  past the data's end said too;
- a follow-up counting another table with a year (它在2024年执行了多少次发射？ after a site's opening year) dates the
  rows it counts, not the column the previous answer showed (it counted launches of sites opened in 2024: 0);
- 都是从哪个发射场发射的？ after a count is a follow-up (都 opening the question), and 从哪个发射场发射的 asks for the
  sites (it listed every launch's mission, marked answered), as does 哪个发射场发射的卫星最多;
- "And over its whole history?", 历史上呢？: the previous figure with its period taken away (it was declined);
- 按制造商所在国家分呢？: 所在 ("located in") between two table words owns the second, as 的 and 所属 do.
"""

from __future__ import annotations

from datetime import date

import pytest

from agent.planner.period_grammar import named_periods

from tests.agent.planner.test_planner_followup import planner, sample  # noqa: F401 (fixtures)
from tests.agent.planner.test_planner_within_groups import _conversation, _rows


@pytest.mark.parametrize("question, gold", [
    ("What share of 2022 launches went to sun-synchronous orbit?",
     "SELECT ROUND(100.0 * SUM(orbit = 'SSO') / COUNT(*), 2) FROM launches WHERE launch_date LIKE '2022%'"),
    ("How many payloads are in geostationary orbit?", "SELECT COUNT(*) FROM payloads WHERE orbit = 'GEO'"),
    ("How many launches have headed to the Moon since 2018?",
     "SELECT COUNT(*) FROM launches WHERE orbit = 'TLI' AND launch_date >= '2018-01-01'"),
    ("How many payloads went to Low Earth Orbit in 2024?",
     "SELECT COUNT(*) FROM payloads p JOIN launches l ON l.id = p.launch_id WHERE p.orbit = 'LEO' "
     "AND l.launch_date LIKE '2024%'"),
])
def test_a_phrase_of_the_sources_vocabulary_names_the_value_it_stands_for(planner, sample_db_path, question, gold):
    plan = planner.plan(question)
    assert plan.caveat is None and plan.failure is None
    assert _rows(planner, plan.sql) == sorted(sample(sample_db_path, gold))


def test_a_rate_of_the_rows_below_each_group_is_per_group(planner, sample_db_path):
    plan = planner.plan("2010年代各火箭家族的发射成功率分别是多少？")
    gold = ("SELECT f.name_zh, ROUND(100.0 * SUM(l.outcome = 'success') / COUNT(*), 2), COUNT(*) FROM launches l "
            "JOIN launch_vehicles v ON v.id = l.vehicle_id JOIN vehicle_families f ON f.id = v.family_id "
            "WHERE l.launch_date BETWEEN '2010-01-01' AND '2019-12-31' GROUP BY f.id")
    assert plan.caveat is None and _rows(planner, plan.sql) == sorted(sample(sample_db_path, gold))


def test_during_a_range_of_months_says_nothing_more(planner, sample_db_path):
    plan = planner.plan("2022年3月到8月期间，一共发射了多少个有效载荷？")
    gold = ("SELECT COUNT(*) FROM payloads p JOIN launches l ON l.id = p.launch_id "
            "WHERE l.launch_date BETWEEN '2022-03-01' AND '2022-08-31'")
    assert plan.caveat is None and _rows(planner, plan.sql) == sample(sample_db_path, gold)


@pytest.mark.parametrize("question, gold", [
    ("When was Delta IV Heavy's last launch?",
     "SELECT l.mission_name, l.launch_date FROM launches l JOIN launch_vehicles v ON v.id = l.vehicle_id "
     "WHERE v.name = 'Delta IV Heavy' ORDER BY l.launch_date DESC LIMIT 1"),
    ("What's the average LEO payload capacity for each rocket family?",
     "SELECT f.name, AVG(v.payload_leo_kg) FROM vehicle_families f JOIN launch_vehicles v ON v.family_id = f.id "
     "GROUP BY f.id"),
    ("近地轨道运力最大的五种火箭是哪些？",
     "SELECT name_zh, payload_leo_kg FROM launch_vehicles ORDER BY payload_leo_kg DESC LIMIT 5"),
    ("酒泉卫星发射中心是哪一年启用的？", "SELECT opened_year FROM launch_sites WHERE name_zh = '酒泉卫星发射中心'"),
    ("中国供应商提供的机载部件有多少个？",
     "SELECT COUNT(*) FROM aircraft_hardware h JOIN manufacturers m ON m.id = h.supplier_id JOIN countries c "
     "ON c.id = m.country_id WHERE c.name = 'China'"),
])
def test_a_named_ones_last_and_the_samples_words_for_capacity_and_opening(planner, sample_db_path, question, gold):
    plan = planner.plan(question)
    assert plan.caveat is None and _rows(planner, plan.sql) == sorted(sample(sample_db_path, gold))


def test_their_first_launch_is_not_the_first_launch_of_all(planner, sample_db_path):
    # one first launch per rocket (session 37: written), never the single earliest launch
    plan = planner.plan("Which rockets made their first launch in 2024 or later?")
    assert plan.caveat is None and sorted(r[0] for r in _rows(planner, plan.sql)) == [r[0] for r in sample(
        sample_db_path, "SELECT v.name FROM launches l JOIN launch_vehicles v ON l.vehicle_id = v.id GROUP BY v.id "
                        "HAVING MIN(l.launch_date) >= '2024-01-01' ORDER BY 1")]


@pytest.mark.parametrize("text, since, until", [
    ("since June last year", date(2025, 6, 1), None),
    ("自去年6月以来", date(2025, 6, 1), None),
    ("in March this year", date(2026, 3, 1), date(2026, 4, 1)),
    ("前年3月到6月", date(2024, 3, 1), date(2024, 7, 1)),
    ("June of last year", date(2025, 6, 1), date(2025, 7, 1)),
])
def test_a_month_of_a_year_counted_from_today(text, since, until):
    period, = named_periods(text, date(2026, 11, 29))
    assert (period.since, period.until, period.today) == (since, until, date(2026, 11, 29))
    assert named_periods(text) == []  # no today, no such year


def test_a_month_of_last_year_is_counted_and_said(planner, sample_db_path):
    plan = planner.plan("自去年6月以来，长征系列火箭发射了多少次？")
    gold = ("SELECT COUNT(*) FROM launches l JOIN launch_vehicles v ON v.id = l.vehicle_id JOIN vehicle_families f "
            "ON f.id = v.family_id WHERE f.name = 'Long March' AND l.launch_date >= '2025-06-01'")
    assert plan.caveat is None and _rows(planner, plan.sql) == sample(sample_db_path, gold)
    late = planner.plan("How many launches were there in March this year?")  # 2026: after the data's last date
    assert late.caveat is not None and "2025-12-28" in late.caveat


@pytest.mark.parametrize("questions", [("酒泉卫星发射中心是哪一年启用的？", "它在2024年执行了多少次发射？"),
                                       ("When did the Jiuquan Satellite Launch Center open?",
                                        "How many launches did it host in 2024?")])
def test_a_follow_up_counting_other_rows_in_a_year_dates_those_rows(sample_db_path, tmp_path, questions):
    answer = _conversation(sample_db_path, tmp_path, *questions)
    gold = ("SELECT COUNT(*) FROM launches l JOIN launch_sites s ON s.id = l.site_id WHERE s.name_zh = '酒泉卫星发射中心' "
            "AND l.launch_date LIKE '2024%'")
    assert "opened_year" not in answer.data.sql and [tuple(r) for r in answer.data.rows] == sample(sample_db_path, gold)


_FALCON_HEAVY_SITES = ("SELECT DISTINCT s.name_zh FROM launches l JOIN launch_sites s ON s.id = l.site_id "
                       "JOIN launch_vehicles v ON v.id = l.vehicle_id WHERE v.name_zh = '猎鹰重型' {years}")


@pytest.mark.parametrize("question", ["猎鹰重型是从哪个发射场发射的？", "猎鹰重型在哪个发射场发射？"])
def test_which_site_a_named_rocket_launched_from_lists_the_sites(planner, sample_db_path, question):
    plan = planner.plan(question)
    assert plan.caveat is None
    assert _rows(planner, plan.sql) == sorted(sample(sample_db_path, _FALCON_HEAVY_SITES.format(years="")))


def test_all_of_them_opening_a_question_follows_the_previous_answer(sample_db_path, tmp_path):
    answer = _conversation(sample_db_path, tmp_path, "2021年到2023年，猎鹰重型一共发射了几次？", "都是从哪个发射场发射的？")
    gold = _FALCON_HEAVY_SITES.format(years="AND l.launch_date BETWEEN '2021-01-01' AND '2023-12-31'")
    assert answer.ok and sorted(tuple(r) for r in answer.data.rows) == sorted(sample(sample_db_path, gold))


def test_the_site_that_launched_the_most_satellites_is_a_site(planner, sample_db_path):
    plan = planner.plan("哪个发射场发射的卫星最多？")
    gold = ("SELECT s.name_zh, COUNT(*) FROM payloads p JOIN launches l ON l.id = p.launch_id JOIN launch_sites s "
            "ON s.id = l.site_id GROUP BY s.id ORDER BY 2 DESC LIMIT 1")
    assert plan.caveat is None and _rows(planner, plan.sql) == sample(sample_db_path, gold)


@pytest.mark.parametrize("questions, gold", [
    (("What was Falcon 9's success rate in 2024?", "And over its whole history?"),
     "SELECT ROUND(100.0 * SUM(l.outcome = 'success') / COUNT(*), 2) FROM launches l JOIN launch_vehicles v "
     "ON v.id = l.vehicle_id WHERE v.name = 'Falcon 9'"),
    (("2024年猎鹰9号发射了多少次？", "历史上呢？"),
     "SELECT COUNT(*) FROM launches l JOIN launch_vehicles v ON v.id = l.vehicle_id WHERE v.name = 'Falcon 9'"),
])
def test_over_its_whole_history_takes_the_period_away(sample_db_path, tmp_path, questions, gold):
    answer = _conversation(sample_db_path, tmp_path, *questions)
    assert answer.ok and [tuple(r) for r in answer.data.rows] == sample(sample_db_path, gold)


def test_by_the_country_the_makers_are_in_groups_the_previous_measure(sample_db_path, tmp_path):
    answer = _conversation(sample_db_path, tmp_path, "战斗机的平均产量是多少架？", "按制造商所在国家分呢？")
    gold = ("SELECT c.name_zh, AVG(a.units_built) FROM aircraft a JOIN manufacturers m ON m.id = a.manufacturer_id "
            "JOIN countries c ON c.id = m.country_id WHERE a.role = 'fighter' GROUP BY c.id")
    assert answer.ok and sorted(tuple(r)[:2] for r in answer.data.rows) == sorted(sample(sample_db_path, gold))
