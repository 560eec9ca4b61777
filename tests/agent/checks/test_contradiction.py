"""Conditions no row can meet together (agent.checks.contradiction): read only where sure."""

import pytest

from agent.checks.contradiction import contradicting_conditions


@pytest.mark.parametrize("sql, found", [
    ("SELECT COUNT(*) FROM aircraft WHERE engines = 1 AND engines = 2", ["engines = 1", "engines = 2"]),
    ("SELECT m FROM launches AS l WHERE l.launch_date < '2010-01-01' AND strftime('%Y', l.launch_date) = '2025'",
     ["l.launch_date < '2010-01-01'", "STRFTIME('%Y', l.launch_date) = '2025'"]),
    ("SELECT m FROM launches WHERE launch_date >= '2021-01-01' AND launch_date LIKE '2020%'",
     ["launch_date >= '2021-01-01'", "launch_date LIKE '2020%'"]),
    ("SELECT m FROM launches WHERE substr(launch_date, 1, 4) = '2019' AND launch_date >= '2020-01-01'",
     ["SUBSTRING(launch_date, 1, 4) = '2019'", "launch_date >= '2020-01-01'"]),
    ("SELECT m FROM t WHERE a IN ('x', 'y') AND a = 'z'", ["a IN ('x', 'y')", "a = 'z'"]),
    ("SELECT m FROM t WHERE a > 5 AND a < 5", ["a > 5", "a < 5"]),
    ("SELECT m FROM t WHERE a BETWEEN 1 AND 3 AND 3 < a", ["a BETWEEN 1 AND 3", "3 < a"]),
    # a subquery's own WHERE is read too
    ("SELECT m FROM t WHERE b IN (SELECT b FROM u WHERE c = 1 AND c = 2)", ["c = 1", "c = 2"]),
    # a key kept out of the keys another table refers by, joined to those very rows (the 36th re-walk's E10:
    # "Which orbits has Electron never been launched to?")
    ("SELECT DISTINCT launches.orbit FROM launch_vehicles JOIN launches ON launches.vehicle_id = launch_vehicles.id "
     "WHERE launch_vehicles.name = 'Electron' AND launch_vehicles.id NOT IN (SELECT launches.vehicle_id FROM launches "
     "WHERE launches.vehicle_id IS NOT NULL)",
     ["NOT launch_vehicles.id IN (SELECT launches.vehicle_id FROM launches WHERE NOT launches.vehicle_id IS NULL)"]),
    ("SELECT DISTINCT T1.orbit FROM launch_vehicles AS T2 JOIN launches AS T1 ON T1.vehicle_id = T2.id "
     "WHERE T2.id NOT IN (SELECT vehicle_id FROM launches)", ["NOT T2.id IN (SELECT vehicle_id FROM launches)"]),
])
def test_conditions_no_row_can_meet_together_are_found(sql, found):
    assert contradicting_conditions(sql, dialect="sqlite") == found


@pytest.mark.parametrize("sql", [
    # the rows with none: no join to them, a LEFT one, or a subquery that keeps some of them
    "SELECT v.name FROM launch_vehicles AS v WHERE v.id NOT IN (SELECT vehicle_id FROM launches)",
    "SELECT v.name FROM launch_vehicles AS v LEFT JOIN launches AS l ON l.vehicle_id = v.id "
    "WHERE v.id NOT IN (SELECT vehicle_id FROM launches)",
    "SELECT l.orbit FROM launch_vehicles AS v JOIN launches AS l ON l.vehicle_id = v.id "
    "WHERE v.id NOT IN (SELECT vehicle_id FROM launches WHERE orbit = 'GEO')",
    "SELECT m FROM t WHERE a = 1 OR a = 2",  # either: under OR
    "SELECT m FROM t WHERE NOT (a = 1 AND a = 2)",
    "SELECT m FROM t WHERE a IN ('x', 'y') AND a = 'y'",
    "SELECT m FROM t WHERE a >= 5 AND a <= 5",
    "SELECT m FROM launches AS l WHERE l.launch_date < '2026-01-01' AND strftime('%Y', l.launch_date) = '2025'",
    "SELECT m FROM t WHERE a = '2015' AND a = 2015",  # a number and a text: SQLite's types, not sure
    "SELECT m FROM t AS x JOIN t AS y ON x.id = y.parent WHERE x.a = 1 AND y.a = 2",  # two rows of one table
    "SELECT m FROM t WHERE a LIKE '%x' AND a = 'y'",  # not a prefix
    "SELEC m FROM (",
])
def test_conditions_that_can_hold_together_or_are_unsure_are_left_alone(sql):
    assert contradicting_conditions(sql, dialect="sqlite") == []


def test_no_spider_gold_query_has_contradicting_conditions(spider_dev):
    questions, _ = spider_dev
    assert [q["query"] for q in questions if contradicting_conditions(q["query"], dialect="sqlite")] == []
