"""What the thirty-fourth re-walk found (issue 38), read right now:

- a period with no column of its own, in a count grouped by a table that has a year of its own, is of the rows
  counted ("Which three launch sites launched the most payloads between 2015 and 2020?": the launches' dates, not the
  year the sites opened); 2021年至今 is since 2021, and 至今 with no year before it is "still";
- values in parentheses that give examples ("(communications, earth observation and so on)", （例如通信、导航等）) are
  not a filter;
- "on record", "their listed hardware" and 自己的 raise no caveat.
"""

from __future__ import annotations

import pytest

from tests.agent.planner.test_planner_followup import planner, sample  # noqa: F401 (fixtures)
from tests.agent.planner.test_planner_within_groups import _conversation, _rows

PAYLOADS_PER_SITE = ("SELECT s.name_zh, COUNT(*) FROM payloads p JOIN launches l ON l.id = p.launch_id "
                     "JOIN launch_sites s ON s.id = l.site_id WHERE {} GROUP BY s.id ORDER BY 2 DESC LIMIT 3")


@pytest.mark.parametrize("question, period", [
    ("2015年至2020年，哪三个发射场发射的有效载荷数量最多？", "l.launch_date BETWEEN '2015-01-01' AND '2020-12-31'"),
    ("2021年至今，哪三个发射场发射的有效载荷数量最多？", "l.launch_date >= '2021-01-01'"),
])
def test_a_period_is_of_the_rows_counted_not_of_the_groups_own_year(planner, sample_db_path, question, period):
    plan = planner.plan(question)
    assert plan.caveat is None and "opened" not in plan.sql
    assert _rows(planner, plan.sql) == sorted(sample(sample_db_path, PAYLOADS_PER_SITE.format(period)))


@pytest.mark.parametrize("question", ["至今仍在运行的卫星有多少颗？", "哪些运载火箭至今仍在服役？"])
def test_to_this_day_with_no_year_is_still(planner, question):
    plan = planner.plan(question)
    assert plan.caveat is None and "launch_date" not in plan.sql


@pytest.mark.parametrize("question", [
    "In 2023, how many payloads went up for each purpose (communications, earth observation and so on)?",
    "2023年各用途（例如通信、导航等）的载荷各有多少？",
])
def test_values_given_as_examples_are_not_a_filter(planner, sample_db_path, question):
    plan = planner.plan(question)
    gold = ("SELECT p.purpose, COUNT(*) FROM payloads p JOIN launches l ON l.id = p.launch_id "
            "WHERE l.launch_date LIKE '2023%' GROUP BY p.purpose")
    assert plan.caveat is None and " IN (" not in plan.sql
    assert _rows(planner, plan.sql) == sorted(sample(sample_db_path, gold))


def test_etc_after_a_list_outside_examples_is_still_named(planner):
    assert "等" in (planner.plan("中国、美国等国家的发射场有多少个？").caveat or "")


@pytest.mark.parametrize("question", [
    "Which launch sites have no crewed payload launches on record?",
    "Which 5 aircraft have the highest combined unit cost of their listed hardware?",
    "哪些国家运营过有效载荷，却没有自己的发射场？",
])
def test_words_of_the_rows_own_raise_no_caveat(sample_db_path, tmp_path, question):
    answer = _conversation(sample_db_path, tmp_path, question)
    assert answer.ok and answer.data.caveat is None, answer.data.caveat


@pytest.mark.parametrize("question", ["各发射场发射的有效载荷平均质量分别是多少公斤？", "各发射场的载荷平均质量是多少？"])
def test_the_rows_below_each_group_whose_column_is_measured_are_not_grouped_by(planner, sample_db_path, question):
    """The re-walk's Z9 was declined: 载荷 after 各发射场的 was read as what to group by."""
    plan = planner.plan(question)
    gold = ("SELECT s.name_zh, AVG(p.mass_kg) FROM payloads p JOIN launches l ON l.id = p.launch_id "
            "JOIN launch_sites s ON s.id = l.site_id GROUP BY s.id")
    assert plan.caveat is None and plan.sql is not None
    assert [row[:2] for row in _rows(planner, plan.sql)] == sorted(sample(sample_db_path, gold))


def test_a_purpose_is_named_in_chinese(sample_db_path, tmp_path):
    answer = _conversation(sample_db_path, tmp_path, "2023年技术验证类的载荷有多少个？")
    assert answer.ok and "'technology'" in answer.data.sql


@pytest.mark.parametrize("questions, period", [
    (("How many launches did SpaceX rockets make in the first half of 2024?", "What about the same period in 2023?"),
     ("2023-01-01", "2023-06-30")),
    (("2024年第一季度发射了多少次？", "2023年同期呢？"), ("2023-01-01", "2023-03-31")),
])
def test_the_same_period_of_another_year_is_that_part_of_it(sample_db_path, tmp_path, questions, period):
    answer = _conversation(sample_db_path, tmp_path, *questions)
    maker = " AND v.manufacturer_id = (SELECT id FROM manufacturers WHERE name = 'SpaceX')" if "SpaceX" in questions[0] \
        else ""
    gold = ("SELECT COUNT(*) FROM launches l JOIN launch_vehicles v ON v.id = l.vehicle_id "
            f"WHERE l.launch_date BETWEEN '{period[0]}' AND '{period[1]}'{maker}")
    assert answer.ok and answer.data.rows == [list(r) for r in sample(sample_db_path, gold)]


def test_a_chinese_decline_names_the_tables_in_chinese(planner):
    from agent.planner.answer_text import unmappable_answer

    text = unmappable_answer(zh=True, reason="看不出问的是哪张表", schema=planner.schema, lexicon=planner.lexicon)
    assert "例如“载荷有多少条？”" in text and "载荷（payloads）、发射（launches）" in text
