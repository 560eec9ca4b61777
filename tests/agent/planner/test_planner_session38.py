"""Read after the 86th walk (issue 38).

- 最大速度低于1000公里每小时的飞机中，航程最远的是哪一款？: 每 inside a speed's unit is no "each" (it ranked every range
  value as a group of its own, the shortest first, as if right); 每小时1000公里 and "km per hour" likewise.
- "Which of them failed at least once in that period?" after each rocket's launches counted: the rockets with a
  failure, each with its failures (it listed the failed missions with no rocket, as if right).
- 它们分别是哪家供应商提供的？ after aircraft with costly avionics: the parts' supplier beside each aircraft (it named
  the aircraft's own maker, as if right).
"""

from __future__ import annotations

import pytest

from tests.agent.planner.test_planner_followup import planner, result, sample, talk  # noqa: F401 (fixtures)

def _then(talk, first: str, then: str) -> dict:
    """`then` asked right after `first`, in one conversation: its answer."""
    talk.ask(first)
    return talk.ask(then)[1]


def _rocket_name(first: str) -> str:
    """The rockets' name column in the language of the conversation."""
    return "v.name_zh" if "火箭" in first else "v.name"


SLOWEST_LONGEST = "SELECT {name} FROM aircraft WHERE max_speed_kmh < 1000 ORDER BY range_km DESC LIMIT 1"


@pytest.mark.parametrize("question", [
    "最大速度低于1000公里每小时的飞机中，航程最远的是哪一款？",
    "最大速度低于1000公里每小时的飞机中，哪一款航程最远？",
    "速度低于每小时1000公里的飞机中，哪一款航程最远？",
    "Among aircraft slower than 1000 kilometers per hour, which has the longest range?",
])
def test_a_speeds_unit_is_not_a_grouping(talk, sample_db_path, question):
    _, answer = talk.ask(question)
    name = "name_zh" if "飞机" in question else "model"
    gold = sample(sample_db_path, SLOWEST_LONGEST.format(name=name))
    rows = result(talk)
    assert "caveat" not in answer and len(rows) == 1 and rows[0][0] == gold[0][0]


@pytest.mark.parametrize("first, then", [
    ("Which rockets have launched from Satish Dhawan since 2020, and how many times each?",
     "Which of them failed at least once in that period?"),
    ("2020年以来从萨迪什·达万航天中心发射过的火箭有哪些？各发射了几次？", "其中哪些至少失败过一次？"),
])
def test_which_of_the_ones_counted_did_it_at_least_once(talk, sample_db_path, first, then):
    answer = _then(talk, first, then)
    name = _rocket_name(first)
    gold = sample(sample_db_path, f"SELECT {name}, COUNT(*) FROM launches l JOIN launch_vehicles v ON l.vehicle_id = v.id "
                                  "JOIN launch_sites s ON l.site_id = s.id WHERE s.name = 'Satish Dhawan Space Centre' "
                                  "AND l.launch_date >= '2020-01-01' AND l.outcome = 'failure' GROUP BY v.id")
    assert "caveat" not in answer and sorted(result(talk)) == sorted(gold)


def test_which_of_those_failed_without_at_least_once_still_lists_the_rows(talk):
    # "Which of those failed?" may ask for the failed launches themselves: listed, as before
    talk.ask("Which rockets have launched from Satish Dhawan since 2020, and how many times each?")
    talk.ask("Which of those failed?")
    assert len(result(talk)) == 4 and all(len(row) == 1 for row in result(talk))


@pytest.mark.parametrize("first, then", [
    ("哪些飞机的航电单价超过700万美元？", "它们分别是哪家供应商提供的？"),
    ("Which aircraft have avionics costing more than 7 million dollars each?", "Which supplier provided each of them?"),
])
def test_the_supplier_asked_of_listed_aircraft_is_their_parts_supplier(talk, sample_db_path, first, then):
    answer = _then(talk, first, then)
    zh = "飞机" in first
    aircraft, maker = ("a.name_zh", "m.name_zh") if zh else ("a.model", "m.name")
    gold = sample(sample_db_path, f"SELECT {aircraft}, {maker} FROM aircraft a JOIN aircraft_hardware h ON "
                                  "h.aircraft_id = a.id JOIN manufacturers m ON h.supplier_id = m.id WHERE "
                                  "h.component = 'avionics' AND h.unit_cost_usd > 7000000")
    assert sorted(result(talk)) == sorted(gold)
    assert zh is ("caveat" not in answer)  # the English first question is itself partly answered


@pytest.mark.parametrize("question, bucket, months, since, until", [
    ("How did the number of launches in the first half of 2022 compare with the second half?", "2022-H", 6,
     "2022-01-01", "2023-01-01"),
    ("Were there more launches in Q1 2024 than in the second quarter?", "2024-Q", 3, "2024-01-01", "2024-07-01"),
])
def test_a_half_or_quarter_compared_with_one_of_a_year_is_in_that_year(talk, sample_db_path, question, bucket, months,
                                                                       since, until):
    _, answer = talk.ask(question)
    gold = sample(sample_db_path, f"SELECT '{bucket}' || ((CAST(strftime('%m', launch_date) AS INTEGER) + {months - 1}) "
                                  f"/ {months}), COUNT(*) FROM launches WHERE launch_date >= '{since}' AND launch_date "
                                  f"< '{until}' GROUP BY 1")
    assert "caveat" not in answer and sorted(result(talk)) == sorted(gold) and len(gold) == 2


@pytest.mark.parametrize("first, then", [("2000年代发射的载荷有多少个？", "其中质量超过1吨的有多少个？"),
                                         ("How many payloads were launched in the 2000s?",
                                          "How many of them weigh more than 1 tonne?")])
def test_a_follow_ups_weight_in_tonnes_is_compared_in_the_columns_kilograms(talk, sample_db_path, first, then):
    answer = _then(talk, first, then)
    gold = sample(sample_db_path, "SELECT COUNT(*) FROM payloads p JOIN launches l ON p.launch_id = l.id WHERE "
                                  "l.launch_date >= '2000-01-01' AND l.launch_date < '2010-01-01' AND p.mass_kg > 1000")
    assert "caveat" not in answer and result(talk) == gold


# -- after the eighty-seventh walk ----------------------------------------------------------------------------


@pytest.mark.parametrize("question", ["2020年以来，哪家制造商造的通信卫星最多？",
                                      "Since 2020, which manufacturer built the most communications satellites?"])
def test_a_period_of_the_rows_counted_is_their_launch_date_not_their_makers_founding(talk, sample_db_path, question):
    # the payloads' launches and their makers are as near; the dates of the launches, not the year a maker was founded
    _, answer = talk.ask(question)
    name = "m.name_zh" if "制造商" in question else "m.name"
    gold = sample(sample_db_path, f"SELECT {name}, COUNT(*) AS n FROM payloads p JOIN launches l ON p.launch_id = l.id "
                                  "JOIN manufacturers m ON p.manufacturer_id = m.id WHERE p.purpose = 'communications' "
                                  "AND l.launch_date >= '2020-01-01' GROUP BY m.id ORDER BY n DESC LIMIT 1")
    assert "caveat" not in answer and result(talk) == gold


def test_them_before_a_verb_of_using_are_the_rows_before(talk, sample_db_path):
    talk.ask("How many launches took place from Tanegashima between 2010 and 2019?")
    _, answer = talk.ask("What share of them used the H-IIA?")
    assert "caveat" not in answer and result(talk) == [(74.29,)]


def test_into_space_adds_no_condition(talk):
    _, answer = talk.ask("How many payloads did Indian rockets carry into space in 2024?")
    assert "caveat" not in answer


def test_how_was_it_again_is_a_follow_up(talk, sample_db_path):
    talk.ask("2023年第四季度，各国的火箭分别发射了多少次？")
    _, answer = talk.ask("2024年第四季度又是怎样的？")
    gold = sample(sample_db_path, "SELECT c.name_zh, COUNT(*) FROM launches l JOIN launch_vehicles v ON l.vehicle_id = "
                                  "v.id JOIN manufacturers m ON v.manufacturer_id = m.id JOIN countries c ON "
                                  "m.country_id = c.id WHERE l.launch_date >= '2024-10-01' AND l.launch_date < "
                                  "'2025-01-01' GROUP BY c.id")
    assert "caveat" not in answer and sorted(result(talk)) == sorted(gold)


@pytest.mark.parametrize("first, then", [
    ("How many launches did United Launch Alliance rockets make in the 2010s?",
     "Which of its rockets flew the most in that decade?"),
    ("2010年代联合发射联盟的火箭一共发射了多少次？", "其中哪款火箭发射次数最多？"),
])
def test_which_of_its_rows_did_the_most_after_a_count_ranks_them(talk, sample_db_path, first, then):
    answer = _then(talk, first, then)
    name = _rocket_name(first)
    gold = sample(sample_db_path, f"SELECT {name}, COUNT(*) AS n FROM launches l JOIN launch_vehicles v ON l.vehicle_id = "
                                  "v.id JOIN manufacturers m ON v.manufacturer_id = m.id WHERE m.name = 'United Launch "
                                  "Alliance' AND l.launch_date >= '2010-01-01' AND l.launch_date < '2020-01-01' "
                                  "GROUP BY v.id ORDER BY n DESC LIMIT 1")
    assert "caveat" not in answer and result(talk) == gold


def test_of_that_year_is_the_year_before_not_a_year_to_show(talk, sample_db_path):
    talk.ask("Which launch site sent up the most payloads in the first half of 2023?")
    _, answer = talk.ask("And in the second half of that year?")
    assert "caveat" not in answer and "2023-07-01" in answer["sql"] and len(result(talk)[0]) == 2


# -- after the eighty-eighth walk ------------------------------------------------------------------------------


@pytest.mark.parametrize("question", ["How were Soyuz-2.1a's launches split across launch sites?",
                                      "How are Soyuz-2.1a launches distributed across launch sites?"])
def test_split_across_groups_by_what_follows(talk, sample_db_path, question):
    _, answer = talk.ask(question)
    gold = sample(sample_db_path, "SELECT s.name, COUNT(*) FROM launches l JOIN launch_vehicles v ON l.vehicle_id = "
                                  "v.id JOIN launch_sites s ON l.site_id = s.id WHERE v.name = 'Soyuz-2.1a' GROUP BY s.id")
    assert "caveat" not in answer and sorted(result(talk)) == sorted(gold)


@pytest.mark.parametrize("first, then", [
    ("2010年到2019年，长征二号丁执行了多少次发射？", "它们在各发射场之间是怎么分布的？"),
    ("2020年以来电子号一共发射了多少次？", "其中从美国本土发射的有几次？"),
])
def test_words_of_how_rows_fall_and_of_the_homeland_add_no_condition(talk, first, then):
    answer = _then(talk, first, then)
    assert "caveat" not in answer and answer["sql"]


def test_the_rocket_each_was_launched_with_after_the_rows(talk):
    _, answer = talk.ask("近两年，美国运营的科学载荷有哪些？分别用什么火箭发射的？")
    assert "caveat" not in answer and len(result(talk)[0]) == 2


def test_a_count_and_a_top_pick_in_one_english_question_says_the_count_is_left_out(talk):
    _, answer = talk.ask("How many launches did China make in 2024, and which rocket flew the most?")
    assert "How many" in answer["caveat"]


def test_a_series_named_by_a_letter_after_a_hyphen_is_that_series(talk, sample_db_path):
    _, answer = talk.ask("How many Glonass-K satellites were launched?")
    assert "caveat" not in answer and "LIKE 'Glonass-K%'" in answer["sql"]
    assert result(talk) == sample(sample_db_path, "SELECT COUNT(*) FROM payloads WHERE name LIKE 'Glonass-K%'")


def test_which_kind_of_rows_with_a_column_asked_shows_their_names_too(talk):
    _, answer = talk.ask("Which airliners first flew between 2015 and 2020, and what are their ranges?")
    assert "caveat" not in answer and all(len(row) == 2 and isinstance(row[0], str) for row in result(talk))


# -- after the eighty-ninth walk ------------------------------------------------------------------------------


def test_each_rows_own_figure_is_read_from_the_rows_themselves(talk, sample_db_path):
    # 各生产了多少架: each aircraft's own units built, not summed over the parts a Japanese supplier made
    _, answer = talk.ask("日本公司制造的飞机有哪些？各生产了多少架？")
    gold = sample(sample_db_path, "SELECT a.name_zh, a.units_built FROM aircraft a JOIN manufacturers m ON "
                                  "a.manufacturer_id = m.id JOIN countries c ON m.country_id = c.id WHERE c.name = 'Japan'")
    assert "caveat" not in answer and sorted(result(talk)) == sorted(gold)


def test_values_listed_with_a_column_of_theirs_each_are_named(talk, sample_db_path):
    _, answer = talk.ask("长征八号和长征十二号的近地轨道运载能力分别是多少？各发射过几次？")
    gold = sample(sample_db_path, "SELECT v.name_zh, v.payload_leo_kg, COUNT(*) FROM launches l JOIN launch_vehicles v ON "
                                  "l.vehicle_id = v.id WHERE v.name_zh IN ('长征八号', '长征十二号') GROUP BY v.id")
    assert "caveat" not in answer and sorted(result(talk)) == sorted(gold)


@pytest.mark.parametrize("question", [
    "Which rockets reached GTO more than 10 times between 2016 and 2020?",
    "客机的航电系统平均单价是多少？",
    "How many payloads has ISS Reshetnev built, and what's their average mass?",
])
def test_reached_a_generic_system_and_their_in_a_second_clause_add_no_caveat(talk, question):
    _, answer = talk.ask(question)
    assert "caveat" not in answer and answer["sql"]
