"""Read after the sixty-seventh walk (issue 38): what a follow-up keeps of the answer before it, and two years
compared.

- A follow-up of a ranking asked at both ends ("and for SpaceX?") keeps both ends; one of a comparison keeps it.
- A follow-up of figures shown in the unit the question asked (总质量是多少吨) shows them in that unit (2024年呢？),
  its heads in Chinese named in that unit (质量（t）总和, not "Total mass (t)").
- "How many more launches were there in 2020 than in 2010?", "Were there more … in 2020 or in 2010?": one figure for
  each year and the difference, not both years pooled.
"""

from __future__ import annotations

from tests.agent.planner.test_planner_followup import planner, result, sample, talk  # noqa: F401 (fixtures)
from tests.agent.planner.test_planner_within_groups import _rows


def test_a_follow_up_keeps_both_ends(talk):
    talk.ask("Which year had the most launches, and which the fewest?")
    assert result(talk) == [("2025", 331), ("2004", 49)]
    talk.ask("and for SpaceX?")
    rows = result(talk)
    assert rows[0] == ("2025", 170) and len(rows) > 1 and {r[1] for r in rows[1:]} == {min(r[1] for r in rows)}


def test_a_follow_up_keeps_the_comparison(talk):
    talk.ask("How many more launches were there in 2020 than in 2010?")
    _, answer = talk.ask("and for SpaceX?")
    assert [r[0] for r in result(talk)] == ["2010", "2020"] and " more (+1,200%)." in answer["text"]


def test_a_follow_up_keeps_the_unit_asked(talk):
    talk.ask("每年发射的载荷总质量是多少吨？")
    _, answer = talk.ask("2024年呢？")
    assert result(talk) == [("2024", 2069.01)] and "质量（t）总和" in answer["text"]
    assert "Total" not in answer["text"] and "caveat" not in answer


def test_two_years_compared(planner):
    for question in ("How many more launches were there in 2020 than in 2010?",
                     "Were there more launches in 2020 or in 2010?", "2020年比2010年多发射了几次？"):
        plan = planner.plan(question)
        assert plan.caveat is None and _rows(planner, plan.sql) == [("2010", 71), ("2020", 117)], question
    # joined by "or" with no comparison, the two years stay one filter: either year's rows
    assert _rows(planner, planner.plan("How many launches were there in 2010 or 2020?").sql) == [(188,)]


def test_a_craft_name_closed_by_hao(planner):
    """进步号 is the Progress craft (its names begin 进步): 号 closes the name, no word left out."""
    plan = planner.plan("进步号货运飞船一共发射了多少次？")
    assert plan.caveat is None and "进步" in plan.sql


def test_a_family_name_read_as_far_as_its_names_go(planner):
    """国际通信卫星 901…: the family's key stops at 国际通 (before the word 通信); the name is read on, up to the
    word 卫星, which stays the satellites counted."""
    for question in ("国际通信卫星一共发射了多少颗？", "Intelsat卫星一共发射了多少颗？", "How many Intelsat satellites were launched?"):
        plan = planner.plan(question)
        assert plan.caveat is None and _rows(planner, plan.sql) == [(111,)], question


def test_each_countrys_rockets(planner):
    """"each country's rockets": the countries of the rockets' makers, as 各国火箭 is, not of the launch sites."""
    for question in ("How many launches did each country's rockets make?", "各国火箭的发射次数是多少？"):
        plan = planner.plan(question)
        assert plan.caveat is None and "manufacturers.country_id" in plan.sql and "launch_sites" not in plan.sql, question
    assert "launch_sites" in planner.plan("How many launches did each country make?").sql


def test_each_groups_share_of_all_the_rows_when_a_value_names_the_groups(talk, planner):
    """"each Russian site's share of all launches" was each site's share of the Russian launches (80.57%, as
    if of all): the value says which groups are listed; the share is of every launch (5.34%)."""
    for question in ("What is each Russian site's share of all launches?",
                     "What share of all launches did each Russian site have?", "俄罗斯各发射场占全部发射的百分之几？"):
        plan = planner.plan(question)
        assert plan.caveat is None and sorted(r[1:] for r in _rows(planner, plan.sql)) == [(1.29, 34), (5.34, 141)], question
    talk.ask("What is each Russian site's share of all launches?")
    talk.ask("and in 2024?")  # of all the launches of 2024, kept by the follow-up
    assert sorted(r[1:] for r in result(talk)) == [(1.15, 3), (2.69, 7)]
    # no value naming the groups: the groups' counts add up to all the rows, each over their sum
    assert "OVER ()" in planner.plan("What share of all launches did each site have?").sql


def test_when_asked_beside_which_rocket(planner):
    """E10 of the sixty-seventh walk showed the rocket and named "when" as left out: the date is shown too."""
    for question in ("Did any Michibiki launch fail, and if so, when and on which rocket?",
                     "When did Michibiki launches fail, and on which rocket?"):
        plan = planner.plan(question)
        assert plan.caveat is None and _rows(planner, plan.sql) == [("Michibiki QZS-9", "H3", "2024-08-20")], question


def test_a_family_named_by_two_words(planner):
    """"Cargo Dragon" and "Crew Dragon" were read as two conditions no row meets (0, answered); "Soyuz TMA" and
    "Iridium NEXT" as one word of each, the other named as left out: the first two or three words of names that
    more follow are a family too."""
    for question, count in (("How many Cargo Dragon missions flew?", 41), ("How many Crew Dragon missions flew?", 20),
                            ("How many Soyuz TMA missions were launched?", 38),
                            ("How many Iridium NEXT satellites were launched?", 15)):
        plan = planner.plan(question)
        assert plan.caveat is None and _rows(planner, plan.sql) == [(count,)], question


def test_a_complete_question_opening_with_an_grouping_stands_alone(talk):
    """按国家统计，各国卫星制造商各有多少家？ after a Baikonur question was read as its follow-up (按 opens one; 各有 leans
    back): a question of its own after the 按 clause, and 各有 after the groups its clause named, stand alone."""
    talk.ask("拜科努尔一共发射了多少次？")
    _, answer = talk.ask("按国家统计，各国卫星制造商各有多少家？")
    assert "caveat" not in answer and ("中国", 4) in result(talk)
    _, answer = talk.ask("按年呢？")  # a fragment opening with 按 still follows
    assert answer["text"].startswith("接着上一个问题")


def test_two_chinese_years_compared(planner):
    """2024年的载荷平均质量比2023年高还是低？ asked for rows of both years at once (none: NULL): each year's figure."""
    plan = planner.plan("2024年的发射次数比2023年多还是少？")
    assert plan.caveat is None and _rows(planner, plan.sql) == [("2023", 209), ("2024", 260)]
    plan = planner.plan("2024年的载荷平均质量比2023年高还是低？")
    assert plan.caveat is None and [r[0] for r in _rows(planner, plan.sql)] == ["2023", "2024"]


def test_rows_of_both_years(planner, sample_db_path):
    """2024年和2023年都发射过的火箭有哪些？ listed the rockets of either year (47, answered): those with launches in each."""
    gold = ("SELECT v.name_zh FROM launch_vehicles v JOIN launches l ON l.vehicle_id = v.id GROUP BY v.id "
            "HAVING SUM(l.launch_date LIKE '2024%') > 0 AND SUM(l.launch_date LIKE '2023%') > 0")
    for question in ("2024年和2023年都发射过的火箭有哪些？", "哪些火箭在2024年和2023年都发射过？"):
        plan = planner.plan(question)
        assert plan.caveat is None and sorted(r[0] for r in _rows(planner, plan.sql)) == \
            sorted(r[0] for r in sample(sample_db_path, gold)), question
        assert "2023年的数量" in plan.sql or "count_2023" in plan.sql


def test_a_comparison_of_averages_says_higher_or_lower(talk):
    _, answer = talk.ask("Was the average payload mass higher in 2024 than in 2023?")
    assert answer["text"].endswith("2023: 4,512.61; 2024: 5,058.71; 2024 is 546.1 higher (+12.1%).")
    _, answer = talk.ask("How many more launches were there in 2020 than in 2010?")
    assert answer["text"].endswith("2010: 71; 2020: 117; 2020 has 46 more (+64.79%).")


def test_a_value_reached_two_ways_that_disagree_is_said(planner):
    """Z16 of the sixty-eighth walk: 2020年到2022年，俄罗斯一共发射了多少次？ counted the launches from sites in Russia (29),
    answered, where Russia's rockets flew 47 (Baikonur is in Kazakhstan): a country reached by two ways up the keys
    whose results differ is said, with both figures; "from Russia" names the place, and no doubt."""
    plan = planner.plan("2020年到2022年，俄罗斯一共发射了多少次？")
    assert _rows(planner, plan.sql) == [(29,)] and "29" in plan.caveat and "47" in plan.caveat
    plan = planner.plan("How many launches did Russia make between 2020 and 2022?")
    assert plan.caveat.startswith("'Russia' may be the launch site's or the launch vehicle's")
    for question in ("How many launches from Russia were there in 2021?", "2021年从俄罗斯发射了多少次？"):
        assert planner.plan(question).caveat is None, question
    assert planner.plan("How many launches did China make in 2024?").caveat is None  # the same either way


def test_a_follow_up_naming_a_value_above_the_rows_joins_to_it(talk):
    """E11 and Z2 of the sixty-eighth walk were right but said they joined a table the previous answer did not use
    (and Z3, built on Z2, inherited the doubt): a value above each row, reached as the words say or either way alike,
    asks for that join."""
    talk.ask("How many times has Electron flown since March 2024?")
    _, answer = talk.ask("How many of them lifted off from New Zealand?")
    assert "caveat" not in answer and result(talk) == [(29,)]


def test_a_chinese_follow_up_naming_a_country(talk):
    talk.ask("2024年下半年一共有多少次发射？")
    _, answer = talk.ask("其中中国的有多少次？")
    assert "caveat" not in answer and result(talk) == [(39,)]
    _, answer = talk.ask("这些发射的成功率是多少？")
    assert "caveat" not in answer and result(talk) == [(97.44,)]


def test_a_name_written_with_chinese_numerals(planner):
    """Z10 of the sixty-eighth walk: 神舟十三号 was declined (十三 not understood); the data writes 神舟13号."""
    plan = planner.plan("神舟十三号是哪天发射的？用的什么火箭？")
    assert plan.caveat is None and _rows(planner, plan.sql) == [("Shenzhou 13", "长征二号F", "2013-02-03")]


def test_which_one_after_an_average_is_the_row(talk):
    """E8 of the sixty-eighth walk: "And which one was the heaviest?" after an average kept the average (of the heaviest
    row: its mass, headed "Average mass"): the row, by name, with its mass."""
    talk.ask("What's the average mass of communications satellites sent to GTO?")
    _, answer = talk.ask("And which one was the heaviest?")
    assert "caveat" not in answer and result(talk) == [("ChinaSat 53", 6738.3)]


def test_words_of_the_sixty_ninth_walk(planner, talk):
    """E13 'Did Ariane 6 or Vega-C fly more often in 2025?' named 'often' as left out; Z4 哪一年最多？ after counts per
    year was offered as a reading no word tied (it has nothing of its own to rank)."""
    plan = planner.plan("Did Ariane 6 or Vega-C fly more often in 2025?")
    assert plan.caveat is None and _rows(planner, plan.sql) == [("Ariane 6", 4), ("Vega-C", 3)]
    talk.ask("2022年以来文昌航天发射场每年发射了多少次？")
    _, answer = talk.ask("哪一年最多？")
    assert "caveat" not in answer and result(talk) == [("2025", 13)]


def test_their_after_which_is_the_rows_asked_about(planner):
    """E20 of the sixty-ninth walk named 'their' as pointing at nothing: after "which rockets" it is theirs."""
    assert planner.plan("Since 2015, which rockets failed on their maiden flight?").caveat is None
