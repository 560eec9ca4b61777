"""What the fiftieth re-walk found (issue 38), read right now:

- "Which purpose accounted for most of that mass?": "most of the/that <measure>" ranks the groups by their total of
  it (the purpose of the one heaviest payload was given, right by chance; read on its own it counted payloads).
"""

from __future__ import annotations

import pytest

from tests.agent.planner.test_planner_followup import planner, sample  # noqa: F401 (fixtures)
from tests.agent.planner.test_planner_within_groups import _rows


def test_most_of_a_quantity_ranks_the_groups_by_their_total(planner, sample_db_path):
    plan = planner.plan("Which purpose accounted for most of the payload mass launched in 2024?")
    gold = ("SELECT p.purpose FROM payloads p JOIN launches l ON l.id = p.launch_id WHERE l.launch_date LIKE '2024%' "
            "GROUP BY p.purpose ORDER BY SUM(p.mass_kg) DESC LIMIT 1")
    assert plan.caveat is None and _rows(planner, plan.sql)[0][0] == sample(sample_db_path, gold)[0][0]
    assert "COUNT(*)" in planner.plan("Which rockets carried most of the payloads in 2024?").sql  # rows: counted


def test_the_sample_databases_own_words_for_values(planner, sample_db_path):
    """E12, Z8, Z10: "medium Earth orbit", 失效 (a payload lost in orbit), 起落架 (landing gear) were words not used."""
    plan = planner.plan("List the payloads launched into medium Earth orbit from February through September 2022.")
    assert plan.caveat is None and "orbit = 'MEO'" in plan.sql
    plan = planner.plan("2010年代发射的导航卫星里，已经退役或失效的有多少颗？")
    assert plan.caveat is None and _rows(planner, plan.sql) == [(22,)]
    plan = planner.plan("起落架单价超过400万美元的飞机有哪些？")
    assert plan.caveat is None and len(_rows(planner, plan.sql)) == 3


@pytest.mark.parametrize("question", ["2015年至2019年，长征三号乙一共把多少吨有效载荷送进了地球同步转移轨道？",
                                      "How many tonnes of payload did the Long March 3B send to GTO from 2015 to 2019?"])
def test_how_many_tonnes_of_payload_is_their_mass_in_tonnes(planner, sample_db_path, question):
    """Z5: 多少吨有效载荷 counted the payloads (吨 and 送进 named): a unit a column converts to, after "how many", asks for
    that column's total in it, as "how many kilograms of payload" did."""
    plan = planner.plan(question)
    gold = ("SELECT ROUND(SUM(p.mass_kg) / 1000.0, 3) FROM payloads p JOIN launches l ON l.id = p.launch_id JOIN "
            "launch_vehicles v ON v.id = l.vehicle_id WHERE l.launch_date BETWEEN '2015-01-01' AND '2019-12-31' AND "
            "v.name = 'Long March 3B' AND p.orbit = 'GTO'")
    assert plan.caveat is None and _rows(planner, plan.sql) == sample(sample_db_path, gold)
