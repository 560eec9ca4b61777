"""Years named side by side, a count kept over other dates, and counts of one row each (issue 38, the
twenty-seventh re-walk's confidently wrong answers, each asked here as the analyst did).

2016年和2020年，各用途的载荷分别有多少个？ pooled both years into one count per purpose; "How many launches did each
of them host in 2025?" after the sites with more than 20 launches kept "more than 20" as a filter on 2025's
launches (no site had so many, and the answer said no rows match); 每个国家的飞机制造商中，机型最多的分别是哪家？ counted
each aircraft model's one maker and kept all 69 models as tied first.
"""

from __future__ import annotations

import pytest

from tests.agent.planner.test_planner_followup import planner, sample  # noqa: F401 (fixtures)
from tests.agent.planner.test_planner_within_groups import _conversation, _rows


@pytest.mark.parametrize("question", ["2016年和2020年，各用途的载荷分别有多少个？",
                                      "How many payloads of each purpose were launched in 2016 and in 2020, respectively?"])
def test_years_named_side_by_side_are_each_their_own_figure(planner, sample_db_path, question):
    plan = planner.plan(question)
    gold = ("SELECT strftime('%Y', l.launch_date), p.purpose, COUNT(*) FROM payloads p JOIN launches l "
            "ON l.id = p.launch_id WHERE strftime('%Y', l.launch_date) IN ('2016', '2020') GROUP BY 1, 2")
    assert plan.caveat is None and _rows(planner, plan.sql) == sorted(sample(sample_db_path, gold))


@pytest.mark.parametrize("question", ["How many launches were there in 2016 or 2020 for each vehicle?",
                                      "How many launches were there in 2016 or 2020?"])
def test_years_as_alternatives_stay_one_filter(planner, question):
    assert "GROUP BY strftime" not in planner.plan(question).sql


@pytest.mark.parametrize("question", ["How many launches were there in 2016 and 2020?",
                                      "How many launches were there in 2010 and in 2020?", "2010年和2020年发射了多少次？"])
def test_years_joined_by_and_are_each_their_own_figure(planner, question):
    """No launch is of both years: the analyst asks each year's figure (the 69th walk), not the two pooled."""
    plan = planner.plan(question)
    assert "GROUP BY strftime" in plan.sql and plan.caveat is None


def test_the_years_of_a_filter_are_all_said(sample_db_path, tmp_path):
    answer = _conversation(sample_db_path, tmp_path, "2016年和2020年，各用途的载荷分别有多少个？")
    assert "2016年或2020年" in answer.data.text


@pytest.mark.parametrize("questions", [
    ("Which launch sites that opened in 2000 or later have hosted more than 20 launches?",
     "How many launches did each of them host in 2025?"),
    ("哪些火箭发射次数超过50次？", "其中2024年各发射了多少次？"),
])
def test_each_of_them_over_other_dates_does_not_count_them_again_by_the_old_threshold(sample_db_path, tmp_path,
                                                                                     questions):
    answer = _conversation(sample_db_path, tmp_path, *questions)
    assert not answer.ok and "HAVING" not in answer.data.sql and answer.data.rows
    assert ("20" if questions[0].isascii() else "50") in answer.data.caveat


def test_the_same_question_of_other_dates_keeps_its_count(sample_db_path, tmp_path):
    answer = _conversation(sample_db_path, tmp_path, "Which launch vehicles flew more than 10 times since 2015?",
                           "And since 2020?")
    assert answer.ok and "HAVING COUNT(*) > 10" in answer.data.sql and "2020" in answer.data.sql


def test_a_count_of_one_row_each_is_never_ok(sample_db_path, tmp_path):
    answer = _conversation(sample_db_path, tmp_path, "每个国家的飞机制造商中，机型最多的分别是哪家？")
    assert not answer.ok and "1" in answer.data.caveat


@pytest.mark.parametrize("question", ["2025年发射的载荷中，没有制造商记录的有多少个？", "2025年发射的载荷中，没有记录制造商的有多少个？"])
def test_rows_with_no_reference_at_all_have_none_of_the_referred_rows(sample_db_path, tmp_path, question):
    """The re-walk's C09: `manufacturer_id NOT IN (…)` left out the payloads with no manufacturer, and found 0."""
    answer = _conversation(sample_db_path, tmp_path, question)
    gold = ("SELECT COUNT(*) FROM payloads p JOIN launches l ON l.id = p.launch_id WHERE l.launch_date LIKE '2025%' "
            "AND p.manufacturer_id IS NULL")
    assert answer.ok and list(map(tuple, answer.data.rows)) == sample(sample_db_path, gold)


def test_any_and_records_in_a_negation_name_nothing_left_out(sample_db_path, tmp_path):
    """The re-walk's C11: right, with 任何 and 记录 named as not used."""
    answer = _conversation(sample_db_path, tmp_path, "哪些发射场在2020年以前没有任何发射记录？")
    gold = ("SELECT name_zh FROM launch_sites WHERE id NOT IN (SELECT site_id FROM launches "
            "WHERE launch_date < '2020-01-01')")
    assert answer.ok and sorted(map(tuple, answer.data.rows)) == sorted(sample(sample_db_path, gold))


def test_a_short_code_written_in_the_plural_is_that_code(sample_db_path, tmp_path):
    """The re-walk's E18: "UAVs" was left out (codes match as written) and all 40 aircraft listed."""
    answer = _conversation(sample_db_path, tmp_path, "Which UAVs have a range longer than 3,000 km?")
    gold = "SELECT model FROM aircraft WHERE role = 'UAV' AND range_km > 3000"
    assert answer.ok and sorted(map(tuple, answer.data.rows)) == sorted(sample(sample_db_path, gold))


@pytest.mark.parametrize("question", ["Which launch site was the busiest in 2023?", "2023年哪个发射场最繁忙？",
                                      "2023年哪个发射场最忙？"])
def test_the_busiest_is_the_one_with_the_most_rows_of_the_dated_table_referring_to_it(sample_db_path, tmp_path,
                                                                                      question):
    answer = _conversation(sample_db_path, tmp_path, question)
    gold = ("SELECT COUNT(*) FROM launches WHERE launch_date LIKE '2023%' GROUP BY site_id ORDER BY 1 DESC LIMIT 1")
    assert answer.ok and answer.data.rows[0][-1] == sample(sample_db_path, gold)[0][0]


def test_how_many_of_a_column_of_amounts_named_with_auxiliaries_between_its_words_is_its_sum(sample_db_path,
                                                                                          tmp_path):
    """The re-walk's E19: "How many units have been built of them altogether?" counted the UAVs (3), not their 95
    units built; the carried range was said as "= 3000"."""
    answer = _conversation(sample_db_path, tmp_path, "Which UAVs have a range longer than 3,000 km?",
                           "How many units have been built of them altogether?")
    gold = "SELECT SUM(units_built) FROM aircraft WHERE role = 'UAV' AND range_km > 3000"
    assert answer.ok and list(map(tuple, answer.data.rows)) == sample(sample_db_path, gold)
    assert "> 3000" in answer.data.text and "= 3000" not in answer.data.text


def test_the_number_of_a_column_under_another_aggregate_is_not_summed(planner):
    assert "SUM(" not in planner.plan("What is the maximum number of units built among fighters?").sql


# The twenty-eighth re-walk's confidently wrong answers.

def test_rows_are_related_through_their_own_chain_of_keys_not_a_table_they_share(sample_db_path, tmp_path):
    """E03: "never carried a military payload" went rockets -> their maker <- the maker's payloads (61 rockets)."""
    answer = _conversation(sample_db_path, tmp_path, "Which launch vehicles have never carried a military payload?")
    gold = ("SELECT name FROM launch_vehicles WHERE id NOT IN (SELECT l.vehicle_id FROM launches l JOIN payloads p "
            "ON p.launch_id = l.id WHERE p.purpose = 'military')")
    assert answer.ok and sorted(map(tuple, answer.data.rows)) == sorted(sample(sample_db_path, gold))


@pytest.mark.parametrize("question", ["What was the heaviest payload each operator country launched in 2024?"])
def test_a_query_pairing_rows_through_a_shared_table_is_never_ok(sample_db_path, tmp_path, question):
    """E05: launches paired with every payload of their site's country."""
    answer = _conversation(sample_db_path, tmp_path, question)
    assert not answer.ok


def test_each_countrys_rockets_are_reached_through_the_rockets(sample_db_path, tmp_path):
    """C17, once paired with every rocket of the launch site's country: now each country's rockets' launches (their
    makers' country), the rows the question names in order (the 39th re-walk's Z19, roles._owning_table)."""
    answer = _conversation(sample_db_path, tmp_path, "2000年代，每个国家的火箭各成功发射了多少次？")
    gold = ("SELECT c.name_zh, COUNT(*) FROM launches l JOIN launch_vehicles v ON v.id = l.vehicle_id JOIN manufacturers m "
            "ON m.id = v.manufacturer_id JOIN countries c ON c.id = m.country_id WHERE l.outcome = 'success' "
            "AND l.launch_date BETWEEN '2000-01-01' AND '2009-12-31' GROUP BY c.id")
    assert answer.ok and sorted(map(tuple, answer.data.rows)) == sorted(sample(sample_db_path, gold))


def test_each_after_a_list_of_values_is_each_value_in_each_period(planner, sample_db_path):
    """C13: 2025年每个季度，中国火箭和美国火箭各发射了多少次？ pooled both countries in each quarter."""
    plan = planner.plan("2025年每个季度，中国火箭和美国火箭各发射了多少次？")
    gold = ("SELECT (CAST(strftime('%m', l.launch_date) AS INTEGER) + 2) / 3, c.name_zh, COUNT(*) FROM launches l "
            "JOIN launch_vehicles v ON v.id = l.vehicle_id JOIN manufacturers m ON m.id = v.manufacturer_id "
            "JOIN countries c ON c.id = m.country_id WHERE l.launch_date LIKE '2025%' AND c.code IN ('CHN', 'USA') "
            "GROUP BY 1, 2")
    got = sorted((int(r[0][-1]), r[1], r[2]) for r in _rows(planner, plan.sql))
    assert plan.caveat is None and got == sorted(sample(sample_db_path, gold))


def test_each_half_of_a_year_is_a_half_year_bucket(planner, sample_db_path):
    """E01: "in each half of 2022" gave one total for the year."""
    plan = planner.plan("What was the total payload mass launched from Kennedy Space Center in each half of 2022?")
    gold = ("SELECT CASE WHEN strftime('%m', l.launch_date) <= '06' THEN 1 ELSE 2 END, ROUND(SUM(p.mass_kg), 1) "
            "FROM payloads p JOIN launches l ON l.id = p.launch_id JOIN launch_sites s ON s.id = l.site_id "
            "WHERE s.name = 'Kennedy Space Center' AND l.launch_date LIKE '2022%' GROUP BY 1")
    got = sorted((int(r[0][-1]), round(r[1], 1)) for r in _rows(planner, plan.sql))
    assert plan.caveat is None and got == sorted(sample(sample_db_path, gold))


@pytest.mark.parametrize("question", ["20世纪90年代首飞的战斗机有哪些？", "上世纪90年代首飞的战斗机有哪些？"])
def test_a_decade_of_a_century_is_that_decade(planner, sample_db_path, question):
    """C09: 20世纪90年代 was "20, 90" the planner could not place."""
    plan = planner.plan(question)
    gold = "SELECT name_zh FROM aircraft WHERE role = 'fighter' AND first_flight_date BETWEEN '1990' AND '1999-12-31'"
    assert plan.caveat is None and _rows(planner, plan.sql) == sorted(sample(sample_db_path, gold))


def test_a_count_over_rows_paired_under_a_shared_parent_is_never_ok(sample_db_path, tmp_path):
    """C09: 按用途分 grouped the aircraft by the purposes of their makers' payloads (176 "military" aircraft)."""
    answer = _conversation(sample_db_path, tmp_path, "20世纪90年代首飞的飞机，按用途分各有几款？")
    assert not answer.ok


def test_the_total_number_of_a_tables_column_of_amounts_is_its_sum(planner, sample_db_path):
    """E16: "the total number of aircraft units built by manufacturers founded before 1930" counted 18 models."""
    plan = planner.plan("What's the total number of aircraft units built by manufacturers founded before 1930?")
    gold = ("SELECT SUM(a.units_built) FROM aircraft a JOIN manufacturers m ON m.id = a.manufacturer_id "
            "WHERE m.founded_year < 1930")
    assert plan.caveat is None and _rows(planner, plan.sql) == sample(sample_db_path, gold)


@pytest.mark.parametrize("question, bound", [("Which aircraft parts cost more than 30 million dollars?", 30_000_000),
                                             ("Which aircraft parts cost more than $1.5 million?", 1_500_000)])
def test_a_number_with_a_scale_word_is_its_value(planner, question, bound):
    """E20: "$30 million" was 30, "million" named as not used."""
    plan = planner.plan(question)
    assert plan.caveat is None and f"> {bound}" in plan.sql


@pytest.mark.parametrize("question", ["2022年3月到6月，哪些现役火箭一次都没有发射？",
                                      "Between March and June 2022, which active rockets did not launch at all?"])
def test_a_leading_period_of_rows_there_are_none_of_is_inside_the_negation(planner, sample_db_path, question):
    """The twenty-ninth re-walk's C11: 一次都没有 was "一" the planner could not place; read as never, the period was
    put on the rockets kept (none) instead of the launches there are none of."""
    plan = planner.plan(question)
    gold = ("SELECT name FROM launch_vehicles WHERE status = 'active' AND id NOT IN (SELECT vehicle_id FROM launches "
            "WHERE launch_date BETWEEN '2022-03-01' AND '2022-06-30')")
    assert plan.caveat is None and len(_rows(planner, plan.sql)) == len(sample(sample_db_path, gold))


def test_changing_a_word_of_the_previous_question_is_a_follow_up(sample_db_path, tmp_path):
    """The twenty-ninth re-walk's C10: 把年份换成2019年… was read alone and declined (nothing to rank by)."""
    answer = _conversation(sample_db_path, tmp_path, "2022年发射次数最多的五种火箭，各自的成功率是多少？",
                           "把年份换成2019年，前五名和成功率又是怎样？")
    assert answer.ok and "2019" in answer.data.sql and len(answer.data.rows) == 5


def test_only_count_in_a_follow_up_narrows_the_rows_and_keeps_the_figure(sample_db_path, tmp_path):
    """The thirtieth re-walk's E14: "Only count payloads launched before 2015." replaced the share with a count, ok."""
    answer = _conversation(sample_db_path, tmp_path, "What share of each manufacturer's payloads is still operational?",
                           "Only count payloads launched before 2015.")
    assert answer.ok and "2015" in answer.data.sql and "CASE WHEN" in answer.data.sql


def test_a_word_asked_after_which_that_no_name_explains_is_said_left_out(sample_db_path, tmp_path):
    """The thirtieth re-walk's C09: 分别由哪家供应商提供？ was dropped without a word, and the parts alone were ok."""
    answer = _conversation(sample_db_path, tmp_path, "歼-20用了哪些部件？分别由哪家供应商提供？")
    assert not answer.ok and "供应商" in answer.data.caveat
