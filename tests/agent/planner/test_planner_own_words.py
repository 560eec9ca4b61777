"""Words a question says of its own rows, read as such (issue 38, the thirty-first re-walk).

Six of 28 right answers carried a caveat naming a word that names nothing: "its" after "For each manufacturer",
"among those launched in the 2010s", "saw" ("Which orbit saw the most launches"), "at least once" and "a single"
(the join and the negation say them), 汇总 and 属于. And "each reusable launch vehicle" (可重复使用的运载火箭各自…)
grouped the launches by the yes/no column instead of counting each reusable vehicle's.
"""

from __future__ import annotations

import pytest

from tests.agent.planner.test_planner_followup import planner, sample  # noqa: F401 (fixtures)
from tests.agent.planner.test_planner_within_groups import _conversation, _rows


@pytest.mark.parametrize("question, gold", [
    ("For each manufacturer, what's the mean range of its airliners?",
     "SELECT m.name, AVG(a.range_km) FROM aircraft a JOIN manufacturers m ON m.id = a.manufacturer_id "
     "WHERE a.role = 'airliner' GROUP BY m.id"),
    ("How many payloads did each operator country have among those launched in the 2010s?",
     "SELECT c.name, COUNT(*) FROM payloads p JOIN launches l ON l.id = p.launch_id JOIN countries c "
     "ON c.id = p.operator_country_id WHERE l.launch_date >= '2010-01-01' AND l.launch_date < '2020-01-01' GROUP BY c.id"),
    ("Which orbit saw the most launches in 2017?",
     "SELECT orbit, COUNT(*) FROM launches WHERE strftime('%Y', launch_date) = '2017' GROUP BY orbit "
     "ORDER BY 2 DESC LIMIT 1"),
    ("Which rockets have flown at least once without a single failed launch?",
     "SELECT DISTINCT v.name FROM launch_vehicles v JOIN launches l ON l.vehicle_id = v.id WHERE v.id NOT IN "
     "(SELECT vehicle_id FROM launches WHERE outcome = 'failure' AND vehicle_id IS NOT NULL)"),
])
def test_words_of_the_question_s_own_rows_raise_no_caveat(planner, sample_db_path, question, gold):
    plan = planner.plan(question)
    assert plan.caveat is None, plan.caveat
    assert _rows(planner, plan.sql) == sorted(sample(sample_db_path, gold))


@pytest.mark.parametrize("question", ["Which of those launched in 2020 failed?", "What are their names?"])
def test_a_pointer_with_nothing_of_the_question_s_own_is_still_named(planner, question):
    assert planner.plan(question).caveat is not None


def test_at_least_a_number_is_still_a_comparison(planner):
    assert "HAVING COUNT(*) >= 20" in planner.plan("Which rockets have flown at least 20 times?").sql


@pytest.mark.parametrize("questions", [("2023年各发射场各发射了多少次？", "按国家汇总呢？"),
                                       ("哪些国家从来没有运营过载荷？", "其中属于欧洲的有哪些？")])
def test_chinese_verbs_of_tallying_and_belonging_raise_no_caveat(sample_db_path, tmp_path, questions):
    answer = _conversation(sample_db_path, tmp_path, *questions)
    assert answer.ok and answer.data.caveat is None


@pytest.mark.parametrize("question", ["How many launches did each reusable launch vehicle make?",
                                      "可重复使用的运载火箭各自执行过多少次发射？"])
def test_each_thing_that_is_so_counts_each_of_them(planner, sample_db_path, question):
    plan = planner.plan(question)
    gold = ("SELECT v.name, COUNT(*) FROM launches l JOIN launch_vehicles v ON v.id = l.vehicle_id "
            "WHERE v.reusable = 1 GROUP BY v.id")
    got = _rows(planner, plan.sql)
    assert [row[-1] for row in got] == sorted(row[-1] for row in sample(sample_db_path, gold)) or \
        sorted(r[-1] for r in got) == sorted(r[-1] for r in sample(sample_db_path, gold))
    assert "GROUP BY launch_vehicles.reusable" not in plan.sql


@pytest.mark.parametrize("question", ["各类型飞机的平均最高速度分别是多少？", "What is the average max speed of each type of aircraft?"])
def test_a_kind_the_thing_s_own_table_does_not_hold_is_named_not_taken_from_another(planner, question):
    plan = planner.plan(question)
    assert "manufacturers.kind" not in plan.sql and plan.caveat is not None


@pytest.mark.parametrize("question", ["How many manufacturers of each kind are there?", "各类型制造商的飞机平均航程是多少？"])
def test_a_kind_of_the_table_that_holds_it_still_groups(planner, question):
    assert "GROUP BY" in planner.plan(question).sql and "kind" in planner.plan(question).sql


def test_a_count_says_its_rows_in_the_plural(sample_db_path, tmp_path):
    answer = _conversation(sample_db_path, tmp_path, "What was the launch count for the first half of 2018?")
    assert "There were 59 launches from 2018-01-01 to 2018-06-30" in answer.data.text


def test_a_cut_off_result_says_at_least_without_a_total(sample_db_path, tmp_path):
    answer = _conversation(sample_db_path, tmp_path, "列出所有发射的任务名称")
    assert answer.data.text.count("至少") == 1 and "共 至少" not in answer.data.text


def test_most_frequent_ranks_and_that_year_points_back(sample_db_path, tmp_path):
    answer = _conversation(sample_db_path, tmp_path, "发射最频繁的是哪一年？", "那一年的发射成功率是多少？")
    assert answer.ok and answer.data.rows[0][:2] == ["2025", 96.37]


@pytest.mark.parametrize("question", ["Which fighter aircraft have two engines?", "Which fighter aircraft have 2 engines?"])
def test_a_number_word_with_a_column_of_counts_is_that_count(planner, sample_db_path, question):
    plan = planner.plan(question)
    gold = "SELECT model FROM aircraft WHERE role = 'fighter' AND engines = 2"
    assert plan.caveat is None and _rows(planner, plan.sql) == sorted(sample(sample_db_path, gold))


def test_a_follow_up_keeps_only_the_rows_with_that_many(sample_db_path, tmp_path):
    answer = _conversation(sample_db_path, tmp_path, "List the fighter aircraft that first flew after 2000, fastest first.",
                           "Only the ones with two engines.")
    assert answer.ok and len(answer.data.rows) == 7 and "engines = 2" in answer.data.sql


def test_which_of_those_groups_had_more_than_a_number_compares_their_count(sample_db_path, tmp_path):
    answer = _conversation(sample_db_path, tmp_path,
                           "How many payloads did each operator country have among those launched in the 2010s?",
                           "Which of those countries had more than 100?")
    assert answer.ok and [row[0] for row in answer.data.rows] == ["China", "United States", "Russia"]


def test_more_than_a_number_of_rows_with_no_count_is_named(sample_db_path, tmp_path):
    answer = _conversation(sample_db_path, tmp_path, "Which launch sites are in China?", "Which of those had more than 100?")
    assert not answer.ok and "more than 100" in answer.data.caveat


@pytest.mark.parametrize("questions, gold", [
    (("What was the launch count for the first half of 2018?", "And in the second half?"),
     "SELECT COUNT(*) FROM launches WHERE launch_date >= '2018-07-01' AND launch_date < '2019-01-01'"),
    (("What was the launch count for the first half of 2018?", "What about the third quarter?"),
     "SELECT COUNT(*) FROM launches WHERE launch_date >= '2018-07-01' AND launch_date < '2018-10-01'"),
    (("2020年上半年发射了多少次？", "下半年呢？"),
     "SELECT COUNT(*) FROM launches WHERE launch_date >= '2020-07-01' AND launch_date < '2021-01-01'"),
    (("2020年发射了多少次？", "第四季度呢？"),
     "SELECT COUNT(*) FROM launches WHERE launch_date >= '2020-10-01' AND launch_date < '2021-01-01'"),
])
def test_a_half_or_quarter_with_no_year_is_of_the_previous_answer_s_year(sample_db_path, tmp_path, questions, gold):
    answer = _conversation(sample_db_path, tmp_path, *questions)
    assert answer.ok and answer.data.rows == [list(r) for r in sample(sample_db_path, gold)]


def test_a_half_with_no_year_and_no_year_before_is_not_placed(planner):
    assert planner.plan("How many launches were there in the second half?").caveat is not None


@pytest.mark.parametrize("question", ["Which aircraft manufacturer has built the most units in total across all its models?",
                                      "Which manufacturer has built the most units in total?"])
def test_the_most_of_an_amount_in_total_ranks_each_one_s_total(planner, sample_db_path, question):
    plan = planner.plan(question)
    assert plan.caveat is None and "SUM(aircraft.units_built)" in plan.sql
    assert _rows(planner, plan.sql)[0][0] == "Boeing"


def test_how_many_of_a_unit_sums_the_column_of_that_unit(planner, sample_db_path):
    plan = planner.plan("How many kilograms of payload went to SSO in the second quarter of 2019 altogether?")
    gold = ("SELECT SUM(p.mass_kg) FROM payloads p JOIN launches l ON l.id = p.launch_id WHERE p.orbit = 'SSO' "
            "AND l.launch_date >= '2019-04-01' AND l.launch_date < '2019-07-01'")
    assert plan.caveat is None and _rows(planner, plan.sql) == sorted(sample(sample_db_path, gold))


def test_a_unit_s_word_read_as_its_column_is_no_guess(sample_db_path, tmp_path):
    answer = _conversation(sample_db_path, tmp_path,
                           "How many kilograms of payload went to SSO in the second quarter of 2019 altogether?")
    assert answer.ok and answer.data.caveat is None and round(answer.data.rows[0][0], 1) == 15928.1


def test_never_doing_a_thing_to_rows_named_by_their_column_is_a_negation(sample_db_path, tmp_path):
    answer = _conversation(sample_db_path, tmp_path, "Which engine manufacturers have never supplied a part for any aircraft?")
    gold = ("SELECT name FROM manufacturers WHERE kind = 'engine' AND id NOT IN "
            "(SELECT supplier_id FROM aircraft_hardware WHERE supplier_id IS NOT NULL)")
    assert answer.ok and sorted(answer.data.rows) == sorted([list(r) for r in sample(sample_db_path, gold)])


@pytest.mark.parametrize("question, gold", [
    ("从来没有发射过的运载火箭有哪些？", "SELECT name_zh FROM launch_vehicles WHERE id NOT IN "
                                         "(SELECT vehicle_id FROM launches WHERE vehicle_id IS NOT NULL)"),
    ("没有发射场的国家有哪些？", "SELECT name_zh FROM countries WHERE id NOT IN "
                                 "(SELECT country_id FROM launch_sites WHERE country_id IS NOT NULL)"),
])
def test_a_chinese_negation_ends_at_de_and_the_thing_after_it_is_asked_about(planner, sample_db_path, question, gold):
    plan = planner.plan(question)
    assert plan.caveat is None and _rows(planner, plan.sql) == sorted(sample(sample_db_path, gold))


# The thirty-second re-walk (at d851f9f): flagged answers that can be right, and caveats on right ones.

@pytest.mark.parametrize("questions, first", [
    (("Which launch vehicle flew the most missions in the 2010s?",), ["Falcon 9", 80]),
    (("Which launch vehicle flew the most missions in the 2010s?", "And in the 2000s?"), ["Soyuz-U", 88]),
    (("Which country operated the most earth observation satellites launched since July 2019?",), ["United States", 271]),
    (("Which country operated the most earth observation satellites launched since July 2019?",
      "What about navigation satellites?"), ["China", 18]),
])
def test_the_most_of_rows_named_by_their_name_or_a_value_counts_those_rows(sample_db_path, tmp_path, questions, first):
    answer = _conversation(sample_db_path, tmp_path, *questions)
    assert answer.ok and answer.data.rows == [first]


def test_what_about_a_value_s_rows_keeps_the_figure(sample_db_path, tmp_path):
    """The figure is kept (a count); Russia's launches are from sites in Russia (8) or on Russian rockets (17, Baikonur
    is in Kazakhstan): both said, not ok."""
    answer = _conversation(sample_db_path, tmp_path, "How many launches did China have in 2019?",
                           "What about Russian launches?")
    assert len(answer.data.rows) == 1 and len(answer.data.rows[0]) == 1
    assert not answer.ok and "(8); the launch vehicle's gives 17" in answer.data.caveat


def test_not_one_said_around_its_noun_is_never(sample_db_path, tmp_path):
    answer = _conversation(sample_db_path, tmp_path, "哪些发射场在2022年一次发射都没有？")
    gold = ("SELECT name_zh FROM launch_sites WHERE id NOT IN (SELECT site_id FROM launches "
            "WHERE launch_date BETWEEN '2022-01-01' AND '2022-12-31' AND site_id IS NOT NULL)")
    assert answer.ok and sorted(answer.data.rows) == sorted([list(r) for r in sample(sample_db_path, gold)])


@pytest.mark.parametrize("question", [
    "What percentage of launches between 2015 and 2019 ended in outright failure?",
    "Which launch sites have a clean record, with no failed launches at all?",
    "最早投入使用的发射场是哪个？",
    "Which manufacturer's aircraft parts have the highest average unit cost?",  # "aircraft parts": whose they are
])
def test_words_the_query_already_says_raise_no_caveat(sample_db_path, tmp_path, question):
    answer = _conversation(sample_db_path, tmp_path, question)
    assert answer.ok and answer.data.caveat is None, answer.data.caveat


def test_a_chinese_answer_names_the_rows_and_kept_values_in_chinese(sample_db_path, tmp_path):
    counted = _conversation(sample_db_path, tmp_path, "1990年代有多少款战斗机完成了首飞？")
    assert "条飞机记录" in counted.data.text and "aircraft" not in counted.data.text
    kept = _conversation(sample_db_path, tmp_path, "2010年代发射的通信卫星平均质量是多少？", "按运营国家分呢？")
    assert "用途 = 通信、统计口径" in kept.data.text and "communications" not in kept.data.text


@pytest.mark.parametrize("question", ["哪一年发射的载荷最多？", "Which year had the most payloads launched?"])
def test_the_year_of_rows_with_no_date_is_their_launches_year(sample_db_path, tmp_path, question):
    answer = _conversation(sample_db_path, tmp_path, question)
    assert answer.ok and answer.data.rows == [["2025", 506]]


def test_the_day_asked_after_the_thing_keeps_the_thing_asked_about(sample_db_path, tmp_path):
    answer = _conversation(sample_db_path, tmp_path, "质量最大的有效载荷是哪个？是哪天发射的？")
    assert answer.ok and "payloads.name_zh" in answer.data.sql and "launch_date" in answer.data.sql
