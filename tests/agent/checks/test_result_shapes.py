"""Checks written from the rule-repaired answers of the local model's development journal (4e6e209: Spider dev's
development split, SParC's and BIRD's development samples): tables no condition links (`cross_join`), one column
shown twice (`shown_twice`), a table's rows repeated by a join that only filters (`repeated_rows`), an extreme
taken over rows the query does not keep to (`extreme_subset`), and a subquery compared as one value that gives
several (run_sql refuses it, as PostgreSQL does). Each flags no gold query of Spider dev but the two whose own
join links nothing."""

from __future__ import annotations

import json
import sqlite3
from collections import namedtuple

import pytest

from agent.checks.extremes import extreme_elsewhere
from agent.checks.joins import cross_joined
from agent.checks.rows import repeated_rows, shown_twice
from agent.sources.schema_search import SchemaOptions
from agent.sources.sqlite import SQLiteSource
from agent.sources.subquery_check import one_value_subqueries
from agent.state import AgentState
from agent.tools.registry import ToolContext, parse_arguments, run_tool
from tests.fixtures.spider_dev import spider_database

Column = namedtuple("Column", "name type primary_key", defaults=("INTEGER", False))
Table = namedtuple("Table", "name columns foreign_keys", defaults=((),))
ForeignKey = namedtuple("ForeignKey", "column ref_table ref_column")

NETWORK = [Table("Highschooler", [Column("ID", "int", True), Column("name", "text")]),
           Table("Friend", [Column("student_id", "int"), Column("friend_id", "int")],
                 [ForeignKey("student_id", "Highschooler", "ID"), ForeignKey("friend_id", "Highschooler", "ID")])]
KENNEL = [Table("Owners", [Column("owner_id", "INTEGER", True), Column("zip_code", "TEXT")]),
          Table("Dogs", [Column("dog_id", "INTEGER", True), Column("owner_id", "INTEGER")],
                [ForeignKey("owner_id", "Owners", "owner_id")]),
          Table("Treatments", [Column("treatment_id", "INTEGER", True), Column("dog_id", "INTEGER"),
                               Column("cost_of_treatment", "INTEGER")], [ForeignKey("dog_id", "Dogs", "dog_id")])]
#: Spider dev's own cross joins: professionals paired with every treatment, so "professionals who have done a treatment
#: costing less than the average" lists every professional whenever one treatment is cheap.
GOLD_CROSS_JOINS = 2


@pytest.mark.parametrize("sql, found", [
    # SParC dev 408.3 (development sample): the owner's key equated with itself
    ("SELECT Owners.owner_id, Owners.zip_code FROM Owners JOIN Treatments ON Owners.owner_id = Owners.owner_id "
     "WHERE Treatments.cost_of_treatment > 400", ("owners", "treatments")),
    # no ON at all, and a WHERE that reads one side
    ("SELECT o.zip_code FROM Owners AS o JOIN Treatments AS t WHERE t.cost_of_treatment < 100", ("owners", "treatments")),
    # unqualified columns each of one table, linking nothing across
    ("SELECT zip_code FROM Owners JOIN Treatments ON cost_of_treatment > 100", ("owners", "treatments")),
])
def test_tables_no_condition_links_are_found(sql, found):
    assert cross_joined(sql, KENNEL, dialect="sqlite") == found


@pytest.mark.parametrize("sql", [
    "SELECT o.zip_code FROM Owners AS o JOIN Dogs AS d ON o.owner_id = d.owner_id "
    "JOIN Treatments AS t ON t.dog_id = d.dog_id",
    "SELECT o.zip_code FROM Owners AS o, Dogs AS d WHERE o.owner_id = d.owner_id",  # linked in the WHERE
    "SELECT zip_code FROM Owners JOIN Dogs ON dog_id > treatment_id",  # a column no table of the level has: no judgement
    "SELECT T2.name, T3.name FROM Friend AS T1 JOIN Highschooler AS T2 ON friend_id = T2.ID "
    "JOIN Highschooler AS T3 ON student_id = T3.ID",  # a table twice: left out
])
def test_linked_tables_and_levels_it_cannot_read_are_left_alone(sql):
    catalogue = NETWORK if "Friend" in sql else KENNEL
    assert cross_joined(sql, catalogue, dialect="sqlite") is None


def test_an_unqualified_column_counts_for_the_one_table_that_has_it():
    sql = "SELECT name FROM Friend JOIN Highschooler ON friend_id = ID"
    assert cross_joined(sql, NETWORK, dialect="sqlite") is None


def test_spider_dev_gold_cross_joins_only_where_its_own_join_links_nothing(spider_dev):
    questions, catalogues = spider_dev
    found = [q["query"] for q in questions if q["db_id"] in catalogues
             and cross_joined(q["query"], catalogues[q["db_id"]], dialect="sqlite")]
    assert len(found) == GOLD_CROSS_JOINS
    assert all("FROM Professionals AS T1 JOIN Treatments AS T2 WHERE" in sql for sql in found)


@pytest.mark.parametrize("sql, found", [
    # SParC dev 328.2 (development sample)
    ("SELECT T2.name AS student_name, T2.name AS friend_name FROM Friend AS T1 JOIN Highschooler AS T2 "
     "ON T1.friend_id = T2.ID", ("T2.name", ["student_name", "friend_name"])),
    ("SELECT name AS a, name AS b FROM Highschooler", ("name", ["a", "b"])),
])
def test_one_column_shown_under_two_names_is_found(sql, found):
    assert shown_twice(sql, dialect="sqlite") == found


@pytest.mark.parametrize("sql", [
    "SELECT T1.student_id, T1.name, count(*), T1.student_id FROM Students AS T1",  # a repeat, not two things
    "SELECT T2.name AS student, T3.name AS friend FROM Friend AS T1 JOIN Highschooler AS T2 ON T1.student_id = T2.ID "
    "JOIN Highschooler AS T3 ON T1.friend_id = T3.ID",
    "SELECT name, name FROM Highschooler",
])
def test_repeats_and_two_aliases_of_one_table_are_left_alone(sql):
    assert shown_twice(sql, dialect="sqlite") is None


def test_spider_dev_gold_shows_no_column_under_two_names_and_keeps_to_its_extremes(spider_dev):
    questions, _ = spider_dev
    assert [q["query"] for q in questions if shown_twice(q["query"], dialect="sqlite")] == []
    assert [q["query"] for q in questions if extreme_elsewhere(q["query"], dialect="sqlite")] == []


def test_a_key_repeated_by_a_join_that_only_filters_is_found():
    sql = ("SELECT Owners.owner_id, Owners.zip_code FROM Owners JOIN Dogs ON Dogs.owner_id = Owners.owner_id "
           "WHERE Dogs.dog_id > 2")
    assert repeated_rows(sql, [[1, "93165"], [1, "93165"], [3, "02647"]], KENNEL, dialect="sqlite") == \
        ("Owners", "dogs")


@pytest.mark.parametrize("sql, rows", [
    # the same query, rows told apart
    ("SELECT Owners.owner_id FROM Owners JOIN Dogs ON Dogs.owner_id = Owners.owner_id", [[1], [3]]),
    # DISTINCT, or a column of the other table beside the key: each row is one of the join's
    ("SELECT DISTINCT Owners.owner_id FROM Owners JOIN Dogs ON Dogs.owner_id = Owners.owner_id", [[1], [1]]),
    ("SELECT Owners.owner_id, Dogs.dog_id FROM Owners JOIN Dogs ON Dogs.owner_id = Owners.owner_id", [[1, 2], [1, 2]]),
    # no key shown: the same zip code is two owners' as well as one owner's twice
    ("SELECT Owners.zip_code FROM Owners JOIN Dogs ON Dogs.owner_id = Owners.owner_id", [["93165"], ["93165"]]),
    ("SELECT owner_id FROM Owners", [[1], [1]]),  # no join
])
def test_rows_a_join_does_not_repeat_are_left_alone(sql, rows):
    assert repeated_rows(sql, rows, KENNEL, dialect="sqlite") is None


def test_spider_dev_gold_repeats_no_row_of_a_table_it_lists(spider_dev):
    questions, catalogues = spider_dev
    found = []
    for q in questions:
        path = spider_database(q["db_id"])
        if path is None or q["db_id"] not in catalogues:
            continue
        with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as conn:
            rows = [list(row) for row in conn.execute(q["query"]).fetchmany(2000)]
        if repeated_rows(q["query"], rows, catalogues[q["db_id"]], dialect="sqlite"):
            found.append(q["query"])
    assert found == []


@pytest.mark.parametrize("sql, found", [
    # BIRD mini-dev 736 (development sample): "Who is the dumbest superhero?"
    ("SELECT superhero_name FROM superhero JOIN hero_attribute AS j2 ON j2.hero_id = superhero.id "
     "WHERE j2.attribute_value = (SELECT MIN(attribute_value) FROM hero_attribute JOIN attribute AS j2 "
     "ON j2.id = hero_attribute.attribute_id WHERE j2.attribute_name = 'Intelligence')",
     ("j2.attribute_value", ["attribute_name = 'Intelligence'"])),
])
def test_an_extreme_of_some_rows_compared_outside_them_is_found(sql, found):
    assert extreme_elsewhere(sql, dialect="sqlite") == found


@pytest.mark.parametrize("sql", [
    # the same condition outside, in another case
    "SELECT name FROM t WHERE kind = 'A' AND v = (SELECT MAX(v) FROM t WHERE kind = 'a')",
    # a comparison with a subset's extreme ("larger than any country in Europe")
    "SELECT Name FROM country WHERE SurfaceArea > (SELECT MIN(SurfaceArea) FROM country WHERE Continent = 'Europe')",
    # a correlation, no value of its own
    "SELECT name FROM t AS a WHERE v = (SELECT MAX(v) FROM t AS b WHERE b.kind = a.kind)",
    "SELECT name FROM t WHERE v = (SELECT MAX(v) FROM t)",
])
def test_extremes_the_query_keeps_to_or_only_compares_with_are_left_alone(sql):
    assert extreme_elsewhere(sql, dialect="sqlite") is None


@pytest.mark.parametrize("sql, found", [
    ("SELECT a FROM t WHERE b = (SELECT id FROM u WHERE x = 1)", ["SELECT id FROM u WHERE x = 1"]),
    ("SELECT a FROM t WHERE b > (SELECT id FROM u)", ["SELECT id FROM u"]),
    ("SELECT a FROM t WHERE b = (SELECT MAX(id) FROM u)", []),  # an aggregate: one row
    ("SELECT a FROM t WHERE b = (SELECT id FROM u ORDER BY id LIMIT 1)", []),
    ("SELECT a FROM t WHERE b IN (SELECT id FROM u)", []),  # a list, meant as one
])
def test_subqueries_compared_as_one_value_are_those_that_may_give_several(sql, found):
    assert one_value_subqueries(sql) == found


def _run_sql(path, sql: str):
    ctx = ToolContext(database=SQLiteSource(path), state=AgentState(), schema=SchemaOptions())
    tool, args, _ = parse_arguments("run_sql", json.dumps({"sql": sql}))
    return run_tool(ctx, tool, args)


def test_a_subquery_compared_as_one_value_that_gives_several_rows_is_refused(sample_db_path):
    # BIRD mini-dev 740's habit (development sample): the id of the first of many rows, compared as the one meant
    sql = ("SELECT COUNT(*) FROM launches WHERE vehicle_id = "
           "(SELECT id FROM launch_vehicles WHERE name LIKE 'Falcon%')")
    outcome = _run_sql(sample_db_path, sql)
    assert not outcome.ok and outcome.result is None
    assert "a subquery compared as one value gives several rows, and only the first is compared: SELECT id FROM " \
           "launch_vehicles WHERE name LIKE 'Falcon%'" in outcome.observation["error"]


@pytest.mark.parametrize("sql", [
    "SELECT COUNT(*) FROM launches WHERE vehicle_id = (SELECT id FROM launch_vehicles WHERE name = 'Falcon 9')",
    # correlated: it runs only inside the query, and is not judged
    "SELECT name FROM launch_vehicles AS v WHERE id = (SELECT vehicle_id FROM launches AS l WHERE l.vehicle_id = v.id "
    "ORDER BY launch_date LIMIT 1)",
    "SELECT name FROM launch_vehicles AS v WHERE 1 < (SELECT COUNT(*) FROM launches AS l WHERE l.vehicle_id = v.id)",
])
def test_subqueries_giving_one_row_run(sample_db_path, sql):
    assert _run_sql(sample_db_path, sql).ok
