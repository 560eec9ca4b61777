"""What the thirty-fifth and thirty-sixth re-walks found (issue 38), read right now:

- "the ten heaviest payloads" are the rows ranked, and a table asked after "which" (哪些国家) or "and their …" is
  shown beside each, joined LEFT (a payload of no operator is still one of the ten);
- "the most failures" of a table whose rows hold that value below the rows asked about counts them per row;
- a name written with a hyphen ("Proton-M") is that name, not its first word's family;
- 2024年上半年和下半年 is both halves of 2024; 百分之几 asks for a share;
- a period counted back from today that runs past the data's last date is said, not ok; "in the data" (数据中)
  counts back from that last date.
"""

from __future__ import annotations

from datetime import date

import pytest

from agent.offline_planner import OfflinePlanner
from agent.planner.reading import data_ends
from agent.sources.sqlite import SQLiteSource
from agent.vocabulary.domain import DomainVocabulary
from tests.agent.planner.test_planner_followup import planner, sample  # noqa: F401 (fixtures)
from tests.agent.planner.test_planner_within_groups import _rows

_HEAVIEST = ("SELECT p.{name}, p.mass_kg, c.{name} FROM payloads p LEFT JOIN countries c ON c.id = p.operator_country_id "
             "WHERE p.mass_kg IS NOT NULL ORDER BY p.mass_kg DESC, p.{name} LIMIT {n}")


@pytest.mark.parametrize("question, name, n", [
    ("质量最大的十个有效载荷分别属于哪些国家？", "name_zh", 10),
    ("Which countries do the ten heaviest payloads belong to?", "name", 10),
    ("What are the five heaviest payloads and their countries?", "name", 5),
])
def test_the_rows_a_ranking_counts_show_what_is_asked_of_each(planner, sample_db_path, question, name, n):
    plan = planner.plan(question)
    assert plan.caveat is None and "LEFT JOIN countries" in plan.sql and "DISTINCT" not in plan.sql
    assert _rows(planner, plan.sql) == sorted(sample(sample_db_path, _HEAVIEST.format(name=name, n=n)))


@pytest.mark.parametrize("question", ["Which launch vehicle had the most outright failures in the 2000s?",
                                      "哪款运载火箭在2000年代失败次数最多？"])
def test_the_most_of_a_value_counts_the_rows_holding_it(planner, sample_db_path, question):
    plan = planner.plan(question)
    gold = ("SELECT COUNT(*) AS c FROM launches WHERE outcome = 'failure' AND launch_date BETWEEN '2000-01-01' AND "
            "'2009-12-31' GROUP BY vehicle_id ORDER BY c DESC LIMIT 1")
    assert plan.caveat is None
    assert [r[-1] for r in _rows(planner, plan.sql)] == [sample(sample_db_path, gold)[0][0]]


def test_a_hyphenated_name_is_that_name(planner, sample_db_path):
    plan = planner.plan("How many launches has Proton-M made?")
    gold = "SELECT COUNT(*) FROM launches l JOIN launch_vehicles v ON v.id = l.vehicle_id WHERE v.name = 'Proton-M'"
    assert plan.caveat is None and "'Proton-M'" in plan.sql
    assert _rows(planner, plan.sql) == sample(sample_db_path, gold)


def test_two_halves_joined_share_their_year(planner, sample_db_path):
    plan = planner.plan("2024年上半年和下半年，长征系列火箭分别发射了多少次？")
    gold = ("SELECT COUNT(*) FROM launches l JOIN launch_vehicles v ON v.id = l.vehicle_id JOIN vehicle_families f "
            "ON f.id = v.family_id WHERE f.name_zh = '长征' AND l.launch_date LIKE '2024%' "
            "GROUP BY substr(l.launch_date, 6, 2) > '06'")
    assert plan.caveat is None
    assert sorted(r[-1] for r in _rows(planner, plan.sql)) == sorted(r[0] for r in sample(sample_db_path, gold))


def test_what_percent_asks_for_a_share(planner, sample_db_path):
    plan = planner.plan("2018年发射的有效载荷中，已经陨落的占百分之几？")
    gold = ("SELECT ROUND(100.0 * SUM(p.status = 'decayed') / COUNT(*), 2) FROM payloads p "
            "JOIN launches l ON l.id = p.launch_id WHERE l.launch_date LIKE '2018%'")
    assert plan.caveat is None and _rows(planner, plan.sql) == sample(sample_db_path, gold)


@pytest.fixture
def late(sample_db_path) -> OfflinePlanner:
    """A planner asked well after the sample's last launch (2025-12-28)."""
    return OfflinePlanner(SQLiteSource(sample_db_path), today=date(2026, 11, 29),
                          vocabulary=DomainVocabulary.beside(sample_db_path))


def test_a_period_counted_past_the_data_says_so(late):
    plan = late.plan("过去三年里，每个轨道的发射成功率分别是多少？")
    assert plan.caveat is None and "2025-12-28" in data_ends(plan.frame)
    english = late.plan("How many launches were there in the past 2 years?")
    assert english.caveat is None and "'in the data'" in data_ends(english.frame)
    assert data_ends(late.plan("How many launches were there last year?").frame) is None  # 2025: three days short


@pytest.mark.parametrize("question", ["Over the last three years in the data, what share of all launches lifted off "
                                      "from sites in China?", "数据中最近五年，每年分别有多少次发射？"])
def test_in_the_data_counts_back_from_its_last_date(late, question):
    plan = late.plan(question)
    assert plan.caveat is None and "2025-12-28" in " ".join(plan.frame.periods)
    assert "2026" not in plan.sql


def test_the_first_and_ties_kept_by_a_follow_up_states_no_number(sample_db_path, tmp_path):
    """The 35th walk's E4: 'the top 1' among what was kept read as a number the four tied rows did not show."""
    from tests.agent.planner.test_planner_within_groups import _conversation
    answer = _conversation(sample_db_path, tmp_path, "Which launch vehicle had the most outright failures in the 2000s?",
                           "What about during the 2010s?")
    assert answer.ok and answer.data.caveat is None, answer.data.caveat
    assert len(answer.data.rows) == 4 and "the first and any tied" in answer.data.text


def test_the_best_of_each_group_shows_no_place_and_names_both_names(planner):
    """The 36th walk's E16: a 'Rank in group' of ones was shown (and charted), and two `name` columns read
    'Name' and 'name:1'."""
    plan = planner.plan("List the heaviest payload each launch vehicle family has ever carried.")
    columns = planner.database.execute(plan.sql, max_rows=100).columns
    assert columns == ["name", "payload_name", "mass_kg"]


def test_a_ranking_by_an_average_is_of_each_row_named_before_it(planner, sample_db_path):
    """The 36th walk's E3: the three heaviest single payloads of 2021 were listed for the rockets' averages."""
    plan = planner.plan("Which three rockets had the highest average payload mass in 2021?")
    gold = ("SELECT AVG(p.mass_kg) AS a FROM payloads p JOIN launches l ON l.id = p.launch_id WHERE l.launch_date "
            "LIKE '2021%' GROUP BY l.vehicle_id ORDER BY a DESC LIMIT 3")
    assert plan.caveat is None and "GROUP BY launch_vehicles.id" in plan.sql
    assert [r[-1] for r in planner.database.execute(plan.sql, max_rows=10).rows] == [r[0] for r in sample(sample_db_path, gold)]


def test_each_after_the_rows_asked_after_which_counts_each(planner, sample_db_path):
    """The 36th walk's Z11: 各有几次 gave one total for the sites asked after 哪些."""
    plan = planner.plan("自2016年起，载人任务都是从哪些发射场发射的？各有几次？")
    gold = ("SELECT COUNT(DISTINCT l.id) FROM launches l JOIN payloads p ON p.launch_id = l.id WHERE p.purpose = 'crewed' "
            "AND l.launch_date >= '2016-01-01' GROUP BY l.site_id")
    assert plan.caveat is None and "GROUP BY launch_sites.id" in plan.sql
    assert sorted(r[-1] for r in _rows(planner, plan.sql)) == sorted(r[0] for r in sample(sample_db_path, gold))


def test_degrees_north_compare_the_latitude(planner, sample_db_path):
    """The 36th walk's Z12: 北纬40度以上 read as sites counted at least 40 times."""
    plan = planner.plan("纬度在北纬40度以上的发射场有哪些？")
    assert plan.caveat is None and "latitude >= 40" in plan.sql
    assert _rows(planner, plan.sql) == sorted(sample(sample_db_path, "SELECT name_zh FROM launch_sites WHERE latitude >= 40"))


def test_the_latest_of_the_dated_rows_named_after_it_in_chinese(planner, sample_db_path):
    """The 37th walk's Z2: 拜科努尔发射场最近一次发射 ranked the site by its opening year (1955), ok."""
    plan = planner.plan("拜科努尔发射场最近一次发射是在什么时候？")
    gold = ("SELECT MAX(l.launch_date) FROM launches l JOIN launch_sites s ON s.id = l.site_id "
            "WHERE s.name LIKE 'Baikonur%'")
    assert plan.caveat is None and "launches.launch_date = (SELECT MAX" in plan.sql
    assert [r[-1] for r in _rows(planner, plan.sql)] == [sample(sample_db_path, gold)[0][0]]
    assert "payloads" in planner.plan("中国最早发射的卫星是哪颗？").frame.fact  # 发射的卫星: the satellites


def test_a_verb_of_making_by_a_makers_key_is_read(planner):
    """The 37th walk's E13: 'built' named as left out, though the makers' join is what it says."""
    assert planner.plan("How many military payloads has each payload manufacturer built?").caveat is None
    assert "built" in planner.plan("How many aircraft has Boeing built?").caveat  # units built, or the models?


def test_two_years_compared_are_each_their_own_figure(planner, sample_db_path):
    """The 37th walk's E7: 'How did Electron's launch count in 2022 compare with 2023?' gave one count of both."""
    plan = planner.plan("How did Electron's launch count in 2022 compare with 2023?")
    gold = ("SELECT substr(l.launch_date, 1, 4), COUNT(*) FROM launches l JOIN launch_vehicles v ON v.id = l.vehicle_id "
            "WHERE v.name = 'Electron' AND substr(l.launch_date, 1, 4) IN ('2022', '2023') GROUP BY 1")
    assert plan.caveat is None and _rows(planner, plan.sql) == sorted(sample(sample_db_path, gold))
