"""What the forty-seventh re-walk found (issue 38), read right now:

- "What was the total payload mass launched by each Russian rocket in 2024?": the rockets of Russia, each one (it
  read the payloads' operator country, marked answered, and 'And in 2025?' kept that reading).
- "what share of them" (the rows just counted) and 历次 (every time): false caveats (E8, Z14).
- A follow-up of the best row in each group ("Which rockets carried them?") kept one row for the year (E20).
- 其他国家呢？ (the others) was read as nothing: now named as a word not used.
- The division check read the planner's own quarter label as a division of whole numbers (E19).
- A question about the same rows read on its own says so first, naming the previous question's conditions it does not
  keep (after 2015年以来，俄罗斯的火箭在各个发射场分别发射了多少次？, 哪个发射场的成功率最低？ is about every site's launches:
  the 46th walk's Z15 and the 47th's Z5 were read so in silence).
"""

from __future__ import annotations

from tests.agent.planner.test_planner_followup import planner, sample, talk  # noqa: F401 (fixtures)
from tests.agent.planner.test_planner_within_groups import _rows


def test_each_russian_rocket_is_each_rocket_of_russia(planner, sample_db_path):
    plan = planner.plan("What was the total payload mass launched by each Russian rocket in 2024?")
    gold = ("SELECT v.name, SUM(p.mass_kg) FROM payloads p JOIN launches l ON l.id = p.launch_id JOIN launch_vehicles v "
            "ON v.id = l.vehicle_id JOIN manufacturers m ON m.id = v.manufacturer_id JOIN countries c ON "
            "c.id = m.country_id WHERE c.name = 'Russia' AND l.launch_date LIKE '2024%' GROUP BY v.id")
    got = [(name, round(total, 1) if total is not None else None) for name, total in _rows(planner, plan.sql)]
    assert plan.caveat is None and got == sorted((n, round(t, 1) if t is not None else None)
                                                 for n, t in sample(sample_db_path, gold))


def test_a_question_read_on_its_own_says_what_it_does_not_keep(talk):
    talk.ask("2015年以来，俄罗斯的火箭在各个发射场分别发射了多少次？")
    _, answer = talk.ask("哪个发射场的成功率最低？")
    assert answer["text"].startswith("这个问题是单独理解的，没有沿用上一个问题的条件（") and "俄罗斯" in answer["text"]
    talk.ask("How many launches were there in 2020?")
    _, answer = talk.ask("How many launches were there in 2021?")
    assert not answer["text"].startswith("Read on its own")  # the year asked again replaces it


def test_a_quarter_written_into_its_label_is_no_whole_division(sample_db_path):
    """47th walk E19: the planner's own quarter, `'-Q' || (month + 2) / 3` in a label and a window's partition, was
    flagged as a division of whole numbers (a false caveat on a right answer)."""
    from agent.checks.arithmetic import whole_division
    from agent.sources.sqlite import SQLiteSource

    catalogue = SQLiteSource(sample_db_path).catalogue()
    quarter = "strftime('%Y', l.launch_date) || '-Q' || ((CAST(strftime('%m', l.launch_date) AS INTEGER) + 2) / 3)"
    sql = (f"SELECT quarter, name FROM (SELECT {quarter} AS quarter, p.name, RANK() OVER (PARTITION BY {quarter} "
           "ORDER BY p.mass_kg DESC) AS r FROM payloads p JOIN launches l ON l.id = p.launch_id) WHERE r = 1")
    assert whole_division(sql, catalogue, dialect="sqlite") is None
    assert whole_division("SELECT SUM(units_built) / COUNT(*) FROM aircraft", catalogue, dialect="sqlite") is not None


def test_words_of_the_question_s_own_rows_raise_no_caveat(planner):
    """47th walk E8 ('what share of them': the launches just counted) and Z14 (历次: every time), false caveats."""
    for question in ("How many launches did Vandenberg host in each year from 2021 to 2025, and what share of them "
                     "were Falcon 9?", "朱雀二号历次发射的日期和结果分别是什么？"):
        assert planner.plan(question).caveat is None, question


def test_a_follow_up_of_the_best_in_each_group_keeps_each_group(talk, sample_db_path):
    """47th walk E20: 'Which rockets carried them?' after the heaviest payload of each quarter took the year's one
    heaviest (the follow-up lost the per-group ranking; its text still said each quarter)."""
    talk.ask("What was the heaviest Chinese-operated payload launched in each quarter of 2025?")
    talk.ask("Which rockets carried them?")
    rows = talk.database.execute(talk.last_sql, max_rows=100).rows
    assert [r[0] for r in rows] == ["2025-Q1", "2025-Q2", "2025-Q3", "2025-Q4"]


def test_the_others_are_named_as_not_used(talk):
    """其他国家呢？ after China's sites listed China again, marked answered: 其 and 他 are stop characters one by one,
    so 其他 (the others) went unread in silence; the planner writes no query for them, so it names the word."""
    talk.ask("中国有多少个发射场？")
    _, answer = talk.ask("其他国家呢？")
    assert "其他" in answer.get("caveat", "")
