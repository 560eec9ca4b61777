"""What the thirty-third re-walk found (issue 38): each answer shown as answered and wrong, or right with a caveat
naming a word that names nothing, read right now.

- "can lift more than 20,000 kg to LEO": LEO is the compared column's own orbit, not a filter on the launches;
- "How many … since March 2024, and how many succeeded?": two counts, the second of the rows that succeeded;
- 自2024年3月以来没有执行过任何发射: a period right before the negation is of the rows there are none of;
- 只看欧洲国家呢？ after a figure per country: the same figure for those countries;
- "Only the reusable ones, please.": a follow-up asking for fewer rows, not something to remember;
- "their hardware", "count them", 多少公里, "operated by China": words of the question's own rows, its figure's
  unit, and the key the question names raise no caveat.
"""

from __future__ import annotations

import pytest

from tests.agent.planner.test_planner_followup import planner, sample  # noqa: F401 (fixtures)
from tests.agent.planner.test_planner_within_groups import _conversation, _rows


def _same(sample_db_path, answer, gold):
    return sorted(answer.data.rows) == sorted([list(r) for r in sample(sample_db_path, gold)])


def test_a_value_a_compared_column_is_named_for_is_that_column_s(planner, sample_db_path):
    plan = planner.plan("List the launch vehicles that can lift more than 20,000 kg to LEO.")
    assert plan.caveat is None and "orbit" not in plan.sql
    assert _rows(planner, plan.sql) == sorted(sample(sample_db_path, "SELECT name FROM launch_vehicles "
                                                                    "WHERE payload_leo_kg > 20000"))


@pytest.mark.parametrize("question, gold", [
    ("How many Starship flights have there been since March 2024, and how many succeeded?",
     "SELECT COUNT(*), SUM(l.outcome = 'success') FROM launches l JOIN launch_vehicles v ON v.id = l.vehicle_id "
     "WHERE v.name = 'Starship' AND l.launch_date >= '2024-03-01'"),
    ("猎鹰9号在2021年发射了多少次，其中成功了几次？",
     "SELECT COUNT(*), SUM(l.outcome = 'success') FROM launches l JOIN launch_vehicles v ON v.id = l.vehicle_id "
     "WHERE v.name = 'Falcon 9' AND l.launch_date LIKE '2021%'"),
    ("2020年有多少次发射，其中多少次失败？",
     "SELECT COUNT(*), SUM(outcome = 'failure') FROM launches WHERE launch_date LIKE '2020%'"),
])
def test_a_second_count_asked_of_some_of_the_rows_is_answered_beside_the_first(planner, sample_db_path, question,
                                                                                gold):
    plan = planner.plan(question)
    assert plan.caveat is None, plan.caveat
    assert _rows(planner, plan.sql) == sorted(sample(sample_db_path, gold))


def test_a_period_right_before_the_negation_is_of_the_rows_there_are_none_of(sample_db_path, tmp_path):
    answer = _conversation(sample_db_path, tmp_path, "仍在服役的运载火箭里，有哪些自2024年3月以来没有执行过任何发射？")
    gold = ("SELECT name_zh FROM launch_vehicles WHERE status = 'active' AND id NOT IN (SELECT vehicle_id FROM launches "
            "WHERE launch_date >= '2024-03-01' AND vehicle_id IS NOT NULL)")
    assert answer.ok and _same(sample_db_path, answer, gold)


def test_only_some_groups_keeps_the_figure_of_each(sample_db_path, tmp_path):
    answer = _conversation(sample_db_path, tmp_path, "2024年各国运营的有效载荷总质量分别是多少？按总质量降序排列。",
                           "只看欧洲国家呢？")
    assert answer.ok and [row[0] for row in answer.data.rows] == ["俄罗斯", "卢森堡", "法国", "英国"]
    assert round(answer.data.rows[0][1], 1) == 88589.1


def test_only_the_ones_please_is_a_follow_up_not_a_memory(sample_db_path, tmp_path):
    answer = _conversation(sample_db_path, tmp_path, "List the launch vehicles that can lift more than 20,000 kg to LEO.",
                           "Only the reusable ones, please.")
    gold = "SELECT name FROM launch_vehicles WHERE payload_leo_kg > 20000 AND reusable = 1"
    assert answer.ok and _same(sample_db_path, answer, gold)


@pytest.mark.parametrize("questions", [
    ("Which aircraft have no radar listed among their hardware?",),
    ("Group the aircraft models by decade of first flight and count them.",),
    ("中国制造的飞机平均航程是多少公里？",),
    ("How many payloads launched between January and June 2023 are still operational?",
     "And how many of those are operated by China?"),
])
def test_words_of_the_rows_their_unit_and_their_key_raise_no_caveat(sample_db_path, tmp_path, questions):
    answer = _conversation(sample_db_path, tmp_path, *questions)
    assert answer.ok and answer.data.caveat is None, answer.data.caveat


def test_a_unit_the_figure_is_not_in_is_still_named(planner):
    assert "米" in (planner.plan("飞机的平均航程是多少米？").caveat or "")


@pytest.mark.parametrize("question", ["哪些卫星制造商从来没有制造过军用有效载荷？",
                                      "Which satellite manufacturers have never built a military payload?"])
def test_a_kind_the_data_labels_its_rows_with_is_that_kind(sample_db_path, tmp_path, question):
    """卫星制造商: the makers whose `kind` is 'satellite', not every maker with a payload (launch vehicle makers)."""
    answer = _conversation(sample_db_path, tmp_path, question)
    gold = {r[0] for r in sample(sample_db_path, "SELECT name FROM manufacturers WHERE kind = 'satellite' AND id NOT IN "
                                                 "(SELECT manufacturer_id FROM payloads WHERE purpose = 'military' "
                                                 "AND manufacturer_id IS NOT NULL)")}
    gold |= {r[0] for r in sample(sample_db_path, "SELECT name_zh FROM manufacturers WHERE kind = 'satellite'")}
    got = {row[0] for row in answer.data.rows}
    assert answer.ok and len(got) >= 11 and got <= gold


def test_a_table_named_by_its_own_name_keeps_the_rows_that_have_some(planner):
    assert "IN (SELECT aircraft.manufacturer_id" in planner.plan("How many aircraft manufacturers are there?").sql


def test_top_before_a_column_named_for_its_highest_value_is_that_column(planner, sample_db_path):
    """"the average top speed … for each country of manufacture": every country's average, not the top one."""
    plan = planner.plan("What is the average top speed of fighter jets for each country of manufacture?")
    gold = ("SELECT c.name, AVG(a.max_speed_kmh) FROM aircraft a JOIN manufacturers m ON m.id = a.manufacturer_id "
            "JOIN countries c ON c.id = m.country_id WHERE a.role = 'fighter' GROUP BY c.id")
    assert plan.caveat is None and "LIMIT" not in plan.sql
    assert _rows(planner, plan.sql) == sorted(sample(sample_db_path, gold))


def test_by_a_column_from_high_to_low_orders_by_it(planner, sample_db_path):
    plan = planner.plan("生产数量超过500架的飞机有哪些？按产量从高到低排列。")
    assert plan.caveat is None and "GROUP BY" not in plan.sql and "ORDER BY units_built DESC" in plan.sql
    assert _rows(planner, plan.sql) == sorted(sample(sample_db_path, "SELECT name_zh FROM aircraft "
                                                                    "WHERE units_built > 500"))


def test_the_launches_missions_counted_per_site_then_each_one_s_rate(sample_db_path, tmp_path):
    top = _conversation(sample_db_path, tmp_path, "2010年以前，哪三个发射场承担的发射任务最多？")
    assert top.ok and [row[1] for row in top.data.rows] == [184, 87, 56]
    rates = _conversation(sample_db_path, tmp_path, "2010年以前，哪三个发射场承担的发射任务最多？", "它们各自的发射成功率是多少？")
    assert rates.ok and [row[0] for row in rates.data.rows] == [row[0] for row in top.data.rows]
    assert [row[-1] for row in rates.data.rows] == [184, 87, 56]


def test_how_many_from_each_after_a_count_counts_per_thing_named(sample_db_path, tmp_path):
    answer = _conversation(sample_db_path, tmp_path, "How many launches were there in the second quarter of 2024?",
                           "Which sites were they launched from, and how many from each?")
    gold = ("SELECT s.name, COUNT(*) FROM launches l JOIN launch_sites s ON s.id = l.site_id "
            "WHERE l.launch_date BETWEEN '2024-04-01' AND '2024-06-30' GROUP BY s.id")
    assert answer.ok and _same(sample_db_path, answer, gold)


def test_a_source_s_word_for_a_column_groups_a_follow_up_by_it(sample_db_path, tmp_path):
    answer = _conversation(sample_db_path, tmp_path, "中国制造的飞机平均航程是多少公里？", "按机型类别分呢？")
    gold = ("SELECT a.role, AVG(a.range_km) FROM aircraft a JOIN manufacturers m ON m.id = a.manufacturer_id "
            "JOIN countries c ON c.id = m.country_id WHERE c.name = 'China' GROUP BY a.role")
    assert answer.ok and sorted(r[0] for r in answer.data.rows) == sorted(r[0] for r in sample(sample_db_path, gold))


def test_a_key_is_said_by_its_own_word_not_by_the_table_it_refers_to(planner):
    from agent.offline_planner import _Named

    assert planner._key_said("payloads", "countries", _Named(words=frozenset({"operated", "china"})))
    assert not planner._key_said("payloads", "countries", _Named(words=frozenset({"country", "china"})))
