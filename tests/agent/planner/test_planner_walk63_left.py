"""The sixty-third re-walk's confidently wrong answers left after its first fixes (issue 38):

- E6 "In which decade did Russian rockets account for the largest share of all launches?" took the share among Russian
  launches, one row per rocket: the part said before "account for" is the share's condition, its table word its noun.
- E8 "And in the same quarter of 2024?" grouped by quarter instead of keeping the previous answer's sites.
- Z2 最近一次是哪一天，用的什么火箭？ after a count of 天舟 launches was read alone (the latest launch of all).
- Z7 按国家统计，各国卫星制造商造的有效载荷分别有多少个？ counted every payload by its operator's country: the satellite
  makers are makers of that kind, and the countries are theirs.
"""

from __future__ import annotations

from tests.agent.planner.test_planner_followup import planner, result, sample, talk  # noqa: F401 (fixtures)
from tests.agent.planner.test_planner_within_groups import _rows


def test_the_part_said_before_account_for_is_the_shares_condition(planner):
    plan = planner.plan("In which decade did Russian rockets account for the largest share of all launches?")
    assert plan.caveat is None and _rows(planner, plan.sql) == [(2000, 38.44, 601)]


def test_the_same_quarter_of_another_year_keeps_the_grouping(talk, sample_db_path):
    gold = ("SELECT s.name, COUNT(*) FROM launches l JOIN launch_sites s ON s.id = l.site_id WHERE l.orbit = 'SSO' AND "
            "l.launch_date >= '2024-10-01' AND l.launch_date < '2025-01-01' GROUP BY s.id HAVING COUNT(*) = 2")
    for first, then in (("Which launch site had the most launches to SSO in the fourth quarter of 2022?",
                         "And in the same quarter of 2024?"),
                        ("2022年第四季度哪个发射场发射太阳同步轨道的次数最多？", "2024年同一季度呢？")):
        talk.ask(first)
        _, answer = talk.ask(then)
        assert "caveat" not in answer and "quarter" not in answer["sql"].lower()
        assert sorted(r[1] for r in result(talk)) == sorted(r[1] for r in sample(sample_db_path, gold))


def test_the_latest_time_of_the_rows_before_is_a_follow_up(talk):
    talk.ask("天舟货运飞船一共发射过几次？")
    _, answer = talk.ask("最近一次是哪一天，用的什么火箭？")
    assert "天舟" in answer["sql"] and result(talk) == [("长征七号", "2025-12-02")]
    talk.ask("How many Tianzhou cargo launches were there?")
    _, answer = talk.ask("When was the last one, and on which rocket?")
    assert "caveat" not in answer and result(talk) == [("Long March 7", "2025-12-02")]


def test_the_last_of_a_kind_is_the_latest(planner):
    plan = planner.plan("When was the last Tianzhou cargo launch, and on which rocket?")
    assert plan.caveat is None and [r[1:] for r in _rows(planner, plan.sql)] == [("2025-12-02", "Long March 7")]
    for period in ("How many launches were there in the last 3 years?", "How many launches were there in the last year?"):
        plan = planner.plan(period)  # a period still, not the latest launch
        assert "launch_date >=" in plan.sql and "MAX(" not in plan.sql


def test_makers_of_a_kind_and_their_country(planner, sample_db_path):
    gold = ("SELECT c.name_zh, COUNT(*) FROM payloads p JOIN manufacturers m ON m.id = p.manufacturer_id JOIN countries c "
            "ON c.id = m.country_id WHERE m.kind = 'satellite' GROUP BY c.id")
    for question in ("按国家统计，各国卫星制造商造的有效载荷分别有多少个？", "各国卫星制造商造的有效载荷分别有多少个？"):
        plan = planner.plan(question)
        assert plan.caveat is None and sorted(_rows(planner, plan.sql)) == sorted(sample(sample_db_path, gold))


def test_a_count_named_by_its_verb_says_the_rows_in_words(planner):
    """"There were 18 launcheds": the rows' table in words when the question names them by a verb."""
    plan = planner.plan("How many Progress cargo missions were launched between 2010 and 2014?")
    assert plan.frame.subject_text == "launch"


def test_a_chinese_range_of_numbers_is_between(planner, sample_db_path):
    gold = "SELECT COUNT(*) FROM launch_vehicles WHERE payload_leo_kg BETWEEN 10000 AND 20000"
    for question in ("近地轨道运力在1万到2万公斤之间的火箭有几款？", "近地轨道运力介于10000和20000公斤之间的火箭有几款？"):
        plan = planner.plan(question)
        assert plan.caveat is None and _rows(planner, plan.sql) == sample(sample_db_path, gold)
    plan = planner.plan("近地轨道运力在1万到2万公斤之间的现役火箭，2024年一共发射了多少次？")
    assert plan.caveat is None and _rows(planner, plan.sql) == [(13,)]


def test_a_half_or_quarter_opened_at_one_end(planner):
    for question, where in (("自2022年下半年以来发射了多少次？", "launch_date >= '2022-07-01'\n"),
                            ("How many launches since Q3 2022?", "launch_date >= '2022-07-01'\n"),
                            ("2022年第三季度之前发射了几次？", "launch_date < '2022-07-01'\n"),
                            ("How many launches were there before the second half of 2001?", "launch_date < '2001-07-01'\n")):
        plan = planner.plan(question)
        assert plan.caveat is None and plan.sql.endswith(where.strip()) and "AND launch_date <" not in plan.sql, question


def test_a_production_figure_is_the_units_built(planner):
    plan = planner.plan("Which UAV models have no production figure recorded?")
    assert plan.caveat is None and sorted(_rows(planner, plan.sql)) == [("GJ-11 Sharp Sword",), ("Wing Loong II",)]


def test_a_value_of_the_groups_in_a_share_of_all_rows(planner, sample_db_path):
    """"each Russian site": the value says which groups (it was a share of each site's launches that were Russian:
    100% or 0%); the share is of all launches (test_planner_session33). "Russian launches" is the whole the share is
    of."""
    plan = planner.plan("What share of all launches did each Russian site have?")
    assert plan.caveat is None and "CASE" not in plan.sql
    plan = planner.plan("What share of Russian launches did each site have?")
    assert plan.caveat is None and [r[1] for r in _rows(planner, plan.sql)] == [80.57, 19.43]


def test_the_makers_of_each_country(planner, sample_db_path):
    gold = ("SELECT c.name, COUNT(*) FROM payloads p JOIN manufacturers m ON m.id = p.manufacturer_id JOIN countries c "
            "ON c.id = m.country_id WHERE m.kind = 'satellite' GROUP BY c.id")
    plan = planner.plan("How many payloads did satellite makers of each country build?")
    assert plan.caveat is None and sorted(_rows(planner, plan.sql)) == sorted(sample(sample_db_path, gold))


def test_a_count_of_the_makers_of_each_country(planner, sample_db_path):
    gold = ("SELECT c.name_zh, COUNT(*) FROM manufacturers m JOIN countries c ON c.id = m.country_id "
            "WHERE m.kind = 'satellite' GROUP BY c.id")
    plan = planner.plan("各国卫星制造商分别有几家？")
    assert plan.caveat is None and sorted(_rows(planner, plan.sql)) == sorted(sample(sample_db_path, gold))
