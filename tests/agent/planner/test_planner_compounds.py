"""Compounds of table words and rankings of an earlier answer's groups (issue 38, the second re-walk).

"aircraft manufacturers", 飞机制造商: the last table word is what the question asks about, the first
one only requires a matching row (a subquery when counted, so no row counts twice). "Which rockets
launched at least 15 times": the rows counted refer to the rows asked about. "Which three of them flew
most?": the previous answer's groups, ranked and cut; a follow-up keeps that cut without a caveat.
"""

from __future__ import annotations

from agent.checks.registry import Result, TurnFacts, review
from tests.agent.planner.test_planner_followup import planner, result, sample, talk  # noqa: F401 (fixtures)
from tests.agent.planner.test_planner_leaning import UNTIED, askdb  # noqa: F401 (fixture)

FLEW = "Which launch vehicles flew more than 10 times since 2015?"


def answers(askdb, *questions):
    """Each question's answer, asked in one conversation through the whole service."""
    thread, found = None, []
    for question in questions:
        events = list(askdb.ask(question, user_id="u", thread_id=thread))
        thread = events[-1].thread_id
        found.append(next(e.answer for e in events if e.type == "answer"))
    return found


def answered_as(talk, sample_db_path, question: str, gold: str) -> dict:
    """The question is answered, with no caveat, with the rows of the gold SQL (in any order); the answer."""
    _, answer = talk.ask(question)
    assert sorted(result(talk)) == sorted(sample(sample_db_path, gold)) and "caveat" not in answer, answer
    return answer


def rows_after(talk, *questions) -> list[tuple]:
    """The last question's rows, sorted, after asking every question in one conversation."""
    for question in questions:
        talk.ask(question)
    return sorted(result(talk))
TOP3 = ("SELECT v.name, COUNT(*) FROM launches l JOIN launch_vehicles v ON l.vehicle_id = v.id "
        "WHERE l.launch_date >= '2015-01-01' GROUP BY v.id HAVING COUNT(*) > 10 ORDER BY COUNT(*) DESC LIMIT 3")


def test_the_last_word_of_a_compound_is_what_is_counted_without_counting_a_row_twice(talk, sample_db_path):
    _, answer = talk.ask("How many aircraft manufacturers are there?")
    assert result(talk) == sample(sample_db_path, "SELECT COUNT(DISTINCT manufacturer_id) FROM aircraft")
    assert "caveat" not in answer


def test_a_chinese_compound_lists_its_head_noun(talk, sample_db_path):
    assert rows_after(talk, "美国的飞机制造商有哪些？") == sorted(sample(sample_db_path, (
        "SELECT m.name_zh FROM manufacturers m JOIN countries c ON m.country_id = c.id "
        "WHERE c.name_zh = '美国' AND m.id IN (SELECT manufacturer_id FROM aircraft)")))


def test_words_joined_by_de_are_not_a_compound(talk, sample_db_path):
    """国家的飞机制造商: the country is what the manufacturers are counted per, not a modifier."""
    talk.ask("哪个国家的飞机制造商最多？")
    assert sorted(row[0] for row in result(talk)) == ["中国", "美国"]  # 7 each


def test_rows_counted_n_times_are_grouped_by_the_rows_they_refer_to(talk, sample_db_path):
    assert rows_after(talk, "Which rockets launched at least 15 times from 2011 through 2015?") == sorted(sample(sample_db_path, (
        "SELECT v.name, COUNT(*) FROM launches l JOIN launch_vehicles v ON l.vehicle_id = v.id "
        "WHERE l.launch_date >= '2011-01-01' AND l.launch_date < '2016-01-01' GROUP BY v.id HAVING COUNT(*) >= 15")))


def test_which_three_of_them_ranks_the_previous_groups(talk, sample_db_path):
    talk.ask(FLEW)
    _, answer = talk.ask("Which three of them flew most?")
    assert result(talk) == sample(sample_db_path, TOP3)
    assert "caveat" not in answer and answer["text"].startswith("Following your last question")


def test_a_share_of_the_top_three_keeps_the_same_three(talk, sample_db_path):
    talk.ask(FLEW)
    talk.ask("Which three of them flew most?")
    talk.ask("成功率呢？")
    assert [row[0] for row in result(talk)] == ["猎鹰9号", "长征三号乙", "电子号"]  # the top 3 by launches


def test_a_ranking_with_no_subject_after_an_answer_is_read_against_it_and_says_so(askdb):
    _, answer = answers(askdb, FLEW, "Which three flew the most?")
    assert answer.data.rows == [["Falcon 9", 572], ["Long March 3B", 89], ["Electron", 77]]
    assert not answer.ok and answer.data.caveat.startswith(UNTIED)


def test_a_follow_up_keeps_the_cut_of_the_answer_it_follows(sample_db_path):
    from agent.sources.sqlite import SQLiteSource

    catalogue = SQLiteSource(sample_db_path).catalogue()
    sql = TOP3.replace("SELECT v.name, COUNT(*)", "SELECT v.name_zh, COUNT(*)")
    rows = [["猎鹰9号", 572], ["长征三号乙", 89], ["电子号", 77]]
    turn = TurnFacts(question="它们一共发射过多少次？", dialect="sqlite", catalogue=lambda: catalogue,
                     previous_question="成功率呢？", previous_sql=sql)
    assert [v.name for v in review("共 3 行。", Result(sql=sql, row_count=3, rows=lambda: rows), turn,
                                   stage="verdict")] == []
    alone = TurnFacts(question="它们一共发射过多少次？", dialect="sqlite", catalogue=lambda: catalogue)
    assert "limit" in [v.name for v in review("共 3 行。", Result(sql=sql, row_count=3, rows=lambda: rows), alone,
                                               stage="verdict")]
