"""What the seventh re-walk's right answers were flagged for (issue 38), each now read.

A site named by its first word ("Baikonur") is the question's own value for the checks too; a
follow-up naming a stored value that each of the previous rows has one of, one way only ("How many of
those were Proton flights?", "Which of those flew from Jiuquan?", 其中哪些是中国制造的？), restricts those
rows without a join to check; a value reached several ways (a launch's country: its site's or its
rocket's) still says which way it read when the other gives another result. "no longer", 完全, 发往, "received", the sample's orbit names
in Chinese, "the most total payload mass" and "manufacturers built … payloads" are read; a "not" with
nothing to negate is never dropped.
"""

from __future__ import annotations

import pytest

from agent.planner.followup import frame_to_dict
from tests.agent.planner.test_planner_compounds import answered_as, answers
from tests.agent.planner.test_planner_followup import planner, result, sample, talk  # noqa: F401 (fixtures)
from tests.agent.planner.test_planner_leaning import JOINED, askdb  # noqa: F401 (fixture)


def test_a_site_named_by_its_first_word_and_a_follow_up_restricting_by_a_value_are_answered(askdb):
    first, proton, later = answers(askdb, "How many launches lifted off from Baikonur in the 2000s?",
                                   "How many of those were Proton flights?", "And in the 2010s?")
    assert first.ok and first.data.rows == [[184]] and "Baikonur Cosmodrome" in first.data.text
    assert proton.ok and proton.data.rows == [[84]]
    assert later.ok and later.data.rows == [[66]]


@pytest.mark.parametrize("questions", [
    ("Which crewed missions launched between October 2021 and March 2022?", "Which of those flew from Jiuquan?"),
    ("2020年以后首飞的飞机有哪些？", "其中哪些是中国制造的？"),
])
def test_a_value_each_previous_row_has_one_of_restricts_without_a_caveat(planner, questions):
    first = planner.plan(questions[0])
    follow = planner.plan(questions[1], frame_to_dict(first.frame) | {"complete": True})
    assert follow.frame.link is None and follow.caveat is None


def test_a_value_reached_several_ways_still_says_which_join_it_read(planner):
    count = planner.plan("How many launches were there in 2020?")
    follow = planner.plan("what about Russia?", frame_to_dict(count.frame) | {"complete": True})
    assert follow.frame.other_way is not None and follow.caveat  # the launch site's country, or the rocket's


@pytest.mark.parametrize("question, gold", [
    ("How many Japanese-operated payloads are no longer operational?",
     "SELECT COUNT(*) FROM payloads p JOIN countries c ON p.operator_country_id = c.id "
     "WHERE c.name = 'Japan' AND p.status != 'operational'"),
    ("长征五号的发射中有几次不是完全成功的？",
     "SELECT COUNT(*) FROM launches l JOIN launch_vehicles v ON l.vehicle_id = v.id "
     "WHERE v.name_zh = '长征五号' AND l.outcome != 'success'"),
    ("2022年发往太阳同步轨道的载荷一共有多少颗？",
     "SELECT COUNT(*) FROM payloads p JOIN launches l ON p.launch_id = l.id "
     "WHERE l.launch_date LIKE '2022%' AND p.orbit = 'SSO'"),
    ("Which orbit received the most total payload mass in 2024?",
     "SELECT p.orbit, SUM(p.mass_kg) FROM payloads p JOIN launches l ON p.launch_id = l.id "
     "WHERE l.launch_date LIKE '2024%' GROUP BY p.orbit ORDER BY 2 DESC LIMIT 1"),
    # (the makers the data labels satellite makers, as "How many satellite makers are there?" counts them)
    ("Which satellite manufacturers built more than 100 payloads?",
     "SELECT m.name, COUNT(*) FROM payloads p JOIN manufacturers m ON p.manufacturer_id = m.id "
     "WHERE m.kind = 'satellite' GROUP BY m.id HAVING COUNT(*) > 100"),
    ("Which manufacturers built aircraft?",
     "SELECT DISTINCT m.name FROM manufacturers m JOIN aircraft a ON a.manufacturer_id = m.id"),
])
def test_words_the_seventh_re_walk_flagged_are_read(talk, sample_db_path, question, gold):
    answered_as(talk, sample_db_path, question, gold)


def test_a_not_with_nothing_it_negates_is_never_dropped(planner):
    plan = planner.plan("Which launch vehicles are not the official vehicles?")
    assert plan.failure is not None or plan.caveat is not None


@pytest.mark.parametrize("question, gold", [
    ("2010年代俄罗斯火箭的发射成功率是多少？",
     "SELECT ROUND(100.0 * SUM(l.outcome = 'success') / COUNT(*), 2) FROM launches l JOIN launch_vehicles v "
     "ON l.vehicle_id = v.id JOIN manufacturers m ON v.manufacturer_id = m.id JOIN countries c ON m.country_id = c.id "
     "WHERE c.name_zh = '俄罗斯' AND l.launch_date >= '2010-01-01' AND l.launch_date < '2020-01-01'"),
    ("How many launches from Russian launch sites in 2015?",
     "SELECT COUNT(*) FROM launches l JOIN launch_sites s ON l.site_id = s.id JOIN countries c ON s.country_id = c.id "
     "WHERE c.name = 'Russia' AND l.launch_date LIKE '2015%'"),
])
def test_a_value_before_a_table_word_is_that_tables_rows(talk, sample_db_path, question, gold):
    """"Russian rockets": the rockets' country (Baikonur is in Kazakhstan), not each launch's site's."""
    answered_as(talk, sample_db_path, question, gold)


@pytest.mark.parametrize("question, gold", [
    ("2021年上半年各国分别发射了多少次？",
     "SELECT c.name_zh, COUNT(*) FROM launches l JOIN launch_sites s ON l.site_id = s.id JOIN countries c "
     "ON s.country_id = c.id WHERE l.launch_date >= '2021-01-01' AND l.launch_date < '2021-07-01' GROUP BY c.id"),
    ("空客生产的客机平均航程是多少？",
     "SELECT AVG(a.range_km) FROM aircraft a JOIN manufacturers m ON a.manufacturer_id = m.id "
     "WHERE m.name = 'Airbus' AND a.role = 'airliner'"),
    ("How many partial failures has the Long March family had since 2010?",
     "SELECT COUNT(*) FROM launches l JOIN launch_vehicles v ON l.vehicle_id = v.id JOIN vehicle_families f "
     "ON v.family_id = f.id WHERE f.name = 'Long March' AND l.outcome = 'partial failure' "
     "AND l.launch_date >= '2010-01-01'"),
])
def test_each_country_a_short_maker_name_and_a_counted_value_of_several_words(talk, sample_db_path, question, gold):
    """各国 is each country; 空客 is the sample's Airbus; "partial failures" are launches of that outcome,
    dated by the launches (not the year the family first flew)."""
    answered_as(talk, sample_db_path, question, gold)


@pytest.mark.parametrize("question, gold", [
    ("2010年代哪一年的发射次数最多？",
     "SELECT strftime('%Y', launch_date), COUNT(*) FROM launches WHERE launch_date >= '2010-01-01' "
     "AND launch_date < '2020-01-01' GROUP BY 1 ORDER BY 2 DESC LIMIT 1"),
    ("What was the busiest month for launches in 2023?",
     "SELECT strftime('%Y-%m', launch_date), COUNT(*) FROM launches WHERE launch_date LIKE '2023%' "
     "GROUP BY 1 ORDER BY 2 DESC LIMIT 1"),
    ("质子-M最后一次发射是什么时候？",
     "SELECT l.mission_name, l.launch_date FROM launches l JOIN launch_vehicles v ON l.vehicle_id = v.id "
     "WHERE v.name_zh = '质子-M' ORDER BY l.launch_date DESC LIMIT 1"),
    ("哪些火箭家族从来没有发射失败过？",
     "SELECT name_zh FROM vehicle_families WHERE id NOT IN (SELECT v.family_id FROM launch_vehicles v "
     "JOIN launches l ON l.vehicle_id = v.id WHERE l.outcome = 'failure' AND v.family_id IS NOT NULL)"),
    ("欧洲地区的国家运营的载荷有多少个？",
     "SELECT 'Europe', COUNT(*) FROM payloads p JOIN countries c ON p.operator_country_id = c.id "
     "WHERE c.region = 'Europe'"),
    ("各用途的载荷中，状态为已衰减的分别占多少比例？",
     "SELECT purpose, ROUND(100.0 * SUM(status = 'decayed') / COUNT(*), 2), COUNT(*) FROM payloads GROUP BY purpose"),
])
def test_what_the_eighth_re_walk_found(talk, sample_db_path, question, gold):
    """哪一年 is the year the rows happened (not a joined table's year column); "busiest month"; 最后一次
    and 什么时候; 从来没有; the sample's regions and 已衰减 in Chinese; 分, 占."""
    answered_as(talk, sample_db_path, question, gold)


def test_russian_built_rockets_and_how_many_per_site_after_them(talk, sample_db_path):
    """The ninth re-walk's E07 and E08: "built" is no `units_built` of aircraft their maker also makes,
    "Russian-built rockets" are the rockets' country's; "How many per launch site?" names nothing to count,
    so it counts the previous answer's rows per site."""
    gold = ("FROM launches l JOIN launch_vehicles v ON l.vehicle_id = v.id JOIN manufacturers m "
            "ON v.manufacturer_id = m.id JOIN countries c ON m.country_id = c.id JOIN launch_sites s ON l.site_id = s.id "
            "WHERE c.name = 'Russia' AND l.outcome = 'failure' AND l.launch_date >= '2015-01-01'")
    answered_as(talk, sample_db_path, "List the failed launches of Russian-built rockets since 2015.",
                f"SELECT l.mission_name {gold}")
    answered_as(talk, sample_db_path, "How many per launch site?", f"SELECT s.name, COUNT(*) {gold} GROUP BY s.id")


@pytest.mark.parametrize("question", [
    "Which rockets suffered a failure in the last three years?", "哪些飞机制造商的总部在欧洲？",
    "首飞时间最早的直升机是哪一款？", "2024年各发射场的成功发射次数，从多到少排列",
])
def test_words_the_tenth_re_walk_flagged_raise_no_caveat(planner, question):
    """suffered, 总部, 首飞时间 (the sample's first flight), 从多到少 (descending) and 排列: read."""
    plan = planner.plan(question)
    assert plan.failure is None and plan.frame.unused == [], plan.frame.unused
    assert "DESC" in plan.sql or "从多到少" not in question


def test_outside_a_place_is_not_there(talk, sample_db_path):
    """The ninth re-walk's E06 listed exactly the US sites for "outside the United States"."""
    answered_as(talk, sample_db_path, "Which launch sites outside the United States opened before 1970?",
                "SELECT s.name FROM launch_sites s JOIN countries c ON s.country_id = c.id "
                "WHERE c.name != 'United States' AND s.opened_year < 1970")


@pytest.mark.parametrize("question, gold", [
    ("How many launches used Russian-built rockets in 2017?",
     "SELECT COUNT(*) FROM launches l JOIN launch_vehicles v ON l.vehicle_id = v.id JOIN manufacturers m "
     "ON v.manufacturer_id = m.id JOIN countries c ON m.country_id = c.id "
     "WHERE c.name = 'Russia' AND l.launch_date LIKE '2017%'"),
    ("How many payloads launched on Long March rockets were operated by countries other than China?",
     "SELECT COUNT(*) FROM payloads p JOIN countries c ON p.operator_country_id = c.id JOIN launches l "
     "ON p.launch_id = l.id JOIN launch_vehicles v ON l.vehicle_id = v.id JOIN vehicle_families f "
     "ON v.family_id = f.id WHERE f.name = 'Long March' AND c.name != 'China'"),
])
def test_a_verb_relating_two_tables_is_their_join(talk, sample_db_path, question, gold):
    """"launches used … rockets", "payloads launched on … rockets": the verb says how the rows relate,
    which the join is; it raises no caveat."""
    answered_as(talk, sample_db_path, question, gold)


def test_a_verb_of_relating_elsewhere_is_still_named(planner):
    plan = planner.plan("What launch vehicles were used in 2020?")
    assert "used" in plan.frame.unused


def test_a_value_before_a_table_word_with_one_way_up_restricts_a_follow_up(planner):
    """只看中国的发射场 after a count per site: the sites' own country (each launch has one site, each
    site one country), no join to check."""
    first = planner.plan("2024年各发射场的成功发射次数，从多到少排列")
    follow = planner.plan("只看中国的发射场", frame_to_dict(first.frame) | {"complete": True})
    assert follow.frame.link is None and follow.caveat is None and "launch_sites.country_id" in follow.sql


def test_a_verb_of_making_in_a_count_of_rows_with_a_count_made_is_named(planner):
    """波音总共生产了多少架飞机？ asks for the planes built (`units_built`), not the models counted: summed since the
    fifty-fourth walk (架 counts units, `test_planner_walk53`); in English the verb, filler elsewhere, is named; "How
    many aircraft models …" says the models are counted."""
    plan = planner.plan("波音总共生产了多少架飞机？")
    assert plan.caveat is None and "SUM(aircraft.units_built)" in plan.sql
    assert "make" in planner.plan("How many aircraft did Boeing make?").frame.unused
    assert planner.plan("How many aircraft models does Airbus make?").caveat is None
    assert planner.plan("波音生产了哪些飞机？").caveat is None


def test_a_participle_naming_the_table_each_row_refers_to_is_read(planner):
    """"payloads launched to TLI": every payload has its launch; the word says what the rows are."""
    plan = planner.plan("What's the average mass of payloads launched to TLI, by operating country?")
    assert plan.frame.unused == [] and "launches" not in plan.sql


def test_a_value_of_a_referenced_column_is_compared_on_the_rows_own_key(tmp_path):
    """"votes from state 'NY'": on the votes' own state, not through a table where each state repeats
    (a join there counted each vote once per area code of its state)."""
    import sqlite3

    from agent.offline_planner import OfflinePlanner
    from agent.sources.sqlite import SQLiteSource

    path = tmp_path / "votes.db"
    with sqlite3.connect(path) as conn:
        conn.executescript(
            "CREATE TABLE area_code_state (area_code INTEGER PRIMARY KEY, state TEXT NOT NULL);"
            "CREATE TABLE votes (vote_id INTEGER PRIMARY KEY, state TEXT NOT NULL REFERENCES area_code_state(state));"
            "INSERT INTO area_code_state VALUES (212, 'NY'), (718, 'NY'), (415, 'CA');"
            "INSERT INTO votes VALUES (1, 'NY'), (2, 'CA'), (3, 'CA');")
    plan = OfflinePlanner(SQLiteSource(path)).plan("What are the number of votes from state 'NY' or 'CA'?")
    assert "JOIN" not in plan.sql
    assert [list(r) for r in SQLiteSource(path).execute(plan.sql, max_rows=10).rows] == [[3]]
