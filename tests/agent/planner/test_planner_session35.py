"""Read after the seventy-first walk's leftovers (issue 38): the rows a follow-up counts by another table's name, and a
verb of making that names nothing the query holds.

- "How many rockets has it launched?" after a launch site: the different rockets of its launches, counted (beside the
  launches), not the launches again; 它发射过多少种火箭？ the same. The rockets' table joined is the one the words ask.
- "How many rockets has it built?": a launch site builds nothing, so 'built' is said to be left out (a verb of making is
  read as the rows' relation only when their makers stand between them and the condition: "Russian-built rockets").

Then the seventy-second walk's:
- A model asked by its designation alone ("C919" of 'COMAC C919', "787-9"); rows asked for by "which" within each group
  listed beside it (C919的各个部件都是哪些供应商提供的？: each part with its supplier, not a count of suppliers per part);
  a table the rows reach only down joined through the one that refers to them in the role the question names (the
  C919 of the parts the suppliers supply, not the aircraft they made).
- A change between two years ("By what percent did launches from Vandenberg change from 2024 to 2025?", 同比增长,
  比前一年): both figures, the difference and the change in percent; a follow-up asking it of two figures compared.
- Periods apart compared ("Q1 2024 and Q1 2025"; 和前一年同期相比呢？ after a quarter): each its own group.
- The compass's ends ("furthest north", 最南端): the latitude or longitude ranked.
- 'belong', 'accounts' and "over that period" say nothing the query leaves out.
"""

from __future__ import annotations

import pytest

from agent.planner.periods import bucket_period
from tests.agent.planner.test_planner_followup import planner, result, sample, talk  # noqa: F401 (fixtures)


@pytest.mark.parametrize("first, then", [
    ("Which Chinese launch site hosted the most launches?", "How many rockets has it launched?"),
    ("中国哪个发射场发射次数最多？", "它发射过多少种火箭？"),
])
def test_a_follow_up_counting_a_parent_table_counts_its_different_rows(talk, first, then):
    talk.ask(first)
    _, answer = talk.ask(then)
    assert result(talk) == [(238, 10)] and "caveat" not in answer
    assert "COUNT(DISTINCT launch_vehicles.id)" in answer["sql"]


def test_a_verb_of_making_no_maker_stands_behind_is_left_out(talk):
    talk.ask("Which Chinese launch site hosted the most launches?")
    _, answer = talk.ask("How many rockets has it built?")
    assert "'built'" in answer["caveat"]
    _, standalone = talk.ask("How many rockets has Jiuquan Satellite Launch Center built?")
    assert "'built'" in standalone["caveat"]


@pytest.mark.parametrize("question", [
    "How many Russian-built rockets are active?",
    "How many payloads were built by German makers?",
])
def test_a_verb_of_making_through_the_makers_is_read(talk, question):
    _, answer = talk.ask(question)
    assert "caveat" not in answer


@pytest.mark.parametrize("question, rows", [
    ("Which launch site is the furthest north?", [("Plesetsk Cosmodrome", 62.9257)]),
    ("中国最南端的发射场是哪个？", [("海南商业航天发射场", 19.552)]),
    ("Which is the westernmost launch site?", [("Pacific Spaceport Complex – Alaska", -152.3378)]),
])
def test_the_compass_ends_rank_latitude_or_longitude(talk, question, rows):
    _, answer = talk.ask(question)
    assert result(talk) == rows and "caveat" not in answer


@pytest.mark.parametrize("question, rows", [
    ("How many launches were there in Q1 2024 and Q1 2025?", [("2024-Q1", 54), ("2025-Q1", 85)]),
    ("2000年代和2020年代，俄罗斯的火箭各发射了多少次？", [(2000, 231), (2020, 94)]),
])
def test_periods_apart_are_each_a_group(talk, question, rows):
    _, answer = talk.ask(question)
    assert result(talk) == rows and "caveat" not in answer


@pytest.mark.parametrize("first, then, said", [
    ("How many launches did China make in Q2 2023?", "How does that compare with the same quarter a year earlier?",
     "2023-Q2 has 13 more (+144.44%)."),
    ("2023年第二季度中国发射了多少次？", "和前一年同期相比呢？", "2023-Q2多 13（+144.44%）"),
    ("How many launches did China make in 2023?", "How does that compare with the year before?",
     "2023 has 13 more (+23.64%)."),
])
def test_a_period_compared_with_the_same_one_a_year_before(talk, first, then, said):
    talk.ask(first)
    _, answer = talk.ask(then)
    assert len(result(talk)) == 2 and said in answer["text"] and "caveat" not in answer


@pytest.mark.parametrize("question, model", [
    ("Which suppliers provide the parts of the C919?", "COMAC C919"),
    ("Which suppliers provide the parts of the 787-9?", "Boeing 787-9"),
])
def test_a_model_is_found_by_its_designation(talk, question, model):
    _, answer = talk.ask(question)
    assert f"model = '{model}'" in answer["sql"] and len(result(talk)) == 6 and "caveat" not in answer


_C919_PARTS = {("CFM国际公司", "CFM LEAP-1C"), ("中国航空发动机集团", "CJ-1000A"), ("泰雷兹集团", "Integrated modular avionics"),
               ("霍尼韦尔航空航天", "RDR-4000 IntuVue weather radar"), ("穆格公司", "Primary flight control actuators"),
               ("赛峰起落架系统公司", "Main landing gear assembly")}


@pytest.mark.parametrize("question", ["C919的各个部件都是哪些供应商提供的？", "C919的每个部件分别由哪家供应商提供？"])
def test_which_rows_of_each_group_are_listed_beside_it(talk, question):
    _, answer = talk.ask(question)
    assert set(result(talk)) == _C919_PARTS and "COUNT" not in answer["sql"] and "caveat" not in answer
    _, answer = talk.ask("其中哪些供应商是中国的？")
    assert result(talk) == [("中国航空发动机集团",)] and "caveat" not in answer


def test_which_rows_of_each_group_in_english(talk):
    talk.ask("Which supplier provides each part of the C919?")
    assert {r[1] for r in result(talk)} == {p for _, p in _C919_PARTS} and len(result(talk)) == 6


@pytest.mark.parametrize("question, rows, said", [
    ("By what percent did launches from Vandenberg change from 2024 to 2025?", [("2024", 30), ("2025", 46)],
     "2025 has 16 more (+53.33%)."),
    ("拜科努尔航天发射场2021年的发射次数比2020年多还是少？变化了百分之多少？", [("2020", 8), ("2021", 6)], "2021少 2（-25%）"),
    ("中国2024年的发射次数同比增长了多少？", [("2023", 68), ("2024", 72)], "2024多 4（+5.88%）"),
    ("What was the year-over-year change in Chinese launches in 2023?", [("2022", 55), ("2023", 68)], "(+23.64%)"),
    ("2020年SpaceX的发射比前一年增加了多少？", [("2019", 15), ("2020", 26)], "2020多 11（+73.33%）"),
    ("Did Chinese launches increase in 2024?", [("2023", 68), ("2024", 72)], "2024 has 4 more (+5.88%)."),
    ("How did the total number of launches in 2025 compare with 2024, in percentage terms?", [("2024", 260), ("2025", 331)],
     "2025 has 71 more (+27.31%)."),
])
def test_a_change_between_two_years_states_the_percent(talk, question, rows, said):
    _, answer = talk.ask(question)
    assert result(talk) == rows and said in answer["text"] and "caveat" not in answer


@pytest.mark.parametrize("first, then", [
    ("How did Falcon 9's number of launches in 2020 compare with 2023?", "By what percentage did it grow?"),
    ("中国2023年比2022年多发射了多少次？", "增长了百分之多少？"),
])
def test_a_follow_up_asks_the_change_of_two_figures_compared(talk, first, then):
    talk.ask(first)
    rows = result(talk)
    _, answer = talk.ask(then)
    assert result(talk) == rows and "%" in answer["text"] and "caveat" not in answer


@pytest.mark.parametrize("first, then", [
    ("List the payloads launched in March 2024.", "Which operator countries did those payloads belong to?"),
    ("How many Proton-M launches were there since 2010?", "What was its success rate over that period?"),
])
def test_plain_verbs_and_the_period_pointed_back_at_raise_no_caveat(talk, first, then):
    talk.ask(first)
    _, answer = talk.ask(then)
    assert "caveat" not in answer


@pytest.mark.parametrize("question, unused", [
    ("Which rockets dropped payloads in 2020?", "dropped"),  # a change word of no two figures: still said
    ("Show the growth of launches per year", "growth"),
])
def test_a_change_word_without_two_figures_is_left_out_and_said(talk, question, unused):
    _, answer = talk.ask(question)
    assert f"'{unused}'" in answer.get("caveat", "")


def test_moon_missions_are_the_launches_to_the_moon(talk):
    _, answer = talk.ask("List the Moon missions launched in the 2020s with their rockets.")
    assert "orbit = 'TLI'" in answer["sql"] and len(result(talk)) == 12 and "caveat" not in answer
    talk.ask("How many of them were Chinese?")
    assert result(talk) == [(7,)]


def test_a_crewed_spacecraft_is_a_crewed_payload(talk):
    _, answer = talk.ask("各国运营的载人航天器分别有多少个？")
    assert result(talk) == [("俄罗斯", 72), ("美国", 62), ("中国", 32)] and "caveat" not in answer


@pytest.mark.parametrize("first, then, rows", [
    ("Which rockets are retired?", "Which of them flew the most?", [("Soyuz-U", 112)]),
    ("Which rockets are retired?", "Which three of them flew the most?",
     [("Soyuz-U", 112), ("Ariane 5 ECA", 76), ("Soyuz-FG", 72)]),
    ("已经退役的火箭有哪些？", "其中哪一款发射次数最多？", [("联盟-U", 112)]),
])
def test_rows_listed_ranked_by_how_many_rows_below_them(talk, first, then, rows):
    talk.ask(first)
    _, answer = talk.ask(then)
    assert result(talk) == rows and "caveat" not in answer


def test_the_pick_of_rows_ranked_by_their_count_is_named_after(talk):
    talk.ask("已经退役的火箭有哪些？")
    talk.ask("其中哪一款发射次数最多？")
    _, answer = talk.ask("它最后一次发射是在哪一天？")
    assert result(talk) == [("Kosmos 2476", "2017-09-10")] and "caveat" not in answer


@pytest.mark.parametrize("first", [
    "What was the busiest quarter of 2022 for Russian launches?",  # the quarter a ranking picked: its launches
    "How many Russian launches were there in Q2 2022?",
])
def test_most_of_them_groups_by_the_table_asked_after_which(talk, first):
    talk.ask(first)
    _, answer = talk.ask("And which site did most of them fly from?")
    assert result(talk) == [("Plesetsk Cosmodrome", 4)]
    assert "launch_date >= '2022-04-01' AND launches.launch_date < '2022-07-01'" in answer["sql"]


@pytest.mark.parametrize("bucket, label, period", [
    ("quarter", "2022-Q2", ("2022-04-01", "2022-07-01", 2022, 2022)),
    ("half_year", "2021-H2", ("2021-07-01", "2022-01-01", 2021, 2021)),
    ("month", "2024-12", ("2024-12-01", "2025-01-01", 2024, 2024)),
    ("year", "2019", ("2019-01-01", "2020-01-01", 2019, 2019)),
    ("decade", 2010, ("2010-01-01", "2020-01-01", 2010, 2019)),
    ("quarter", "2022", None),
])
def test_a_time_buckets_label_is_its_period(bucket, label, period):
    assert bucket_period(bucket, label) == period


def test_each_of_those_counts_each_listed_rows_own(talk):
    """"each of those" (a restricting "of those" too): each rocket's own launches, not one total of them all."""
    talk.ask("Which active rockets can lift more than 20000 kg to LEO?")
    _, answer = talk.ask("How many times did each of those fly last year?")
    assert result(talk)[:3] == [("Falcon 9", 165), ("Vulcan Centaur", 5), ("Ariane 6", 4)] and "caveat" not in answer


_ROLLS_ROYCE = {"Boeing 787-9", "Boeing 787-10", "Airbus A330-900", "Airbus A350-900", "Airbus A380-800"}


@pytest.mark.parametrize("question", ["Which aircraft have Rolls-Royce engines?", "Which aircraft use engines from Rolls-Royce?",
                                      "哪些飞机装了罗尔斯·罗伊斯的发动机？"])
def test_a_maker_before_a_kind_of_part_is_the_parts_supplier(talk, question):
    """(the seventy-third walk's Z3: the aircraft Rolls-Royce made, none, and their number of engines, as if right)"""
    _, answer = talk.ask(question)
    assert len(result(talk)) == 10 and "aircraft_hardware.supplier_id = manufacturers.id" in answer["sql"]
    assert "caveat" not in answer
    if question.isascii():
        assert _ROLLS_ROYCE <= {r[0] for r in result(talk)}


def test_the_parts_supplier_is_kept_by_a_follow_up(talk):
    talk.ask("哪些飞机装了罗尔斯·罗伊斯的发动机？")
    _, answer = talk.ask("这些飞机一共生产了多少架？")
    assert result(talk) == [(2966,)] and "caveat" not in answer


@pytest.mark.parametrize("question, count", [
    ("How many Ariane 5 launches were there in the 2010s?", 56),  # 'Ariane 5 G', 'Ariane 5 ECA', 'Ariane 5 ES'
    ("How many Delta IV launches were there?", 47),  # two names written whole: 'Delta IV Medium', 'Delta IV Heavy'
])
def test_a_family_of_names_written_with_its_number(talk, question, count):
    _, answer = talk.ask(question)
    assert result(talk) == [(count,)] and "caveat" not in answer


def test_a_share_of_the_world_and_then_of_another_period(talk):
    _, answer = talk.ask("2025年上半年，美国的发射次数占全球的百分之几？")
    assert result(talk) == [(60.23,)] and "caveat" not in answer  # 全球: of every launch
    _, answer = talk.ask("那下半年的占比呢？")
    assert result(talk) == [(52.5,)] and "caveat" not in answer


def test_reusable_said_without_ke(talk):
    talk.ask("高度超过60米的火箭有哪些？")
    _, answer = talk.ask("其中哪些可以重复使用？")
    assert {r[0] for r in result(talk)} == {"猎鹰9号", "猎鹰重型", "星舰", "新格伦"} and "caveat" not in answer


@pytest.mark.parametrize("question, word", [("运-20用的是什么发动机？", "发动机"), ("What engines does the Y-20 use?", "engines")])
def test_a_number_is_no_answer_to_what(talk, question, word):
    """(the seventy-third walk's Z9 showed the number of engines, 4, as if right)"""
    _, answer = talk.ask(question)
    assert word in answer["caveat"]


def test_that_quarter_is_the_period_before_not_a_grouping(talk):
    """"What share of that quarter's launches is that?" after the top orbit of a quarter: its share of that quarter's
    launches (44 of 65), not every quarter's share of all launches read on its own."""
    talk.ask("Which orbit received the most launches in the last quarter of 2025?")
    _, answer = talk.ask("What share of that quarter's launches is that?")
    assert result(talk) == [("LEO", 67.69, 44)] and "caveat" not in answer


def test_the_ariane_5_launches_of_a_follow_up(talk):
    talk.ask("How many Ariane 5 launches were there in the 2010s?")
    _, answer = talk.ask("And how many of those went to geostationary transfer orbit?")
    assert result(talk) == [(45,)] and "caveat" not in answer


@pytest.mark.parametrize("question, rows", [
    ("文昌航天发射场发射过哪些型号的火箭？各多少次？",  # 型号 before the table word: the rockets, each a model
     [("长征七号甲", 22), ("长征七号", 19), ("长征五号", 10), ("长征五号乙", 9), ("长征八号", 4)]),
    ("2022年5月到10月，从太原卫星发射中心送入太空的载荷一共有多少个？", [(16,)]),  # 送入太空: launched
    ("2025年各国火箭的发射次数从高到低排个名。", None),  # 排个名: ranked
])
def test_the_seventy_fourth_walks_words_raise_no_caveat(talk, question, rows):
    _, answer = talk.ask(question)
    assert "caveat" not in answer and (rows is None or result(talk) == rows)


def test_which_rockets_launched_the_rows_the_previous_answer_joined(talk):
    """"Which rockets launched them?" after the countries operating the payloads sent to Mars: each payload's rocket,
    a join the words ask for (no 'joined a table' caveat)."""
    talk.ask("Which countries operate the payloads that were sent to Mars?")
    _, answer = talk.ask("Which rockets launched them?")
    assert ("Delta II", "Spirit") in result(talk) and "caveat" not in answer


def test_since_then_is_the_time_after_the_period_before(talk):
    talk.ask("How many Soyuz launches lifted off from Baikonur before 2010?")
    _, answer = talk.ask("And since then?")
    assert result(talk) == [(118,)] and "launch_date >= '2010-01-01'" in answer["sql"] and "caveat" not in answer


@pytest.mark.parametrize("question", ["How many payloads launched during the 2000s are marked as failed?",
                                      "How many Delta launches were there in the 2000s compared with the 2010s?"])
def test_the_seventy_fifth_walks_words_raise_no_caveat(talk, question):
    _, answer = talk.ask(question)
    assert "caveat" not in answer


def test_a_question_opening_on_fenbie_follows_the_one_before(talk):
    """分别用的是什么火箭？ after a count at a site: those launches' rockets, not every rocket read on its own (the
    seventy-fifth walk's Z2, answered as if right)."""
    talk.ask("2025年海南商业航天发射场一共发射了几次？")
    talk.ask("分别用的是什么火箭？")
    assert set(result(talk)) == {("长征十二号",), ("长征八号",)}


@pytest.mark.parametrize("question, dated", [
    # a year right after a value of dated rows dates those rows, not the year the rows asked about began
    ("Which rocket families had partial failures between 2005 and 2015, and how many each?", "launches.launch_date"),
    ("Which launch sites had failures in 2010?", "launches.launch_date"),
    ("Which launch sites opened in 2010?", "opened_year"),
    ("Which rocket families first flew in 2010?", "first_flight_year"),
])
def test_a_year_after_a_value_of_dated_rows_dates_them(talk, question, dated):
    _, answer = talk.ask(question)
    assert dated in answer["sql"] and "caveat" not in answer


def test_partial_failures_of_families_in_a_span_of_years(talk):
    """(the seventy-fifth walk's E18 dated the families' first flight, answered as if right)"""
    talk.ask("Which rocket families had partial failures between 2005 and 2015, and how many each?")
    assert result(talk)[:2] == [("Antares", 3), ("Long March", 3)] and len(result(talk)) == 7


@pytest.mark.parametrize("first, then", [
    ("Which five launch sites had the most launches from 2015 to 2019?",
     "What was each one's success rate over those years?"),  # "over those years": the period kept
    ("How many navigation satellites were launched in each decade?",
     "Which operator countries were behind the ones from the 2020s?"),  # 'behind': the operators
])
def test_the_seventy_sixth_walks_words_raise_no_caveat(talk, first, then):
    talk.ask(first)
    _, answer = talk.ask(then)
    assert "caveat" not in answer
