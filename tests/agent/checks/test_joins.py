"""A join on a key that refers to another table (agent.checks.joins.off_key_join): read from the declared keys."""

from __future__ import annotations

from collections import namedtuple

import pytest

from agent.checks.joins import joined_through_a_hub, off_key_join

Column = namedtuple("Column", "name type primary_key", defaults=("INTEGER", False))
Table = namedtuple("Table", "name columns foreign_keys", defaults=((),))
ForeignKey = namedtuple("ForeignKey", "column ref_table ref_column")

# BIRD's student club, in short: an expense refers to a budget, a budget to an event.
CLUB = [Table("event", [Column("event_id", "TEXT", True), Column("event_name", "TEXT")]),
        Table("budget", [Column("budget_id", "TEXT", True), Column("link_to_event", "TEXT"), Column("category", "TEXT")],
              [ForeignKey("link_to_event", "event", "event_id")]),
        Table("expense", [Column("expense_id", "TEXT", True), Column("link_to_budget", "TEXT"), Column("cost", "REAL"),
                          Column("link_to_member", "TEXT")],
              [ForeignKey("link_to_budget", "budget", "budget_id"), ForeignKey("link_to_member", "member", "member_id")]),
        Table("member", [Column("member_id", "TEXT", True)]),
        Table("attendance", [Column("link_to_event", "TEXT"), Column("link_to_member", "TEXT")],
              [ForeignKey("link_to_event", "event", "event_id"), ForeignKey("link_to_member", "member", "member_id")])]


@pytest.mark.parametrize("sql, found", [
    # BIRD mini-dev 1401 at 2e54941 (the development sample): an expense's budget key equated with an event's key.
    ("SELECT T1.cost FROM expense AS T1 JOIN event AS T2 ON T1.link_to_budget = T2.event_id "
     "WHERE T2.event_name = 'September Speaker'", ("expense.link_to_budget", "event.event_id", "budget")),
    ("SELECT e.cost FROM event AS v JOIN expense AS e ON v.event_id = e.link_to_budget",
     ("expense.link_to_budget", "event.event_id", "budget")),
])
def test_a_key_equated_with_another_table_s_column_is_found(sql, found):
    assert off_key_join(sql, CLUB, dialect="sqlite") == found


@pytest.mark.parametrize("sql", [
    "SELECT e.cost FROM expense AS e JOIN budget AS b ON e.link_to_budget = b.budget_id "
    "JOIN event AS v ON b.link_to_event = v.event_id",  # each key to the table it refers to
    "SELECT 1 FROM expense AS e JOIN attendance AS a ON a.link_to_member = e.link_to_member",  # siblings: one member
    "SELECT 1 FROM event AS v JOIN budget AS b ON b.link_to_event = v.event_id",
])
def test_joins_as_the_keys_declare_them_are_left_alone(sql):
    assert off_key_join(sql, CLUB, dialect="sqlite") is None


def test_no_spider_gold_query_joins_a_key_to_another_table(spider_dev):
    questions, catalogues = spider_dev
    assert [q["query"] for q in questions if q["db_id"] in catalogues
            and off_key_join(q["query"], catalogues[q["db_id"]], dialect="sqlite")] == []


@pytest.mark.parametrize("sql", [
    # The 44th re-walk's E12 and Z19 (issue 38), right answers the page said pair unrelated rows: each payload reaches
    # one country through its parents (its rocket's maker's; its own maker's), whatever key to a country it also holds.
    "SELECT AVG(payloads.mass_kg) FROM payloads JOIN launches ON payloads.launch_id = launches.id "
    "JOIN launch_vehicles ON launches.vehicle_id = launch_vehicles.id "
    "JOIN manufacturers ON launch_vehicles.manufacturer_id = manufacturers.id "
    "JOIN countries ON manufacturers.country_id = countries.id WHERE countries.name = 'India'",
    "SELECT payloads.purpose, COUNT(*) FROM payloads JOIN manufacturers ON payloads.manufacturer_id = manufacturers.id "
    "JOIN countries ON manufacturers.country_id = countries.id WHERE countries.name_zh = '中国' GROUP BY 1",
])
def test_a_way_up_through_parents_is_no_hub(sql, sample_catalogue):
    assert joined_through_a_hub(sql, sample_catalogue, dialect="sqlite") is None


def test_a_way_up_and_down_through_a_shared_parent_is_a_hub(sample_catalogue):
    sql = ("SELECT v.name_zh, COUNT(*) FROM launches AS l JOIN launch_sites AS s ON l.site_id = s.id "
           "JOIN countries AS c ON s.country_id = c.id JOIN manufacturers AS m ON m.country_id = c.id "
           "JOIN launch_vehicles AS v ON v.manufacturer_id = m.id GROUP BY v.name_zh")
    assert joined_through_a_hub(sql, sample_catalogue, dialect="sqlite") == (
        "launch_vehicles", "launches", "manufacturers, countries, launch_sites")


@pytest.mark.parametrize("sql", [
    # The 46th re-walk's E6 and Z14 (issue 38): down to the launches and up again, each launch's own site and country.
    "SELECT COUNT(*) FROM payloads JOIN launches ON payloads.launch_id = launches.id JOIN countries ON "
    "payloads.operator_country_id = countries.id JOIN launch_sites ON launches.site_id = launch_sites.id "
    "WHERE countries.name = 'Russia' AND launch_sites.name = 'Plesetsk Cosmodrome'",
    "SELECT launch_sites.name_zh, COUNT(*) FROM launches JOIN launch_sites ON launches.site_id = launch_sites.id "
    "JOIN launch_vehicles ON launches.vehicle_id = launch_vehicles.id JOIN manufacturers ON "
    "launch_vehicles.manufacturer_id = manufacturers.id JOIN countries ON manufacturers.country_id = countries.id "
    "WHERE countries.name_zh = '俄罗斯' GROUP BY launch_sites.id",
])
def test_a_way_down_to_shared_rows_and_up_is_no_hub(sql, sample_catalogue):
    assert joined_through_a_hub(sql, sample_catalogue, dialect="sqlite") is None
