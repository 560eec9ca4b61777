"""Left by the forty-seventh re-walk's fixes and the forty-eighth re-walk (issue 38), read right now:

- 2025年发射的通信卫星里，其他国家运营的有多少颗？: the countries before 运营的 say who operates what is counted (the
  satellites, the table word before them), not the thing counted (it counted countries).
- 美国以外的国家 (other than the US, said after the value): the value is excluded, as 除了美国以外 excludes it (it was
  read as the US itself, or flagged).
- 中国有多少个发射场？ right after an unrelated answer: a table word ending the question (no 的) is its subject, so it
  stands alone (it was read as a follow-up with no word tying it, flagged).
- Confidently wrong in the 48th walk: "maiden flights" kept only the notes saying nothing more (E3); "the cheapest and
  most expensive part prices" per type gave the most expensive alone (E10); 中国的各家飞机制造商，首飞时间最晚的机型 ranked
  the makers by founding year (Z8); 发动机分别由哪家供应 showed each fighter's number of engines (Z9); 2000年代和2020年代
  都有发射记录的发射场 put one decade on the sites' opening year (Z14); 哪些火箭家族的发射全部成功 listed every family with
  one success (Z18).
- Periods: 2020年以来 followed by 二级火箭 read as the year 2020 alone (Z19); a range of quarters kept its first (Z11).
"""

from __future__ import annotations

from datetime import date

import pytest

from agent.checks.extremes import one_end_only
from agent.planner.period_grammar import named_periods
from tests.agent.planner.test_planner_followup import planner, sample, talk  # noqa: F401 (fixtures)
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


def test_a_complete_question_after_an_unrelated_answer_stands_alone(talk):
    talk.ask("文昌航天发射场2025年上半年发射的有效载荷总质量是多少吨？")
    _, answer = talk.ask("中国有多少个发射场？")
    assert answer.get("caveat") is None and "2025" not in talk.last_sql and "launch_sites" in talk.last_sql


def test_a_note_with_details_added_is_still_that_note(planner, sample_db_path):
    plan = planner.plan("How many maiden flights were there in the 2010s, and how many of them failed?")
    gold = ("SELECT COUNT(*), SUM(outcome = 'failure') FROM launches WHERE launch_date BETWEEN '2010-01-01' AND "
            "'2019-12-31' AND notes LIKE 'Maiden flight%'")
    assert plan.caveat is None and _rows(planner, plan.sql) == sample(sample_db_path, gold)
    assert "'Falcon 9'" in planner.plan("How many Falcon 9 launches were there in 2020?").sql  # not Falcon 9 Block 5


def test_both_ends_of_each_groups_prices(planner, sample_db_path):
    plan = planner.plan("For each component type, what are the cheapest and most expensive part prices?")
    gold = "SELECT component, MIN(unit_cost_usd), MAX(unit_cost_usd) FROM aircraft_hardware GROUP BY component"
    assert plan.caveat is None and sorted(_rows(planner, plan.sql)) == sorted(sample(sample_db_path, gold))


def test_one_end_of_each_group_is_one_end_whatever_the_rows_order():
    sql = ("SELECT component, part_name, unit_cost_usd FROM (SELECT component, part_name, unit_cost_usd, RANK() OVER "
           "(PARTITION BY component ORDER BY unit_cost_usd DESC) AS r FROM aircraft_hardware) WHERE r <= 1 ORDER BY 1")
    question = "For each component type, what are the cheapest and most expensive part prices?"
    assert one_end_only(question, sql, dialect="sqlite") == "cheapest and most expensive"
    both = ("SELECT * FROM (SELECT name FROM aircraft ORDER BY max_speed_kmh DESC LIMIT 1) UNION ALL "
            "SELECT * FROM (SELECT name FROM aircraft ORDER BY max_speed_kmh LIMIT 1)")
    assert one_end_only("the fastest and slowest aircraft", both, dialect="sqlite") is None


def test_the_latest_of_each_group_by_the_date_named(planner, sample_db_path):
    plan = planner.plan("中国的各家飞机制造商，首飞时间最晚的机型分别是哪款？")
    gold = ("SELECT m.name_zh, a.model FROM aircraft a JOIN manufacturers m ON m.id = a.manufacturer_id JOIN countries c "
            "ON c.id = m.country_id WHERE c.name = 'China' AND a.first_flight_date = (SELECT MAX(first_flight_date) "
            "FROM aircraft b WHERE b.manufacturer_id = a.manufacturer_id)")
    assert plan.caveat is None and sorted(r[:2] for r in _rows(planner, plan.sql)) == sorted(sample(sample_db_path, gold))


def test_which_firm_answered_with_numbers_only_is_named(planner):
    plan = planner.plan("2010年代首飞的战斗机，发动机分别由哪家供应？")
    assert plan.caveat is not None and "哪家" in plan.caveat


def test_rows_in_each_of_two_periods_are_not_one_filter_each(planner):
    plan = planner.plan("2000年代和2020年代都有发射记录的发射场有哪些？")
    assert plan.sql is None and plan.failure


def test_groups_whose_rows_all_have_a_value_keep_only_those(planner, sample_db_path):
    """Named after this walk; answered since the fifty-second (`test_planner_walk52`): none of a group's rows without it."""
    plan = planner.plan("2025年3月至9月，哪些火箭家族的发射全部成功？")
    gold = ("SELECT f.name_zh FROM launches l JOIN launch_vehicles v ON v.id = l.vehicle_id JOIN vehicle_families f "
            "ON f.id = v.family_id WHERE l.launch_date BETWEEN '2025-03-01' AND '2025-09-30' GROUP BY f.id "
            "HAVING SUM(l.outcome <> 'success') = 0")
    assert plan.caveat is None and _rows(planner, plan.sql, slice(0, 1)) == sorted(sample(sample_db_path, gold))
    assert planner.plan("2025年各火箭家族成功发射了多少次？").caveat is None


def test_since_a_year_before_a_chinese_number(planner, sample_db_path):
    """Z19: 2020年以来，二级火箭…: 二 (two stages) after 以来 is no second year, so 以来 keeps its "since"."""
    plan = planner.plan("2020年以来，二级火箭和三级火箭的发射成功率分别是多少？")
    gold = ("SELECT v.stages, ROUND(100.0 * SUM(l.outcome = 'success') / COUNT(*), 2) FROM launches l JOIN launch_vehicles "
            "v ON v.id = l.vehicle_id WHERE v.stages IN (2, 3) AND l.launch_date >= '2020-01-01' GROUP BY v.stages")
    assert plan.caveat is None and sorted(r[:2] for r in _rows(planner, plan.sql)) == sorted(sample(sample_db_path, gold))


@pytest.mark.parametrize("question", ["2021年第二季度到2022年第一季度，发往地球同步转移轨道的通信卫星有多少颗？",
                                      "How many communications satellites went to GTO from Q2 2021 to Q1 2022?"])
def test_a_range_of_quarters(planner, sample_db_path, question):
    """Z11: a range of quarters across a year's end is one range, not its first quarter."""
    plan = planner.plan(question)
    gold = ("SELECT COUNT(*) FROM payloads p JOIN launches l ON l.id = p.launch_id WHERE l.launch_date >= '2021-04-01' "
            "AND l.launch_date < '2022-04-01' AND p.orbit = 'GTO' AND p.purpose = 'communications'")
    assert plan.caveat is None and _rows(planner, plan.sql) == sample(sample_db_path, gold)


@pytest.mark.parametrize("text, since, until", [
    ("2021年第二季度到2022年第一季度", date(2021, 4, 1), date(2022, 4, 1)),
    ("2021年第二季度到第四季度", date(2021, 4, 1), date(2022, 1, 1)),
    ("from Q2 2021 to Q1 2022", date(2021, 4, 1), date(2022, 4, 1)),
    ("between the second quarter of 2021 and the first quarter of 2022", date(2021, 4, 1), date(2022, 4, 1)),
])
def test_quarter_ranges_in_the_period_grammar(text, since, until):
    [period] = named_periods(text)
    assert (period.since, period.until, period.kind) == (since, until, "quarters")
    # one ending before it starts is no range (its two quarters are read each on its own)
    assert all(p.kind == "quarter" for p in named_periods("from Q3 2022 to Q1 2022"))


def test_how_much_of_a_measure_is_its_total(planner, sample_db_path):
    """E11: "How much payload mass …" is the mass of them all (it counted the payloads, flagged); "how much do they
    weigh?" and "How much does the heaviest payload weigh?" stay each row's value."""
    plan = planner.plan("How much payload mass was sent to TLI in each decade?")
    gold = ("SELECT (CAST(substr(l.launch_date, 1, 4) AS INTEGER) / 10) * 10, SUM(p.mass_kg) FROM payloads p JOIN launches "
            "l ON l.id = p.launch_id WHERE p.orbit = 'TLI' GROUP BY 1")
    assert plan.caveat is None and sorted(_rows(planner, plan.sql)) == sorted(sample(sample_db_path, gold))
    assert "SUM(" not in planner.plan("How much does the heaviest payload weigh?").sql
    talk_sql = planner.plan("How much do the reusable launch vehicles weigh?").sql or ""
    assert "SUM(" not in talk_sql


def test_each_groups_rows_are_those_whose_columns_are_named(planner, sample_db_path):
    """Found while checking "how much": "each manufacturer's parts cost" summed the parts' costs once per payload of
    the maker (the largest child table), marked answered; the rows are the table the named columns are of."""
    plan = planner.plan("How much did each manufacturer's parts cost in total?")
    gold = ("SELECT m.name, SUM(h.unit_cost_usd) FROM aircraft_hardware h JOIN manufacturers m ON m.id = h.supplier_id "
            "GROUP BY m.id")
    assert "FROM aircraft_hardware" in plan.sql
    assert sorted(_rows(planner, plan.sql)) == sorted(sample(sample_db_path, gold))


def test_which_column_is_grouped_when_a_verb_names_the_rows(planner, sample_db_path):
    """E12: "which orbit have most military payloads been launched into?" grouped by launch ('launched'), not orbit."""
    plan = planner.plan("Since March 2023, which orbit have most military payloads been launched into?")
    assert "GROUP BY payloads.orbit" in plan.sql and plan.caveat is None
    assert _rows(planner, plan.sql)[0][:2] == ("LEO", 66)
