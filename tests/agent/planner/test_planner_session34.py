"""Read after the sixty-ninth walk (issue 38): a follow-up comparing the figure before with another year, and a table's
word that is a word of the measured column.

- "How does that compare with 2021?" after a figure of 2024 points back ('that') and compares: both years, each its
  own figure and the difference, not 2021's alone with 'compare' left out (和2023年相比呢？, "Compare that with 2023.").
- "What's the average LEO payload capacity of retired American rockets?" reads `payload_leo_kg`; its "payload" is that
  column's word, not the payloads table left unread (the `table` check); "the average mass of payloads" still is.
"""

from __future__ import annotations

import pytest

from agent.checks.question import table_not_used
from agent.sources.sqlite import SQLiteSource
from tests.agent.planner.test_planner_followup import planner, result, sample, talk  # noqa: F401 (fixtures)
from tests.agent.planner.test_planner_within_groups import _rows


@pytest.mark.parametrize("first, then, rows, said", [
    ("What share of all launches in 2024 were flown by SpaceX rockets?", "How does that compare with 2021?",
     [("2021", 27.19), ("2024", 53.08)], "2024 is 25.89 higher."),
    ("How many launches were there in 2022?", "Compare that with 2023.", [("2022", 162), ("2023", 209)],
     "2023 has 47 more (+29.01%)."),
    ("2024年中国发射了多少次？", "和2023年相比呢？", [("2023", 68), ("2024", 72)], "2024多 4"),
])
def test_a_follow_up_compares_the_figure_before_with_another_year(talk, first, then, rows, said):
    talk.ask(first)
    _, answer = talk.ask(then)
    assert result(talk) == rows and said in answer["text"] and "caveat" not in answer
    assert "the grouping" not in answer["text"]  # the answer before had none to keep


def test_a_follow_up_naming_another_year_without_comparing_replaces_it(talk):
    talk.ask("How many launches were there in 2022?")
    talk.ask("And in 2023?")
    assert result(talk) == [(209,)]


def test_gen_with_a_chinese_comparison_is_read(talk):
    """跟 (with) says nothing of its own: 跟2020年比较呢？ is read whole."""
    talk.ask("2024年的载荷平均质量是多少？")
    _, answer = talk.ask("跟2020年比较呢？")
    assert [r[0] for r in result(talk)] == ["2020", "2024"] and "caveat" not in answer


_AVERAGE_LEO = ("SELECT AVG(launch_vehicles.payload_leo_kg) FROM launch_vehicles JOIN manufacturers ON "
                "launch_vehicles.manufacturer_id = manufacturers.id JOIN countries ON manufacturers.country_id = "
                "countries.id WHERE launch_vehicles.status = 'retired' AND countries.name = 'United States'")


@pytest.mark.parametrize("question, unread", [
    ("What's the average LEO payload capacity of retired American rockets?", None),
    ("What is the mean payload to LEO of retired US rockets?", None),
    ("What's the average mass of payloads of retired American rockets?", "payloads"),
])
def test_a_table_word_of_the_measured_column_is_that_column(sample_db_path, question, unread):
    source = SQLiteSource(sample_db_path)
    assert table_not_used(question, _AVERAGE_LEO, source.catalogue, dialect="sqlite") == unread


@pytest.mark.parametrize("then", ["有几次没成功？", "其中有几次未能成功？"])
def test_mei_before_a_value_is_not(talk, then):
    """没成功 is the launches that did not succeed (it counted the successes, 没 left out)."""
    talk.ask("朱雀二号一共发射过几次？")
    _, answer = talk.ask(then)
    assert result(talk) == [(1,)] and "!= 'success'" in talk.last_sql



@pytest.mark.parametrize("first, then, rows", [
    ("2000年代发射次数最多的火箭是哪一款？", "它在2010年代发射了多少次？", [(24,)]),
    ("Which rocket flew the most in the 2000s?", "How many times did it fly in the 2010s?", [(24,)]),
    ("Which rocket has flown the most times from Kennedy Space Center since June 2023?",
     "How many of those flights failed?", [(0,)]),
])
def test_it_after_a_ranking_is_the_group_it_picked(talk, first, then, rows):
    """它 after "the rocket that flew the most in the 2000s" is Soyuz-U: its launches in the 2010s (24), not the
    2010s' own most-flown rocket (Falcon 9, 80, answered as if right by the seventieth walk)."""
    talk.ask(first)
    _, answer = talk.ask(then)
    assert result(talk) == rows and "caveat" not in answer
    assert "Soyuz-U" not in answer["text"] if "它" in then else True  # 联盟-U, as the answer before named it


@pytest.mark.parametrize("question", ["List the Chinese fighter jets with their top speeds.",
                                      "List Chinese fighters and their top speeds."])
def test_a_listing_with_their_figures_names_each_row(planner, question):
    """The figures alone name no jet (the seventieth walk's E6 showed five speeds): each model beside its speed."""
    plan = planner.plan(question)
    rows = _rows(planner, plan.sql)
    assert plan.caveat is None and ("J-20", 2100.0) in rows and len(rows) == 5


@pytest.mark.parametrize("question", [
    "What percentage of launches from Cape Canaveral in 2022 used a Falcon 9?",  # the launches' rocket: the join
    "Did Japan launch more rockets in 2024 or in 2025?",  # the rockets launched are the launches counted
    "直升机的平均最大速度是多少公里每小时？",  # 每 is the unit's own (km/h)
])
def test_words_the_query_says_raise_no_caveat(planner, question):
    """Three of the seventieth walk's right answers carried a caveat naming a word the query does say."""
    plan = planner.plan(question)
    assert plan.sql is not None and plan.caveat is None, plan.caveat


def test_at_least_one_of_a_kind_of_rows_is_counted(talk, sample_db_path):
    """"had at least one failed launch": each site's failed launches counted, at least one (not 'at least one' left
    out); then "Which of them had the most failures?" ranks those counts."""
    _, answer = talk.ask("Which launch sites had at least one failed launch in the 2010s?")
    gold = ("SELECT s.name FROM launches l JOIN launch_sites s ON s.id = l.site_id WHERE l.outcome = 'failure' "
            "AND l.launch_date BETWEEN '2010-01-01' AND '2019-12-31' GROUP BY s.id")
    assert "caveat" not in answer and sorted(r[0] for r in result(talk)) == sorted(r[0] for r in sample(sample_db_path, gold))
    _, answer = talk.ask("Which of them had the most failures?")
    assert result(talk) == [("Vandenberg Space Force Base", 4)] and "caveat" not in answer


def test_an_average_of_a_scale_word(planner):
    """北斗卫星平均每颗有多重？: the average mass (多重, how heavy), 每颗 between; it listed 59 masses, 平均 left out."""
    plan = planner.plan("北斗卫星平均每颗有多重？")
    assert plan.caveat is None and round(_rows(planner, plan.sql)[0][0], 1) == 2006.1


def test_a_count_ranked_to_its_top_n(planner):
    """运营载荷数量排名前五的国家是哪些？ (declined: what to rank by): the five countries with the most payloads."""
    plan = planner.plan("运营载荷数量排名前五的国家是哪些？")
    assert plan.caveat is None and {r[0] for r in _rows(planner, plan.sql)} == {"美国", "中国", "俄罗斯", "卢森堡", "印度"}


def test_a_chinese_maker_named_without_its_generic_end(planner, sample_db_path):
    """星河动力 for 星河动力航天 (航天 ends a firm's name as 公司 does): it counted all 331 launches of 2025."""
    plan = planner.plan("星河动力的火箭去年发射了几次？")
    gold = ("SELECT COUNT(*) FROM launches l JOIN launch_vehicles v ON v.id = l.vehicle_id JOIN manufacturers m "
            "ON m.id = v.manufacturer_id WHERE m.name_zh = '星河动力航天' AND l.launch_date LIKE '2025%'")
    assert plan.caveat is None and _rows(planner, plan.sql) == sample(sample_db_path, gold)


def test_how_many_built_of_a_named_model_is_its_units(planner):
    """"…, and how many have been built?" of the Boeing 787-9: its units built (650), not its one row counted; the date
    shown answers "When"."""
    plan = planner.plan("When did the Boeing 787-9 first fly, and how many have been built?")
    assert plan.caveat is None and _rows(planner, plan.sql) == [("2013-09-17", 650)]


@pytest.mark.parametrize("then", ["它是哪一年首飞的？", "When did it first fly?"])
def test_it_after_a_ranked_row_is_that_row(talk, then):
    """它 after the Airbus model built the most is the A320neo: its first flight, not a maker's founding year beside
    it."""
    talk.ask("空客的飞机里哪款产量最多？" if "它" in then else "Which Airbus aircraft has the most units built?")
    _, answer = talk.ask(then)
    assert result(talk) == [("2014-09-25",)] and "caveat" not in answer


def test_two_ways_compared_by_year_are_both_said(planner):
    """"How did Russia's launch success rate in 2015 compare with 2022?": each year's figures differ by the launch
    site's Russia and the rocket's (Baikonur is in Kazakhstan); the caveat gives both, not ok."""
    plan = planner.plan("How did Russia's launch success rate in 2015 compare with 2022?")
    assert plan.caveat is not None and "91.67" in plan.caveat and "83.33" in plan.caveat


@pytest.mark.parametrize("question", ["How many launches did Russia make each year?", "俄罗斯每年发射多少次？"])
def test_two_ways_of_as_many_rows_with_other_figures_are_said(planner, question):
    """Per year, the launch site's Russia and the rocket's give as many rows (26) of other figures: said, not ok."""
    plan = planner.plan(question)
    assert plan.caveat is not None and ("other figures" in plan.caveat or "数字不同" in plan.caveat)


def test_a_value_right_after_its_own_table_word_counts_those_rows(planner):
    """2010年代哪一年的发射失败次数最多？: 失败 right after 发射 is the launches' outcome; it counted payloads whose status
    is 'failed' (2015, 11), answered as if right by the seventy-first walk."""
    plan = planner.plan("2010年代哪一年的发射失败次数最多？")
    assert plan.caveat is None and _rows(planner, plan.sql) == [("2018", 4)]


@pytest.mark.parametrize("question", ["各类飞机的平均航程分别是多少公里？", "每种飞机的平均航程是多少？"])
def test_each_kind_of_rows_is_their_kind_column(planner, question):
    """各类飞机: each kind of aircraft (their role), not each aircraft (69 rows of one model's own range each)."""
    plan = planner.plan(question)
    rows = _rows(planner, plan.sql)
    assert plan.caveat is None and len(rows) == 7 and any(r[0] == "fighter" and round(r[1]) == 2794 for r in rows)


@pytest.mark.parametrize("first, then", [
    ("2023年第二季度中国一共发射了多少次？", "其中长征系列火箭占了多大比例？"),  # a share's value, each launch's one family
    ("目前还在运行的北斗卫星有多少颗？", "其中最早发射的是哪一颗？"),  # ranked by each payload's one launch date
])
def test_a_join_the_follow_up_asks_for_is_no_guess(talk, first, then):
    talk.ask(first)
    _, answer = talk.ask(then)
    assert "caveat" not in answer


def test_the_previous_answers_values_are_known_to_the_checks(tmp_path, sample_db_path):
    """The checks hold a query to the values the question names or the turn saw, the previous answer's rows among
    them; those rows were never read (the state's answer is cleared as a turn begins), so 'Soyuz-U', the rocket
    picked, was a value 'the question does not name'."""
    from app.core import AskDB
    from app.settings import Settings
    core = AskDB(Settings(store=tmp_path / "store.db", database=sample_db_path, llm="offline", memory_embedder="none"))
    try:
        first = list(core.ask("Which rocket flew the most in the 2000s?", user_id="u"))
        events = list(core.ask("How many times did it fly in the 2010s?", user_id="u", thread_id=first[0].thread_id))
        answer = next(e.answer for e in events if e.type == "answer")
        assert answer.ok and answer.data.rows == [[24]], answer.data.caveat
    finally:
        core.close()
