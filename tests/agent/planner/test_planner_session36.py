"""Read after the seventy-sixth walk's leftovers (issue 38).

- "how many of those flights succeeded" after a count of the flights: the question's own rows, read.
- A value said again of the same rows ("active Chinese rockets … with active American ones"): one condition, read.
- "How many crewed missions …": the launches, each counted once, not the crewed payloads.
- 主要用的是哪些火箭？: a verb with no subject of its own leans on the question before.
- 歼-20是哪家制造的？, 歼-20的雷达是哪家供应的？: the maker (the supplier of the radar) shown; 单价多少 is the price, no count;
  C919的发动机是谁供应的？ is no question the number of engines answers.
- "F-22" names 'F-22A Raptor'; "F-16", no value of the database, is a name, never the number 16; "Soyuz-2" is the
  family of 'Soyuz-2.1a', 'Soyuz-2.1b' and 'Soyuz-2.1v'.
- 质量最大的五个是哪些？: the five heaviest (declined before: "could not tell what 五 refers to").
- "Which rockets failed in that quarter?", 那个季度失败的都是哪些火箭？ after the quarter of 2019 with the most failures: that
  quarter's failed rockets (it gave the quarter again, 'rockets' left out).
- 新格伦一共发射了几次？都成功了吗？, "… and were they all successful?": the count and, beside it, the successful ones (it
  counted the successes alone); 是不是都成功了 asks yes or no (it read 不 as "not": outcome != success, as if right).
"""

from __future__ import annotations

import pytest

from tests.agent.planner.test_planner_followup import planner, result, sample, talk  # noqa: F401 (fixtures)


def test_those_of_a_second_count_are_the_questions_own_rows(talk):
    _, answer = talk.ask("How many times did Starship fly in 2024 and 2025, and how many of those flights succeeded?")
    assert "caveat" not in answer and result(talk) == [("2024", 4, 3), ("2025", 5, 2)]


def test_a_value_said_again_of_the_same_rows_is_read(talk):
    _, answer = talk.ask("How does the average LEO payload capacity of active Chinese rockets compare with active "
                         "American ones?")
    assert "caveat" not in answer and answer["sql"].count("'active'") == 1


@pytest.mark.parametrize("question", [
    "How many crewed missions did China launch from 2020 through 2024?",
    "How many crewed missions were launched in 2024?",
])
def test_rows_named_after_the_count_are_counted_once_each(talk, question):
    _, answer = talk.ask(question)
    assert "caveat" not in answer and "COUNT(DISTINCT launches.id)" in answer["sql"]


def test_crewed_missions_of_china_are_its_crewed_launches(talk, sample_db_path):
    talk.ask("How many crewed missions did China launch from 2020 through 2024?")
    assert result(talk) == sample(sample_db_path, """
        SELECT COUNT(DISTINCT l.id) FROM launches l JOIN payloads p ON p.launch_id = l.id
        JOIN launch_sites s ON l.site_id = s.id JOIN countries c ON s.country_id = c.id
        WHERE p.purpose = 'crewed' AND c.name = 'China' AND l.launch_date BETWEEN '2020-01-01' AND '2024-12-31'""")


def test_a_chinese_verb_with_no_subject_follows_the_question_before(talk):
    talk.ask("印度运营的载荷有多少？")
    _, answer = talk.ask("主要用的是哪些火箭？")
    assert "印度" in answer["sql"] and "caveat" not in answer


@pytest.mark.parametrize("question, shown", [
    ("歼-20是哪家制造的？", "manufacturers.name_zh"),
    ("歼-20的雷达是哪家供应的？", "manufacturers.name_zh"),
    ("歼-20的雷达是谁供应的？", "manufacturers.name_zh"),
])
def test_who_made_or_supplied_the_rows_named_shows_them(talk, question, shown):
    _, answer = talk.ask(question)
    assert "caveat" not in answer and shown in answer["sql"].split("FROM")[0]
    assert "supplier_id" in answer["sql"] or "供应" not in question


def test_a_columns_value_asked_with_duoshao_is_no_count(talk):
    _, answer = talk.ask("歼-20的雷达单价多少？")
    assert "COUNT" not in answer["sql"] and "unit_cost_usd" in answer["sql"]


def test_a_number_of_parts_is_no_answer_to_who_supplied_them(talk):
    _, answer = talk.ask("C919的发动机是谁供应的？")
    assert "发动机" in answer["caveat"]


@pytest.mark.parametrize("question", ["What is the top speed of the F-22?", "F-22的最大速度多少？"])
def test_a_designation_without_its_variants_letter_names_the_model(talk, question):
    _, answer = talk.ask(question)
    assert "F-22A Raptor" in answer["sql"] and result(talk) == [(2410.0,)]


@pytest.mark.parametrize("question", ["F-16的最大速度是多少？", "MiG-29的航程是多少？"])
def test_a_designation_the_database_lacks_is_never_a_number(talk, question):
    _, answer = talk.ask(question)
    assert not answer.get("sql") or ("= 16" not in answer["sql"] and "= 29" not in answer["sql"])


def test_a_hyphened_number_before_a_versions_point_is_a_family(talk, sample_db_path):
    _, answer = talk.ask("What percentage of launches from Baikonur since 2020 used Soyuz-2 rockets?")
    assert "caveat" not in answer and "LIKE 'Soyuz-2%'" in answer["sql"]
    assert result(talk) == [(77.78,)]


def test_a_number_after_a_chinese_superlative_with_no_noun_is_how_many(talk):
    _, answer = talk.ask("2023年发射的载荷里，质量最大的五个是哪些？")
    assert "LIMIT 5" in answer["sql"] and len(result(talk)) == 5 and "caveat" not in answer


@pytest.mark.parametrize("first, then", [
    ("Which quarter of 2019 had the most failed launches?", "Which rockets failed in that quarter?"),
    ("2019年哪个季度发射失败的次数最多？", "那个季度失败的都是哪些火箭？"),
])
def test_that_quarter_is_the_one_the_answer_before_picked(talk, first, then):
    talk.ask(first)
    _, answer = talk.ask(then)
    assert "caveat" not in answer and "'2019-07-01'" in answer["sql"] and len(result(talk)) == 2


@pytest.mark.parametrize("question", [
    "新格伦一共发射了几次？都成功了吗？",
    "How many times has New Glenn flown, and were they all successful?",
])
def test_were_they_all_is_a_count_beside_the_total(talk, question):
    _, answer = talk.ask(question)
    assert "caveat" not in answer and result(talk) == [(2, 1)]


def test_did_they_all_succeed(talk):
    _, answer = talk.ask("How many Starship launches were there in 2025, and did they all succeed?")
    assert "caveat" not in answer and result(talk) == [(5, 2)]


def test_shi_bu_shi_asks_yes_or_no_and_negates_nothing(talk, sample_db_path):
    _, answer = talk.ask("2024年长征五号发射了几次？是不是都成功了？")
    assert "!=" not in answer["sql"] and "caveat" not in answer
    assert result(talk) == sample(sample_db_path, """
        SELECT COUNT(*), SUM(l.outcome = 'success') FROM launches l JOIN launch_vehicles v ON l.vehicle_id = v.id
        WHERE v.name_zh = '长征五号' AND l.launch_date LIKE '2024%'""")
