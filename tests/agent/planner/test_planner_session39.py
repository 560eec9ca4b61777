"""Read after the 89th walk (issue 38): what a follow-up inherits of an answer that was not complete.

An answer that left out only how to group, total or order its rows ("各", "each", "average") rests on the rows the
question asked about; a follow-up asking a figure of its own of those rows keeps no part of that gap, and is not
told it does ("This builds on the previous answer, which was not complete": five of the walk's nine right answers
with a caveat). A follow-up that keeps the previous figure ("那2019年呢？") still inherits it, and so does one after
an answer that left out a question of its own ("How many …, and which rocket carried the most of them?").
"""

from __future__ import annotations

import pytest

from tests.agent.planner.test_planner_followup import planner, result, sample, talk  # noqa: F401 (fixtures)
from tests.agent.planner.test_planner_leaning import INCOMPLETE, ask, askdb  # noqa: F401 (fixtures)

INCOMPLETE_ZH = "这个回答建立在上一个回答之上，而上一个回答并不完整"
FALCON_SITES = "2014年到2018年，猎鹰9号在各发射场的发射次数分别是多少？"
FALCON_LAUNCHES = ("SELECT COUNT(*) FROM launches l JOIN launch_vehicles v ON l.vehicle_id = v.id WHERE v.name = 'Falcon 9' "
                   "AND l.launch_date >= '{start}' AND l.launch_date < '{end}'")


def test_a_count_of_its_own_after_an_answer_without_its_grouping_is_ok(askdb, sample_db_path):
    first, thread = ask(askdb, FALCON_SITES)
    assert not first.ok and "“各”" in first.data.caveat
    answer, _ = ask(askdb, "其中有几次是把载荷送往地球同步转移轨道的？", thread)
    gold = sample(sample_db_path, FALCON_LAUNCHES.format(start="2014-01-01", end="2019-01-01") + " AND l.orbit = 'GTO'")
    assert answer.ok and answer.data.caveat is None and answer.data.rows == [list(r) for r in gold]


def test_a_follow_up_keeping_the_figure_of_an_answer_without_its_grouping_inherits_the_gap(talk):
    talk.ask(FALCON_SITES)
    _, answer = talk.ask("那2019年呢？")
    assert answer["caveat"].startswith(INCOMPLETE_ZH)


def test_a_list_of_its_own_after_an_answer_without_its_grouping_is_ok(askdb, sample_db_path):
    before, thread = ask(askdb, "Which manufacturers build helicopters, and how many helicopters has each built in total?")
    answer, _ = ask(askdb, "List those helicopters with their ranges, longest first.", thread)
    gold = sample(sample_db_path, "SELECT model, range_km FROM aircraft WHERE role = 'helicopter' ORDER BY range_km DESC")
    assert not before.ok and "'each'" in before.data.caveat
    assert answer.ok and answer.data.caveat is None and answer.data.rows == [list(r) for r in gold]


def test_after_an_answer_that_left_out_a_question_of_its_own_the_follow_up_inherits_the_gap(talk):
    """"How many" beside a ranking is a question of its own: "them" may mean the rows it counted, not the pick."""
    talk.ask("How many Argentine-operated satellites have been launched since 2020, and which rocket carried the most "
             "of them?")
    _, answer = talk.ask("How many of them went to LEO?")
    assert answer["caveat"].startswith(INCOMPLETE)


@pytest.mark.parametrize("first, then", [
    ("Which manufacturers build helicopters, and how many helicopters has each built in total?",
     "What about the average range?"),
    (FALCON_SITES, "那载荷的平均质量呢？"),
])
def test_asking_again_what_an_answer_without_its_grouping_answered_inherits_the_gap(askdb, first, then):
    """"What about the average range?" asks again, per manufacturer, what the answer before gave as one total (SParC
    dev 53: "What about the average age?" after "For each of those, what is the maximum age?", which kept no
    grouping): no word points at its rows."""
    before, thread = ask(askdb, first)
    answer, _ = ask(askdb, then, thread)
    assert not before.ok and not answer.ok and answer.data.caveat.startswith((INCOMPLETE, INCOMPLETE_ZH))


def test_a_figure_for_each_of_the_values_listed_before(talk, sample_db_path):
    """"For each of those, what is the maximum mass?" after the different purposes: the maximum per purpose (it gave
    one maximum over all, 'For each' named)."""
    talk.ask("What are the different purposes of payloads?")
    _, answer = talk.ask("For each of those, what is the maximum mass?")
    gold = sample(sample_db_path, "SELECT purpose, MAX(mass_kg) FROM payloads GROUP BY purpose")
    assert "caveat" not in answer and sorted(result(talk)) == sorted(gold)


@pytest.mark.parametrize("question, gold", [
    ("Which aircraft fly faster than 2000 km/h?", "SELECT model FROM aircraft WHERE max_speed_kmh > 2000"),
    ("Which aircraft can fly faster than 2000 km/h?", "SELECT model FROM aircraft WHERE max_speed_kmh > 2000"),
    ("Which manufacturers' aircraft fly faster than 2000 km/h?",
     "SELECT DISTINCT m.name FROM manufacturers m JOIN aircraft a ON a.manufacturer_id = m.id WHERE a.max_speed_kmh > 2000"),
    ("Which rockets fly from Baikonur?",
     "SELECT DISTINCT v.name FROM launch_vehicles v JOIN launches l ON l.vehicle_id = v.id JOIN launch_sites s "
     "ON l.site_id = s.id WHERE s.name = 'Baikonur Cosmodrome'"),
])
def test_what_the_rows_do_is_no_table_of_theirs(talk, sample_db_path, question, gold):
    """"fly" names the launches (the sample's vocabulary), but aircraft have none: "Which aircraft fly faster …?"
    listed the missions of rockets built by aircraft makers, as if right; rockets fly from a site by their launches."""
    _, answer = talk.ask(question)
    assert "caveat" not in answer and sorted(result(talk)) == sorted(sample(sample_db_path, gold))


# -- the 90th walk ------------------------------------------------------------------------------

def test_that_sites_launches_in_those_months_keep_the_pick_and_the_period(talk, sample_db_path):
    """"that site's" is the site the ranking picked, "in those months" the period before, not one group per month (it
    gave the busiest month's launches at every site, as if right)."""
    talk.ask("Between May and September 2025, which launch site hosted the most Long March launches?")
    _, answer = talk.ask("How many of that site's launches in those months went to sun-synchronous orbit?")
    gold = sample(sample_db_path, "SELECT COUNT(*) FROM launches l JOIN launch_sites s ON l.site_id = s.id "
                                  "JOIN launch_vehicles v ON l.vehicle_id = v.id JOIN vehicle_families f ON v.family_id = f.id "
                                  "WHERE f.name = 'Long March' AND l.launch_date BETWEEN '2025-05-01' AND '2025-09-30' "
                                  "AND s.name = 'Jiuquan Satellite Launch Center' AND l.orbit = 'SSO'")
    assert "caveat" not in answer and result(talk) == gold


@pytest.mark.parametrize("question", ["2024年第四季度，哪家制造商的载荷发射数量排第一？",
                                      "2024年第四季度，哪家制造商的载荷发射数量最多？"])
def test_the_number_of_payloads_launched_ranks_the_payloads_makers(talk, sample_db_path, question):
    """排第一 is the most (its 一 was read as the number one, declined); 载荷发射数量 counts the payloads launched, by
    their own maker (it counted launches by the rockets' maker, as if right)."""
    _, answer = talk.ask(question)
    gold = sample(sample_db_path, "SELECT m.name_zh, COUNT(*) FROM payloads p JOIN launches l ON p.launch_id = l.id "
                                  "JOIN manufacturers m ON p.manufacturer_id = m.id WHERE l.launch_date BETWEEN "
                                  "'2024-10-01' AND '2024-12-31' GROUP BY m.id ORDER BY 2 DESC LIMIT 1")
    assert "caveat" not in answer and result(talk) == gold


def test_a_rockets_launches_are_still_counted_as_launches(talk, sample_db_path):
    _, answer = talk.ask("2024年火箭发射数量最多的是哪个国家？")
    assert "caveat" not in answer and "FROM launches" in answer["sql"]


@pytest.mark.parametrize("question", [
    "Among four-engine aircraft, which one has the most units built, and which company made it?",
    "四发飞机里，产量最高的是哪款？由哪家公司制造？",
])
def test_which_company_made_the_one_picked_is_shown_beside_it(talk, sample_db_path, question):
    """"…, and which company made it?": the maker beside the aircraft (it was left out, as if right); 由哪家公司制造？
    in a clause of its own is not what the question is about (the maker's row alone was shown, as if right)."""
    _, answer = talk.ask(question)
    names = ("a.name_zh", "m.name_zh") if "飞机" in question else ("a.model", "m.name")
    gold = sample(sample_db_path, f"SELECT {names[0]}, a.units_built, {names[1]} FROM aircraft a JOIN manufacturers m "
                                  "ON a.manufacturer_id = m.id WHERE a.engines = 4 ORDER BY a.units_built DESC LIMIT 1")
    assert "caveat" not in answer and result(talk) == gold


@pytest.mark.parametrize("question", ["哪些飞机制造商既造战斗机又造运输机？", "2025年发射的载荷中，用可重复使用火箭发射的占百分之几？"])
def test_verbs_the_query_reads_raise_no_caveat(talk, question):
    """造 before the makers' rows, 用 before the rockets' flag: what the joins and the condition say."""
    _, answer = talk.ask(question)
    assert "caveat" not in answer


def test_a_series_numbered_after_a_hyphen_is_a_family_of_names(talk, sample_db_path):
    """"Jilin-1" begins 'Jilin-1 Gaofen 03D' and 'Jilin-1 1' (its 1 was read as a number, declined)."""
    _, answer = talk.ask("How many Jilin-1 satellites were launched before 2020?")
    gold = sample(sample_db_path, "SELECT COUNT(*) FROM payloads p JOIN launches l ON p.launch_id = l.id "
                                  "WHERE p.name LIKE 'Jilin-1 %' AND l.launch_date < '2020-01-01'")
    assert "caveat" not in answer and result(talk) == gold


# -- the 91st walk ------------------------------------------------------------------------------

def test_a_decade_of_rows_counted_through_others_is_the_dates_on_the_way(talk, sample_db_path):
    """"in the 2010s" of rockets counted by their payloads' operator countries: when those payloads were launched,
    not the year a launch site, nearer the countries, opened (no rows, as if right)."""
    _, answer = talk.ask("Which rockets carried payloads for at least five different operator countries in the 2010s?")
    gold = sample(sample_db_path, "SELECT v.name, COUNT(DISTINCT p.operator_country_id) FROM payloads p JOIN launches l "
                                  "ON p.launch_id = l.id JOIN launch_vehicles v ON l.vehicle_id = v.id WHERE l.launch_date "
                                  "BETWEEN '2010-01-01' AND '2019-12-31' GROUP BY v.id HAVING COUNT(DISTINCT "
                                  "p.operator_country_id) >= 5")
    assert "caveat" not in answer and sorted(result(talk)) == sorted(gold)


@pytest.mark.parametrize("first, then", [
    ("Which rockets carried payloads for at least five different operator countries in the 2010s?",
     "How many payloads did each of them carry during that decade?"),
    ("Which rockets launched more than 50 times?", "How many payloads did they carry?"),
])
def test_a_count_of_other_rows_does_not_keep_the_groups_by_the_old_count_in_silence(talk, first, then):
    """"them" are the groups whose count of the rows before met the condition; the same HAVING over the rows now
    counted keeps other groups (37 rockets with five payloads, as if right): not kept, and said."""
    talk.ask(first)
    _, answer = talk.ask(then)
    assert "the previous answer's count" in answer["caveat"]


def test_a_share_of_those_rows_named_again_is_one_share(talk, sample_db_path):
    """"What share of those Intelsat satellites lifted off from Guiana?" after the rockets that carried them, each with
    its count: one share of all of them (one per rocket, 100% and 0%, as if right)."""
    talk.ask("Which rockets launched Intelsat satellites between 2005 and 2014, and how many did each carry?")
    _, answer = talk.ask("What share of those Intelsat satellites lifted off from Guiana Space Centre?")
    gold = sample(sample_db_path, "SELECT ROUND(100.0 * SUM(s.name = 'Guiana Space Centre') / COUNT(*), 2) FROM payloads p "
                                  "JOIN launches l ON p.launch_id = l.id JOIN launch_sites s ON l.site_id = s.id "
                                  "WHERE p.name LIKE 'Intelsat%' AND l.launch_date BETWEEN '2005-01-01' AND '2014-12-31'")
    rows = result(talk)
    assert "caveat" not in answer and len(rows) == 1 and round(rows[0][0], 2) == gold[0][0]


@pytest.mark.parametrize("first, then", [
    ("How many Gonets-M satellites were launched before 2015, and on how many separate launches?", None),
    ("Which suppliers provide parts for business jets?", "Which of those suppliers are based in Europe?"),
])
def test_separate_and_based_raise_no_caveat(talk, first, then):
    _, answer = talk.ask(first)
    if then is not None:
        _, answer = talk.ask(then)
    assert "caveat" not in answer


@pytest.mark.parametrize("first, then, gold", [
    ("2023年，酒泉卫星发射中心的发射按火箭制造商分各有多少次？", "蓝箭航天在酒泉的那几次发射，用的是什么火箭？成功了吗？",
     "SELECT DISTINCT v.name_zh, l.outcome FROM launches l JOIN launch_vehicles v ON l.vehicle_id = v.id JOIN launch_sites s "
     "ON l.site_id = s.id JOIN manufacturers m ON v.manufacturer_id = m.id WHERE l.launch_date LIKE '2023%' "
     "AND s.name_zh = '酒泉卫星发射中心' AND m.name_zh = '蓝箭航天'"),
    ("Which rockets did Rocket Lab launch from Mahia in 2024, and were they successful?", None,
     "SELECT DISTINCT v.name, l.outcome FROM launches l JOIN launch_vehicles v ON l.vehicle_id = v.id JOIN launch_sites s "
     "ON l.site_id = s.id WHERE l.launch_date LIKE '2024%' AND s.name = 'Rocket Lab Launch Complex 1 (Mahia)'"),
])
def test_whether_they_succeeded_is_shown_not_a_condition(talk, sample_db_path, first, then, gold):
    """成功了吗？ in a clause of its own asks whether the rows listed succeeded: their outcome shown beside them (only
    the successful ones were listed, as if right)."""
    _, answer = talk.ask(first)
    if then is not None:
        _, answer = talk.ask(then)
    assert "caveat" not in answer and sorted(result(talk)) == sorted(sample(sample_db_path, gold))


# -- the 92nd walk ------------------------------------------------------------------------------

def test_each_of_the_listed_rockets_launched_is_one_row_per_rocket(talk, sample_db_path):
    """各发射了几颗: 发射 after 各 is what each listed rocket did, not a grouping by launches (27 rows of 1, no rocket
    named, as if right)."""
    _, answer = talk.ask("2015年以来发射的实践系列卫星，长征三号乙和长征七号甲各发射了几颗？")
    gold = sample(sample_db_path, "SELECT v.name_zh, COUNT(*) FROM payloads p JOIN launches l ON p.launch_id = l.id "
                                  "JOIN launch_vehicles v ON l.vehicle_id = v.id WHERE p.name_zh LIKE '实践%' AND "
                                  "l.launch_date >= '2015-01-01' AND v.name_zh IN ('长征三号乙', '长征七号甲') GROUP BY v.id")
    assert "caveat" not in answer and sorted(result(talk)) == sorted(gold)


@pytest.mark.parametrize("first, then", [
    ("2020年以来高分系列卫星发射了多少颗？", "它们当中从酒泉发射的占几成？"),
    ("2025年上半年，天仪研究院造的卫星发射了多少颗？其中有几颗是搭长征系列火箭上天的？", None),
])
def test_among_them_and_riding_up_raise_no_caveat(talk, first, then):
    _, answer = talk.ask(first)
    if then is not None:
        _, answer = talk.ask(then)
    assert "caveat" not in answer


def test_using_which_rocket_raises_no_caveat_when_the_rocket_is_shown(talk):
    _, answer = talk.ask("近两年发射的天链中继卫星有哪些？分别是哪天、用什么火箭发射的？")
    assert "“用”" not in (answer.get("caveat") or "") and "name_zh" in answer["sql"]


def test_a_count_of_its_own_after_an_answer_without_the_column_asked_after_which_is_ok(askdb, sample_db_path):
    """分别送往哪些轨道？ asks what to show of the launches counted: 其中去太阳同步轨道的那几次… builds on no gap (the
    inherited caveat, as if this count depended on the orbits left out)."""
    first, thread = ask(askdb, "2023年到2025年，长征六号甲一共发射了几次？分别送往哪些轨道？")
    answer, _ = ask(askdb, "其中去太阳同步轨道的那几次，一共送上去多少个载荷？", thread)
    gold = sample(sample_db_path, "SELECT COUNT(*) FROM payloads p JOIN launches l ON p.launch_id = l.id JOIN "
                                  "launch_vehicles v ON l.vehicle_id = v.id WHERE v.name_zh = '长征六号甲' AND l.orbit = 'SSO' "
                                  "AND l.launch_date BETWEEN '2023-01-01' AND '2025-12-31'")
    assert not first.ok and answer.ok and answer.data.rows == [list(r) for r in gold]
