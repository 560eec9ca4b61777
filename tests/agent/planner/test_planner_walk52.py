"""What the fifty-second re-walk found (issue 38; 20 right, none right with a caveat, 3 confidently wrong), read now:

- E8 "Which quarter had the highest success rate?" after launches per quarter: the rates were computed but the
  quarters ranked by the count kept from before (the one with the lowest rate was shown as the answer).
- Z14 每年发往地球同步转移轨道的分别占多少比例？ after 西昌's launches per year: read on its own, every site's share for
  every year (分别占, like 各占, points at the groups before).
- Z17 哪些运营国家的载荷全部发射成功？: 全部 before a verb and a value kept the rows with the value (a filter), so every
  country with one success was listed; the groups none of whose rows lacks it are meant.
"""

from __future__ import annotations

from tests.agent.planner.test_planner_followup import planner, result, sample, talk  # noqa: F401 (fixtures)
from tests.agent.planner.test_planner_within_groups import _rows


def test_a_follow_up_ranking_by_the_rate_it_asks_for(talk, sample_db_path):
    talk.ask("How many launches were there per quarter in 2024?")
    _, answer = talk.ask("Which quarter had the highest success rate?")
    assert "caveat" not in answer and [row[1] for row in result(talk)] == [98.51]
    _, answer = talk.ask("And the lowest?")
    assert [row[1] for row in result(talk)] == [97.26]


def test_each_ones_share_points_at_the_groups_before(talk, sample_db_path):
    talk.ask("2021年至2024年，西昌卫星发射中心每年发射了多少次？")
    _, answer = talk.ask("每年发往地球同步转移轨道的分别占多少比例？")
    gold = ("SELECT substr(l.launch_date, 1, 4), ROUND(100.0 * SUM(l.orbit = 'GTO') / COUNT(*), 2) FROM launches l "
            "JOIN launch_sites s ON s.id = l.site_id WHERE s.name = 'Xichang Satellite Launch Center' "
            "AND l.launch_date BETWEEN '2021-01-01' AND '2024-12-31' GROUP BY 1")
    assert "caveat" not in answer and [r[:2] for r in result(talk)] == sample(sample_db_path, gold)


def test_groups_all_of_whose_rows_have_a_value(planner, sample_db_path):
    plan = planner.plan("2023年发射的有效载荷中，哪些运营国家的载荷全部发射成功？")
    gold = ("SELECT c.name_zh FROM payloads p JOIN launches l ON l.id = p.launch_id JOIN countries c "
            "ON c.id = p.operator_country_id WHERE l.launch_date LIKE '2023%' GROUP BY c.id "
            "HAVING SUM(l.outcome <> 'success') = 0")
    assert plan.caveat is None and _rows(planner, plan.sql, slice(0, 1)) == sorted(sample(sample_db_path, gold))
    # whether all of them did is a yes or no the groups that did do not say: still named
    assert "都" in planner.plan("星舰2024年的试飞都成功了吗？").caveat


def test_a_count_by_a_measure_word_keeps_the_groups(planner, sample_db_path):
    """Z18 (flagged: 超过12 not read): 12颗 counts the satellites of each month."""
    plan = planner.plan("2024年下半年，哪几个月发射的通信卫星超过了12颗？")
    gold = ("SELECT substr(l.launch_date, 1, 7), COUNT(*) FROM payloads p JOIN launches l ON l.id = p.launch_id "
            "WHERE p.purpose = 'communications' AND l.launch_date BETWEEN '2024-07-01' AND '2024-12-31' GROUP BY 1 "
            "HAVING COUNT(*) > 12")
    assert plan.caveat is None and _rows(planner, plan.sql) == sorted(sample(sample_db_path, gold))
    # 机型 is what the makers make, not rows named before the number: still named, never another table counted
    assert planner.plan("哪些制造商生产的机型超过5款？").caveat is not None


def test_which_of_a_list_counted_more_than_n_times(talk, sample_db_path):
    """E4 (flagged: 'more than 10' not read): each listed site, with its launches of 2025 counted."""
    talk.ask("List the launch sites that opened after 2000.")
    _, answer = talk.ask("Which of them hosted more than 10 launches in 2025?")
    gold = ("SELECT s.name, COUNT(*) FROM launches l JOIN launch_sites s ON s.id = l.site_id WHERE s.opened_year > 2000 "
            "AND l.launch_date LIKE '2025%' GROUP BY s.id HAVING COUNT(*) > 10")
    assert "caveat" not in answer and sorted(result(talk)) == sorted(sample(sample_db_path, gold))


def test_each_of_the_last_n_calendar_years(planner, sample_db_path):
    """E12 (flagged: every word of the period named): whole years before this one (today 2026-11-24), each."""
    plan = planner.plan("How many launches were there in each of the last five calendar years?")
    gold = ("SELECT substr(launch_date, 1, 4), COUNT(*) FROM launches WHERE launch_date BETWEEN '2021-01-01' "
            "AND '2025-12-31' GROUP BY 1")
    assert plan.caveat is None and _rows(planner, plan.sql) == sorted(sample(sample_db_path, gold))


_NONE_FAILED = ("SELECT orbit FROM launches WHERE launch_date BETWEEN '2010-01-01' AND '2019-12-31' GROUP BY orbit "
                "HAVING SUM(outcome = 'failure') = 0")


def test_the_groups_of_those_none_of_whose_rows_has_a_value(talk, sample_db_path):
    """E18 (flagged: the orbit of each launch that did not fail, 825 rows): the orbits with no failure at all."""
    talk.ask("For each orbit, what was the launch success rate between 2010 and 2019?")
    _, answer = talk.ask("Which of those orbits had no failures at all?")
    assert "caveat" not in answer and [r[:1] for r in result(talk)] == sample(sample_db_path, _NONE_FAILED)


def test_which_of_the_values_listed_had_none(talk, sample_db_path):
    """After a list of a column's values, "which of them" is still those values (not the rows' names)."""
    talk.ask("Which orbits had launches in 2024?")
    _, answer = talk.ask("Which of them had no failures?")
    gold = ("SELECT orbit FROM launches WHERE launch_date LIKE '2024%' GROUP BY orbit "
            "HAVING SUM(outcome = 'failure') = 0")
    assert "caveat" not in answer and sorted(r[:1] for r in result(talk)) == sorted(sample(sample_db_path, gold))


def test_values_none_of_whose_rows_has_a_value_or_some_rows_without_it(planner, sample_db_path):
    for question in ("Which orbits had no failed launches between 2010 and 2019?", "哪些轨道在2010年代没有发生过发射失败？"):
        plan = planner.plan(question)
        assert plan.caveat is None and _rows(planner, plan.sql, slice(0, 1)) == sorted(sample(sample_db_path, _NONE_FAILED))
    # "launches that did not fail": the orbits some of whose launches did not, each once
    plan = planner.plan("Which orbits had launches that did not fail in 2024?")
    gold = "SELECT DISTINCT orbit FROM launches WHERE launch_date LIKE '2024%' AND outcome != 'failure'"
    assert plan.caveat is None and _rows(planner, plan.sql) == sorted(sample(sample_db_path, gold))


def test_a_follow_up_of_groups_kept_by_a_condition_keeps_it(talk, sample_db_path):
    """The frame stored between turns keeps the condition of the measure a HAVING compares (it came back as
    `HAVING COUNT(*) = 0`: no group at all)."""
    talk.ask("哪些轨道在2010年代没有发生过发射失败？")
    _, answer = talk.ask("按发射次数从多到少排列呢？")
    assert sorted(r[0] for r in result(talk)) == sorted(r[0] for r in sample(sample_db_path, _NONE_FAILED))


def test_the_total_number_built_sums_the_units(talk, sample_db_path):
    """E14, E15 (flagged: 'built' not read, models counted): each row is a model; how many were built is a column."""
    _, answer = talk.ask("What's the total number of helicopters built by each manufacturer?")
    gold = ("SELECT m.name, SUM(a.units_built) FROM aircraft a JOIN manufacturers m ON m.id = a.manufacturer_id "
            "WHERE a.role = 'helicopter' GROUP BY m.id")
    assert "caveat" not in answer and sorted(result(talk)) == sorted(sample(sample_db_path, gold))
    _, answer = talk.ask("Only count models that first flew after 2005.")
    gold = gold.replace("GROUP BY", "AND a.first_flight_date >= '2006-01-01' GROUP BY")
    assert "caveat" not in answer and sorted(result(talk)) == sorted(sample(sample_db_path, gold))


def test_more_of_one_value_than_of_the_other_for_each_group(planner, sample_db_path):
    """E16, Z19 (flagged: 'more', 比/多 not read): each group's count of either value, kept where the first is more."""
    plan = planner.plan("Which operator countries had more payloads launched in 2025 than in 2024?")
    gold = ("SELECT c.name, SUM(l.launch_date LIKE '2025%'), SUM(l.launch_date LIKE '2024%') FROM payloads p JOIN launches l "
            "ON l.id = p.launch_id JOIN countries c ON c.id = p.operator_country_id GROUP BY c.id "
            "HAVING SUM(l.launch_date LIKE '2025%') > SUM(l.launch_date LIKE '2024%')")
    assert plan.caveat is None and _rows(planner, plan.sql) == sorted(sample(sample_db_path, gold))
    plan = planner.plan("哪些国家运营的通信卫星比对地观测卫星多？")
    gold = ("SELECT c.name_zh FROM payloads p JOIN countries c ON c.id = p.operator_country_id GROUP BY c.id "
            "HAVING SUM(p.purpose = 'communications') > SUM(p.purpose = 'earth observation')")
    assert plan.caveat is None and _rows(planner, plan.sql, slice(0, 1)) == sorted(sample(sample_db_path, gold))
    plan = planner.plan("Which launch sites had fewer launches in 2025 than in 2024?")
    gold = ("SELECT s.name, SUM(l.launch_date LIKE '2025%'), SUM(l.launch_date LIKE '2024%') FROM launches l JOIN "
            "launch_sites s ON s.id = l.site_id GROUP BY s.id HAVING SUM(l.launch_date LIKE '2025%') < "
            "SUM(l.launch_date LIKE '2024%')")
    assert plan.caveat is None and _rows(planner, plan.sql) == sorted(sample(sample_db_path, gold))


def test_more_in_one_period_than_in_another_dates_both_by_the_rows_counted(planner, sample_db_path):
    """E20 (flagged: 'in all of 2020' put on the year the sites opened, 0 rows): both periods date the launches."""
    plan = planner.plan("Which launch sites hosted more launches in the first half of 2025 than in all of 2020?")
    gold = ("SELECT s.name, SUM(l.launch_date BETWEEN '2025-01-01' AND '2025-06-30'), SUM(l.launch_date LIKE '2020%') "
            "FROM launches l JOIN launch_sites s ON s.id = l.site_id GROUP BY s.id "
            "HAVING SUM(l.launch_date BETWEEN '2025-01-01' AND '2025-06-30') > SUM(l.launch_date LIKE '2020%')")
    assert plan.caveat is None and _rows(planner, plan.sql) == sorted(sample(sample_db_path, gold))
