"""Orders an analyst asks for and the dates a follow-up's period is on (issue 38, after the sixteenth re-walk).

"Rank manufacturers by the number of aircraft", "… ordered by the number of launches": every group with its
count, in that order. "heaviest first": every row in that order, not the heaviest alone. "they" opening a
clause on a second table word of the same question refers to the first. 加起来 and "added together" are a sum.
失败 names the payloads' own 'failed' status when the question is about payloads. A period beside a table word
with a date ("launched after 2020", 2020年以后发射的) is on that table's date, in a follow-up too, which keeps
the previous grouping and joins that table without asking.
"""

from __future__ import annotations

import pytest

from agent.planner.followup import frame_to_dict
from tests.agent.planner.test_planner_followup import planner, sample  # noqa: F401 (fixtures)


def _after(planner, first: str, *more: str):
    plan = planner.plan(first)
    for question in more:
        plan = planner.plan(question, frame_to_dict(plan.frame) | {"complete": plan.caveat is None})
    return plan


@pytest.mark.parametrize("question, direction", [
    ("Rank manufacturers by the number of aircraft.", "DESC"),
    ("List launch sites ranked by the number of launches since 2020.", "DESC"),
    ("Sort the launch sites by the number of launches in descending order.", "DESC"),
    ("List manufacturers in descending order of the number of aircraft.", "DESC"),
    ("Rank countries by the number of launch sites.", "DESC"),
])
def test_rows_ordered_by_a_count_are_all_listed_with_it(planner, question, direction):
    plan = planner.plan(question)
    assert "COUNT(*) AS count" in plan.sql and f"ORDER BY count {direction}" in plan.sql
    assert "LIMIT" not in plan.sql and "GROUP BY" in plan.sql
    assert plan.caveat is None


def test_ordered_by_a_count_without_a_direction_is_ascending(planner):
    plan = planner.plan("List manufacturers ordered by the number of aircraft.")
    assert plan.sql.rstrip().endswith("ORDER BY count") and plan.caveat is None


def test_a_superlative_then_first_lists_every_row_in_that_order(planner, sample_db_path):
    plan = planner.plan("List the payloads, heaviest first.")
    assert "ORDER BY mass_kg DESC" in plan.sql and "MAX(" not in plan.sql and "LIMIT" not in plan.sql
    assert "mass_kg" in plan.sql.split("FROM")[0]  # the mass each row is ordered by, shown
    assert len(sample(sample_db_path, plan.sql)) == sample(sample_db_path, "SELECT COUNT(*) FROM payloads")[0][0]
    assert plan.caveat is None


def test_rank_and_fastest_first_and_their_models_are_read(planner):
    """The sixteenth re-walk's E12, right but flagged for 'Rank', 'models', 'first'."""
    plan = planner.plan("Rank aircraft manufacturers by the average top speed of their models, fastest first, "
                        "and show the top 5.")
    assert "AVG(aircraft.max_speed_kmh)" in plan.sql and "DESC" in plan.sql and plan.sql.rstrip().endswith("LIMIT 5")
    assert plan.frame.unused == [] and plan.caveat is None


def test_they_on_a_second_table_word_points_within_the_question(planner):
    assert planner.plan("Which countries have launch sites that they opened after 2000?").frame.unused == []
    assert planner.plan("How many launches did they make in 2020?").frame.unused == ["they"]  # whose? said


@pytest.mark.parametrize("first, then", [("首飞日期在2016年下半年的飞机有哪些？", "它们的产量加起来是多少？"),
                                         ("Which aircraft first flew in 2016?", "What is their units built added together?")])
def test_words_of_adding_up_are_a_sum(planner, first, then):
    plan = _after(planner, first, then)
    assert "SUM(units_built)" in plan.sql and plan.caveat is None


def test_put_into_an_orbit_is_read(planner):
    plan = planner.plan("How many payloads were put into SSO?")
    assert "orbit = 'SSO'" in plan.sql and plan.caveat is None


def test_a_failed_status_of_payloads_is_the_payloads_own(planner):
    """The sixteenth re-walk's C19: 失败 read as the launch's outcome though the question names the payloads'
    状态; 2019年发生了多少次发射失败？ is still about launches."""
    plan = planner.plan("状态为失败的载荷，按制造商统计各有多少个？")
    assert "payloads.status = 'failed'" in plan.sql and "outcome" not in plan.sql and plan.caveat is None
    assert "outcome = 'failure'" in planner.plan("2019年发生了多少次发射失败？").sql


@pytest.mark.parametrize("questions, dated", [
    (("状态为失败的载荷，按制造商统计各有多少个？", "只看2020年以后发射的。"), "launches.launch_date >= '2020-01-01'"),
    (("How many payloads failed, by manufacturer?", "Only those launched after 2020."),
     "launches.launch_date >= '2021-01-01'"),
    (("How many payloads failed, by manufacturer?", "Only those launched after 2020.",
      "Only those launched in the first half of 2021."),
     "launches.launch_date >= '2021-01-01' AND launches.launch_date < '2021-07-01'"),
])
def test_a_follow_ups_period_beside_a_dated_table_word_is_on_its_date(planner, questions, dated):
    """The sixteenth re-walk's C20: the period was put on the manufacturers' founding year and the grouping
    was replaced by the launches' mission names."""
    plan = _after(planner, *questions)
    assert dated in plan.sql and "founded_year" not in plan.sql
    assert "GROUP BY manufacturers.id" in plan.sql and "mission_name" not in plan.sql
    assert plan.frame.link is None and plan.caveat is None


@pytest.mark.parametrize("question, shown", [
    ("2024年3月以后发射失败的有哪些？列出日期和火箭。", "launches.launch_date, launch_vehicles.name_zh FROM"),
    ("Which launches failed after March 2024? List the date and the rocket.", "launches.launch_date, launch_vehicles.name FROM"),
    ("Which launches failed after March 2024? Show their dates and rockets.", "launches.launch_date, launch_vehicles.name FROM"),
])
def test_a_second_sentence_says_what_to_show_of_the_rows(planner, question, shown):
    """The sixteenth re-walk's C01: the right launches shown by mission name only, ok."""
    plan = planner.plan(question)
    assert " ".join(plan.sql.split()).startswith("SELECT " + shown) and "outcome = 'failure'" in plan.sql and plan.caveat is None


def test_what_a_second_question_asks_with_shen_me_is_shown_beside_each_row(planner):
    """The sixteenth re-walk's C16: the UAE's payloads listed without the rocket asked for."""
    plan = planner.plan("阿联酋运营的载荷有哪些？分别是用什么火箭发射的？")
    assert " ".join(plan.sql.split()).startswith(
        "SELECT payloads.name_zh, launch_vehicles.name_zh AS launch_vehicle_name_zh FROM") and plan.caveat is None


def test_the_owner_of_a_shown_column_is_the_table_written_before_it(planner):
    plan = planner.plan("Which launches failed in 2024? List the rocket's name and the launch date.")
    assert " ".join(plan.sql.split()).startswith("SELECT launch_vehicles.name, launches.launch_date FROM")


def test_a_second_sentence_a_grouped_answer_cannot_show_is_named(planner):
    plan = planner.plan("How many launches did each site host in 2024? List the site's latitude.")
    assert "latitude" in plan.frame.unused and plan.caveat is not None


@pytest.mark.parametrize("question, path", [
    ("Average max speed of fighters by manufacturer country",
     "JOIN manufacturers ON aircraft.manufacturer_id = manufacturers.id JOIN countries ON manufacturers.country_id"),
    ("最大速度超过2000公里/小时的飞机，按制造商所属国家统计各有几款？",
     "JOIN manufacturers ON aircraft.manufacturer_id = manufacturers.id JOIN countries ON manufacturers.country_id"),
    ("How many launches were there in 2024 by rocket manufacturer country?",
     "JOIN launch_vehicles ON launches.vehicle_id = launch_vehicles.id JOIN manufacturers ON "
     "launch_vehicles.manufacturer_id = manufacturers.id JOIN countries ON manufacturers.country_id"),
])
def test_a_grouping_by_a_table_word_another_owns_goes_through_it(planner, question, path):
    """Issue 38's own example, grouped by manufacturer and ok; and the sixteenth re-walk's C17."""
    plan = planner.plan(question)
    sql = " ".join(plan.sql.split())
    assert path in sql and "GROUP BY countries.id" in sql and plan.caveat is None


def test_a_follow_up_regrouping_through_another_table_joins_that_way_without_asking(planner):
    """The sixteenth re-walk's C02: 按火箭所属国家统计 grouped by rocket, 国家 and 属 named."""
    plan = _after(planner, "2024年3月以后发射失败的有哪些？", "按火箭所属国家统计，各有几次？")
    sql = " ".join(plan.sql.split())
    assert "JOIN launch_vehicles ON" in sql and "GROUP BY countries.id" in sql and "launch_sites" not in sql
    assert plan.caveat is None
    again = _after(planner, "How many launches were there in 2024 by site country?", "What about by rocket country?")
    assert "launch_vehicles" in again.sql and "launch_sites" not in again.sql and again.caveat is None


@pytest.mark.parametrize("question, expected", [
    ("What was the average number of launches per month in 2024?", None),
    ("What is the average number of payloads per launch in 2023?", None),
    ("2023年平均每次发射搭载几个载荷？", None),
])
def test_an_average_of_a_count_is_the_mean_of_the_groups_counts(planner, sample_db_path, question, expected):
    """The sixteenth re-walk's E04 and C11: "average" dropped, the monthly counts or the total listed."""
    plan = planner.plan(question)
    # (over every month of 2024 with launches: `test_planner_session36`, a month with none counting as 0)
    assert plan.sql.startswith(("SELECT AVG(count) AS avg_count FROM (", "SELECT SUM(count) * 1.0 / (")) \
        and plan.caveat is None
    value = sample(sample_db_path, plan.sql)[0][0]
    if "month" in question:
        assert value == pytest.approx(sample(sample_db_path, "SELECT COUNT(*) FROM launches "
                                                             "WHERE launch_date LIKE '2024-%'")[0][0] / 12)
    else:
        assert value == pytest.approx(344 / 209)


def test_an_average_of_a_count_carries_into_a_follow_up(planner):
    plan = _after(planner, "What was the average number of launches per month in 2024?", "And in 2020?")
    assert plan.sql.startswith("SELECT SUM(count) * 1.0 / (") and "'2020'" in plan.sql


def test_an_average_number_of_a_column_of_numbers_is_that_columns_average(planner):
    plan = planner.plan("What is the average number of stages of active launch vehicles?")
    assert "AVG(stages)" in plan.sql and "AVG(count)" not in plan.sql


def test_a_countrys_abbreviation_is_its_name(planner):
    """The seventeenth re-walk's E01: "US-operated" dropped in silence, every payload counted, ok."""
    plan = planner.plan("How many US-operated payloads were launched between February and April 2025?")
    assert "countries.name = 'United States'" in plan.sql and "operator_country_id" in plan.sql
    assert planner.plan("Tell us how many launches there were in 2020.").sql.count("countries") == 0


def test_a_share_counts_rows_with_nothing_to_match_in_its_whole(planner, sample_db_path):
    """The seventeenth re-walk's E10: the inner join to the operators' countries dropped the payloads of no
    known operator from the whole, 38.55% for 38.27%, ok."""
    plan = planner.plan("What percentage of payloads launched in 2022 were operated by China?")
    assert "LEFT JOIN countries" in plan.sql
    assert sample(sample_db_path, plan.sql)[0][0] == pytest.approx(38.27)


@pytest.mark.parametrize("question", [
    "Top 3 aircraft manufacturers by total units built for models that first flew after 2010.",
    "哪些国家运营过载荷，但从来没有运营过军用载荷？",
    "单价超过500万美元的部件，按供应商所属国家统计各有多少个？",
])
def test_words_that_name_nothing_left_out_raise_no_caveat(planner, question):
    """The seventeenth re-walk's E19 ('models'), C04 (但) and C07 (部件, 属): right, and flagged."""
    assert planner.plan(question).caveat is None


def test_huan_cheng_replaces_the_value_in_a_follow_up(planner):
    plan = _after(planner, "2015年以来日本运营的载荷中，有多少个仍在轨运行？", "换成韩国呢？")
    assert "'韩国'" in plan.sql and "'日本'" not in plan.sql and plan.caveat is None


def test_parts_are_the_rows_of_the_hardware_and_their_type_its_component(planner):
    assert planner.plan("单价超过500万美元的部件有多少个？").sql.split("\n")[0] == "SELECT COUNT(*) AS count"
    assert "PARTITION BY component" in planner.plan("每种部件类型中，单价最高的部件分别是哪个？").sql


@pytest.mark.parametrize("question, having", [
    ("Which aircraft roles have an average range above 5,000 km?", "GROUP BY role HAVING AVG(range_km) > 5000"),
    ("哪些飞机制造商的机型平均航程超过1万公里？", "HAVING AVG(aircraft.range_km) > 10000"),
    ("Which manufacturers have an average aircraft range above 10000 km?", "HAVING AVG(aircraft.range_km) > 10000"),
    ("Which launch vehicles have a total payload mass above 1000000 kg?", "HAVING SUM(payloads.mass_kg) > 1000000"),
])
def test_an_aggregate_compared_with_a_number_is_a_having_on_each_group(planner, question, having):
    """The seventeenth re-walk's E06 (right by chance: every aircraft of range over 5,000 km, 'average' named)
    and C17 (makers with any aircraft of that range)."""
    plan = planner.plan(question)
    assert having in " ".join(plan.sql.split()) and "WHERE" not in plan.sql and plan.caveat is None


def test_a_measured_having_survives_a_follow_up_and_a_second_one_is_named(planner):
    first = planner.plan("Which orbits have an average payload mass over 5000 kg?")
    again = planner.plan("Which of them have more than 100 payloads?", frame_to_dict(first.frame) | {"complete": True})
    assert "HAVING AVG(mass_kg) > 5000" in again.sql and "more than 100" in again.frame.unused


def test_which_of_the_groups_with_a_count_keeps_the_groups(planner):
    """'Which of them have more than 100 payloads?' after orbits with more than 50 listed payload names with a
    HAVING over no groups, ok."""
    plan = _after(planner, "Which orbits have more than 50 payloads?", "Which of them have more than 100 payloads?")
    assert "GROUP BY orbit HAVING COUNT(*) > 100" in " ".join(plan.sql.split()) and plan.caveat is None


def test_the_first_or_last_of_dated_rows_is_the_earliest_or_latest(planner):
    """The seventeenth re-walk's E14 and E15: every launch of the year listed, 'first' and 'last' named."""
    first = planner.plan("What was the first launch of 2025, and which rocket flew it?")
    sql = " ".join(first.sql.split())
    assert "MIN(launches.launch_date)" in sql and sql.startswith(
        "SELECT launches.mission_name, launches.launch_date, launch_vehicles.name FROM") and first.caveat is None
    last = _after(planner, "What was the first launch of 2025?", "What about the last launch of 2024?")
    assert "MAX(launch_date)" in last.sql and "'2024'" in last.sql and last.caveat is None
    assert "first_flight_date" in planner.plan("Which aircraft made the first flight in 2016?").sql


def test_each_after_a_verb_is_each_of_the_rows_asked(planner):
    plan = planner.plan("Which launch vehicles are Japanese, and how many times did each fly in 2024?")
    assert plan.sql.startswith("SELECT launch_vehicles.name, COUNT(*) AS count")
    assert "GROUP BY launch_sites.id" in " ".join(planner.plan("How many launches did each site host in 2023?").sql.split())


def test_a_number_with_a_unit_compares_that_units_column_not_a_count(planner):
    """The seventeenth re-walk's E16: "under 100 kg" read as fewer than 100 payloads a year."""
    plan = planner.plan("How many payloads weighing under 100 kg were launched each year from 2019 to 2022?")
    assert "payloads.mass_kg < 100" in plan.sql and "HAVING" not in plan.sql and plan.caveat is None


def test_two_outcomes_joined_by_huo_are_both_kept(planner):
    """The seventeenth re-walk's C05: 失败或部分失败 kept only the failures."""
    plan = planner.plan("2018年3月到6月发射失败或部分失败的任务有哪些？")
    assert "outcome IN ('failure', 'partial failure')" in plan.sql and plan.caveat is None


def test_the_fewest_of_a_column_are_of_rows_that_have_it(planner):
    """The seventeenth re-walk's C16: payloads of unknown mass came first as the lightest."""
    plan = planner.plan("质量最轻的十个载荷分别是什么？由哪个国家运营？")
    sql = " ".join(plan.sql.split())
    assert "payloads.mass_kg IS NOT NULL" in sql and sql.startswith("SELECT payloads.name_zh, payloads.mass_kg, "
                                                                    "countries.name_zh AS country_name_zh FROM")
    assert plan.caveat is None


@pytest.mark.parametrize("question, expected", [
    ("How many launch vehicles have flown more than 100 times?",
     "SELECT COUNT(*) FROM (SELECT vehicle_id FROM launches GROUP BY vehicle_id HAVING COUNT(*) > 100)"),
    ("How many launches in Q4 2024 carried more than one payload?",
     "SELECT COUNT(*) FROM (SELECT p.launch_id FROM payloads p JOIN launches l ON l.id = p.launch_id WHERE "
     "l.launch_date >= '2024-10-01' AND l.launch_date < '2025-01-01' GROUP BY p.launch_id HAVING COUNT(*) > 1)"),
    ("有多少个国家拥有超过2个发射场？",
     "SELECT COUNT(*) FROM (SELECT country_id FROM launch_sites GROUP BY country_id HAVING COUNT(*) > 2)"),
])
def test_how_many_groups_pass_a_count_counts_the_groups(planner, sample_db_path, question, expected):
    """The seventeenth re-walk's E09 (declined); "How many launch vehicles have flown more than 100 times?" grouped
    mission names by a count of vehicles, ok."""
    plan = planner.plan(question)
    assert plan.sql.startswith("SELECT COUNT(*) AS count FROM (") and plan.caveat is None
    assert sample(sample_db_path, plan.sql) == sample(sample_db_path, expected)


@pytest.mark.parametrize("question, inside", [
    ("Which active launch vehicles have not flown since the start of 2024?", "launches.launch_date >= '2024-01-01')"),
    ("Which launch sites hosted launches in 2023 but no launches in 2024?",
     "strftime('%Y', launches.launch_date) = '2024')"),
])
def test_a_period_after_a_negation_is_of_the_rows_there_are_none_of(planner, question, inside):
    """The seventeenth re-walk's E04: the period was put on the vehicles' own launches as well, so no row."""
    plan = planner.plan(question)
    sql = " ".join(plan.sql.split())
    assert inside in sql and "NOT IN" in sql and plan.caveat is None
    assert sql.split("NOT IN")[0].count("2024") == 0  # not also a condition on the rows kept


def test_the_highest_rate_ranks_the_groups_by_that_rate(planner):
    """The eighteenth re-walk's E15: ranked by the number of launches, LEO first, ok."""
    plan = planner.plan("Which orbit had the highest launch failure rate between 2015 and 2024?")
    sql = " ".join(plan.sql.split())
    assert "GROUP BY orbit ORDER BY percent DESC" in sql and "WHERE percent = (SELECT MAX(percent)" in sql
    assert plan.caveat is None


def test_these_few_points_back_and_is_not_how_many(planner):
    """The eighteenth re-walk's C20: 这几款里哪款航程最长？ read alone, 几 as "how many": a count of 1, ok."""
    plan = _after(planner, "装有4台发动机的飞机有哪些？", "这几款里哪款航程最长？")
    assert "engines = 4" in plan.sql and "MAX(range_km)" in plan.sql and "COUNT" not in plan.sql
    assert plan.caveat is None
    assert "COUNT(*)" in planner.plan("这几年发射了多少次？").sql  # 这几年 is a time, still named
