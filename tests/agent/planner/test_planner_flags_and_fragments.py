"""Yes/no columns, values of other rows, and fragments after an answer (issue 38, the third re-walk).

"Which reusable launch vehicles are still active?" filters on the 0/1 column, not shows it; a value of
rows that only share a parent with the subject (军用飞机: a purpose of payloads, whose manufacturer also
makes aircraft) is named as left out, not joined; a fragment after an answer (哪几次是失败的？) is read
against it, listing the rows it counted, and says no word of it points back.
"""

from __future__ import annotations

from agent.planner.followup import leans_on_previous
from tests.agent.planner.test_planner_followup import planner, result, sample, talk  # noqa: F401 (fixtures)
from tests.agent.planner.test_planner_compounds import FLEW as FLEW_10, answers, rows_after
from tests.agent.planner.test_planner_leaning import UNTIED, askdb  # noqa: F401 (fixture)


def test_a_yes_no_column_named_in_a_question_for_rows_is_a_condition(planner):
    for question in ("Which reusable launch vehicles are still active?", "Which active launch vehicles are reusable?",
                     "How many reusable launch vehicles are there?"):
        plan = planner.plan(question)
        assert "reusable = 1" in plan.sql and plan.frame.unused == [], question
    assert "reusable = 1" not in planner.plan("Is the Falcon 9 reusable?").sql  # asked of one: shown


def test_a_value_of_rows_that_only_share_a_parent_is_left_out_and_said(planner):
    plan = planner.plan("军用飞机有哪些？")
    assert "payloads" not in plan.sql and plan.frame.unused == ["军用"]
    assert "purpose = 'military'" in planner.plan("军用卫星有多少颗？").sql


def test_chinese_names_what_it_asks_about_after_de(talk, sample_db_path):
    assert rows_after(talk, "飞机的制造商有哪些？") == sorted(sample(sample_db_path, (
        "SELECT DISTINCT m.name_zh FROM manufacturers m JOIN aircraft a ON a.manufacturer_id = m.id")))


def test_a_fragment_after_an_answer_is_read_against_it_and_says_so(askdb):
    """A fragment with no word pointing back is read against the answer before, and said to be; 哪几次是… (a measure
    word with no noun after it: which of those times) points back, so it is answered (since the 53rd walk)."""
    _, answer = answers(askdb, "2020年中国的发射场一共发射了多少次？", "哪几次是失败的？")
    assert answer.data.rows == [["Xiaoxiang-1 16"]] and answer.ok and "接着上一个问题" in answer.data.text


def test_break_that_down_points_back():
    assert leans_on_previous("Break that down by purpose.") and leans_on_previous("Split it up by month.")
    assert not leans_on_previous("Break down launches by purpose.")


def test_a_follow_up_grouping_by_what_it_names_is_not_a_join_to_check(planner):
    """按运营国家呢？: the words ask for the countries; "what about Russia?" after a count of launches still says how
    it read Russia: the launch sites' country (7), not the rockets' (15)."""
    from agent.planner.followup import frame_to_dict

    first = planner.plan("导航卫星的平均质量是多少？")
    regrouped = planner.plan("按运营国家呢？", frame_to_dict(first.frame) | {"complete": True})
    assert "GROUP BY countries.id" in regrouped.sql and regrouped.frame.link is None
    count = planner.plan("How many launches were there in 2020?")
    russia = planner.plan("what about Russia?", frame_to_dict(count.frame) | {"complete": True})
    assert russia.frame.other_way == ("Russia", "launch_sites", "7", "launch_vehicles", "15") and russia.caveat


def test_each_of_them_counts_the_rows_of_the_listed_ones(talk, sample_db_path):
    assert rows_after(talk, "List all reusable launch vehicles.",
                      "How many times has each of them launched since June 2022?") == sorted(sample(sample_db_path, (
        "SELECT v.name, COUNT(*) FROM launches l JOIN launch_vehicles v ON l.vehicle_id = v.id "
        "WHERE v.reusable = 1 AND l.launch_date >= '2022-06-01' GROUP BY v.id")))


RUSSIAN_FAMILIES = "Which launch vehicle families are Russian, and when did each first fly?"


def test_each_of_the_rows_a_question_asks_when_of_is_listed_by_name(askdb, sample_db_path):
    """"when did each first fly": each family with its year, not a count of families per year."""
    answer, = answers(askdb, RUSSIAN_FAMILIES)
    assert sorted(map(tuple, answer.data.rows)) == sorted(sample(sample_db_path, (
        "SELECT f.name, f.first_flight_year FROM vehicle_families f JOIN countries c ON f.country_id = c.id "
        "WHERE c.name = 'Russia'"))) and answer.ok
    listed, = answers(askdb, "List the Russian vehicle families and their first flight year")
    assert listed.data.rows == answer.data.rows and listed.ok  # "their": the families the question names


def test_what_each_of_them_kept_is_said_in_words(planner):
    """"kept from the previous question: vehicle families", not the table as stored (seen in Chromium)."""
    from agent.planner.followup import frame_to_dict
    from agent.planner.reading import interpretation

    first = planner.plan(RUSSIAN_FAMILIES)
    then = planner.plan("How many launches has each of them made since 2010?",
                        frame_to_dict(first.frame) | {"complete": True})
    said = interpretation(then.frame, then.carried)
    assert "vehicle families" in said and "vehicle_families" not in said


def test_each_of_them_counts_the_rows_below_the_listed_ones_in_the_period_of_those_rows(talk, sample_db_path):
    """"How many launches has each of them made since 2010?" after families: each family's launches, dated by
    the launches, the families still Russian by their own country (not the launch sites')."""
    assert rows_after(talk, RUSSIAN_FAMILIES, "How many launches has each of them made since 2010?") == sorted(sample(
        sample_db_path, (
            "SELECT f.name, COUNT(*) FROM launches l JOIN launch_vehicles v ON l.vehicle_id = v.id "
            "JOIN vehicle_families f ON v.family_id = f.id JOIN countries c ON f.country_id = c.id "
            "WHERE c.name = 'Russia' AND l.launch_date >= '2010-01-01' GROUP BY f.id")))
    assert rows_after(talk, "Which launch vehicles are Russian?", "How many times has each of them launched?") == sorted(
        sample(sample_db_path, (
            "SELECT v.name, COUNT(*) FROM launches l JOIN launch_vehicles v ON l.vehicle_id = v.id "
            "JOIN manufacturers m ON v.manufacturer_id = m.id JOIN countries c ON m.country_id = c.id "
            "WHERE c.name = 'Russia' GROUP BY v.id")))


def test_the_things_the_listed_rows_refer_to_are_listed_once(talk, sample_db_path):
    assert rows_after(talk, "酒泉卫星发射中心2016年到2018年共发射了多少次？", "它们用的是哪些火箭？") == sorted(sample(sample_db_path, (
        "SELECT DISTINCT v.name_zh FROM launches l JOIN launch_vehicles v ON l.vehicle_id = v.id JOIN launch_sites s "
        "ON l.site_id = s.id WHERE s.name_zh = '酒泉卫星发射中心' AND l.launch_date >= '2016-01-01' "
        "AND l.launch_date < '2019-01-01'")))


def test_a_dangling_participle_after_an_answer_is_read_against_it(askdb):
    """"Which rockets were involved?" after a count of failures: involved in those, never ok."""
    _, answer = answers(askdb, "How many launch failures were there in Q3 2023?", "Which rockets were involved?")
    assert answer.data.rows == [["Kuaizhou-1A"]] and not answer.ok


def test_a_yes_no_column_in_a_follow_up_filters_the_previous_groups(talk, sample_db_path):
    assert rows_after(talk, FLEW_10, "Which of those are reusable?") == sorted(sample(sample_db_path, (
        "SELECT v.name, COUNT(*) FROM launches l JOIN launch_vehicles v ON l.vehicle_id = v.id "
        "WHERE l.launch_date >= '2015-01-01' AND v.reusable = 1 GROUP BY v.id HAVING COUNT(*) > 10")))


def test_which_one_has_the_most_after_counts_per_group_is_the_top_group(talk, sample_db_path):
    assert rows_after(talk, "How many launches did each launch vehicle make?", "Which one has the most?") == sample(
        sample_db_path, ("SELECT v.name, COUNT(*) FROM launches l JOIN launch_vehicles v ON l.vehicle_id = v.id "
                         "GROUP BY v.id ORDER BY COUNT(*) DESC LIMIT 1"))


def test_each_of_the_listed_keys_keeps_them_as_the_groups(talk, sample_db_path):
    """The ids listed before stay what the counts are shown by (not the rows' names)."""
    assert rows_after(talk, "Show the ids of all launch sites.", "For each of them, count the number of launches.") == sorted(sample(sample_db_path, (
        "SELECT s.id, COUNT(*) FROM launches l JOIN launch_sites s ON l.site_id = s.id GROUP BY s.id")))


def test_their_before_a_column_of_the_rows_named_is_theirs_and_a_later_year_keeps_their_period(talk, sample_db_path):
    """"families made their first flight in the 2010s" reads "their"; "each of them … in 2025" dates the
    launches and keeps the families' own period."""
    first = "Which launch vehicle families made their first flight in the 2010s?"
    assert talk.planner.plan(first).frame.unused == []
    assert rows_after(talk, first, "How many times has each of them launched in 2025?") == sorted(sample(
        sample_db_path, (
            "SELECT f.name, COUNT(*) FROM launches l JOIN launch_vehicles v ON l.vehicle_id = v.id "
            "JOIN vehicle_families f ON v.family_id = f.id WHERE f.first_flight_year BETWEEN 2010 AND 2019 "
            "AND l.launch_date >= '2025-01-01' AND l.launch_date < '2026-01-01' GROUP BY f.id")))


def test_which_ones_in_a_period_after_counts_per_period_names_the_rows(talk, sample_db_path):
    """"Which ones first flew in the 1990s?" after families counted per decade showed the years alone (the
    sixteenth re-walk's E14, ok and wrong): the families, named."""
    assert [r[0] for r in rows_after(talk, "How many launch vehicle families first flew in each decade?",
                                     "Which ones first flew in the 1990s?")] == sorted(r[0] for r in sample(
        sample_db_path, "SELECT DISTINCT f.name FROM vehicle_families f JOIN launch_vehicles v ON v.family_id = f.id "
                        "WHERE f.first_flight_year BETWEEN 1990 AND 1999"))


def test_fenbie_points_back_only_as_fenbie_shi(planner):
    """分别是哪几天…？ points back; 分别统计中国和美国… is a question of its own (read against a China count, it
    kept only the United States, ok and wrong)."""
    from agent.planner.followup import frame_to_dict

    first = planner.plan("中国2020年发射了多少次？")
    alone = planner.plan("分别统计中国和美国2021年的发射次数", frame_to_dict(first.frame) | {"complete": True})
    assert "'中国'" in alone.sql and "'美国'" in alone.sql
