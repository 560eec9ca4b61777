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
    _, answer = answers(askdb, "2020年中国的发射场一共发射了多少次？", "哪几次是失败的？")
    assert answer.data.rows == [["Xiaoxiang-1 16"]]
    assert not answer.ok and answer.data.caveat


def test_break_that_down_points_back():
    assert leans_on_previous("Break that down by purpose.") and leans_on_previous("Split it up by month.")
    assert not leans_on_previous("Break down launches by purpose.")


def test_a_follow_up_grouping_by_what_it_names_is_not_a_join_to_check(planner):
    """按运营国家呢？: the words ask for the countries; "what about Russia?" after a count of launches
    still says it joined sites and countries to read it."""
    from agent.planner.followup import frame_to_dict

    first = planner.plan("导航卫星的平均质量是多少？")
    regrouped = planner.plan("按运营国家呢？", frame_to_dict(first.frame) | {"complete": True})
    assert "GROUP BY countries.id" in regrouped.sql and regrouped.frame.link is None
    count = planner.plan("How many launches were there in 2020?")
    assert planner.plan("what about Russia?", frame_to_dict(count.frame) | {"complete": True}).frame.link == "joined"


def test_each_of_them_counts_the_rows_of_the_listed_ones(talk, sample_db_path):
    assert rows_after(talk, "List all reusable launch vehicles.",
                      "How many times has each of them launched since June 2022?") == sorted(sample(sample_db_path, (
        "SELECT v.name, COUNT(*) FROM launches l JOIN launch_vehicles v ON l.vehicle_id = v.id "
        "WHERE v.reusable = 1 AND l.launch_date >= '2022-06-01' GROUP BY v.id")))


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
