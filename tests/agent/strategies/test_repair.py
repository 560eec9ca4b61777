"""askdb's rule repairs of a failed query (agent.strategies.repair): each one sure, none a guess."""

import sqlite3

import pytest

from agent.sources.sqlite import SQLiteSource
from agent.strategies.repair import joined_in, requalified, respelled

SCHEMA = """
    CREATE TABLE stadium (stadium_id INTEGER PRIMARY KEY, name TEXT, capacity INTEGER);
    CREATE TABLE concert (concert_id INTEGER PRIMARY KEY, concert_name TEXT, year TEXT,
                          stadium_id INTEGER REFERENCES stadium(stadium_id));
    CREATE TABLE singer (singer_id INTEGER PRIMARY KEY, name TEXT, country TEXT, age INTEGER);
    CREATE TABLE singer_in_concert (concert_id INTEGER REFERENCES concert(concert_id),
                                    singer_id INTEGER REFERENCES singer(singer_id));
    INSERT INTO stadium VALUES (1, 'Hampden Park', 52500), (2, 'Glebe Park', 4000);
    INSERT INTO concert VALUES (1, 'Auditions', '2014', 1), (2, 'Super bootcamp', '2015', 2);
    INSERT INTO singer VALUES (1, 'Joe Sharp', 'Netherlands', 52), (2, 'Timbaland', 'United States', 32),
                              (3, 'Rose White', 'France', 41);
    INSERT INTO singer_in_concert VALUES (1, 1), (1, 2), (2, 3);
    CREATE TABLE audition (audition_id INTEGER PRIMARY KEY, singer_id INTEGER REFERENCES singer(singer_id),
                           year TEXT, result TEXT);
    INSERT INTO audition VALUES (1, 1, '2014', 'success'), (2, 2, '2014', 'failure'), (3, 3, '2015', 'failure');
"""


@pytest.fixture
def concerts(tmp_path):
    path = tmp_path / "concerts.db"
    with sqlite3.connect(path) as conn:
        conn.executescript(SCHEMA)
    source = SQLiteSource(path, time_limit_s=5)
    yield source
    source.close()


def test_a_column_read_from_the_wrong_table_of_a_join_moves_to_the_one_that_has_it(concerts):
    sql = "SELECT T2.name, T1.capacity FROM stadium AS T1 JOIN concert AS T2 ON T1.stadium_id = T2.stadium_id"
    fixed = requalified(sql, concerts.catalogue(), dialect="sqlite")
    assert fixed.changes == ["T2.name → T1.name"]
    assert concerts.execute(fixed.sql).rows == [["Hampden Park", 52500], ["Glebe Park", 4000]]


def test_no_requalification_when_two_tables_of_the_query_have_the_column(concerts):
    sql = ("SELECT T3.name FROM singer AS T1 JOIN singer_in_concert AS T3 ON T1.singer_id = T3.singer_id "
           "JOIN concert AS T4 ON T4.concert_id = T3.concert_id JOIN stadium AS T5 ON T5.stadium_id = T4.stadium_id")
    assert requalified(sql, concerts.catalogue(), dialect="sqlite") is None  # singer.name or stadium.name?
    assert requalified("SELECT T1.name FROM singer AS T1", concerts.catalogue(), dialect="sqlite") is None


def test_a_column_of_a_table_linked_by_a_foreign_key_gets_that_table_joined_in(concerts):
    sql = "SELECT concert_name FROM concert WHERE capacity > 10000"
    fixed = joined_in(sql, concerts.catalogue(), dialect="sqlite")
    assert fixed.changes == ["joined stadium on j2.stadium_id = concert.stadium_id"]
    assert concerts.execute(fixed.sql).rows == [["Auditions"]]


def test_no_join_when_the_column_is_held_by_two_linked_tables_or_none(concerts):
    # `name`: singer's (linked to singer_in_concert) and stadium's (linked to concert): which one is meant?
    both = "SELECT name FROM concert AS c JOIN singer_in_concert AS s ON s.concert_id = c.concert_id"
    assert joined_in(both, concerts.catalogue(), dialect="sqlite") is None
    one = joined_in("SELECT name FROM singer_in_concert", concerts.catalogue(), dialect="sqlite")
    assert concerts.execute(one.sql).rows == [["Joe Sharp"], ["Timbaland"], ["Rose White"]]
    assert joined_in("SELECT height FROM singer", concerts.catalogue(), dialect="sqlite") is None
    assert joined_in("SELECT T1.age AS a FROM singer AS T1 ORDER BY a", concerts.catalogue(), dialect="sqlite") is None


def test_a_value_spelled_otherwise_than_stored_is_written_as_stored_only_when_one_matches(concerts):
    fixed = respelled("SELECT count(*) FROM singer WHERE country = 'france'", concerts)
    assert fixed.changes == ["'france' → 'France'"] and concerts.execute(fixed.sql).rows == [[1]]
    assert respelled("SELECT count(*) FROM singer WHERE country = 'France'", concerts) is None  # stored as is
    assert respelled("SELECT count(*) FROM singer WHERE country = 'Spain'", concerts) is None  # nothing like it


def test_a_word_of_another_form_is_written_as_the_one_stored_value_of_its_stem(concerts, tmp_path):
    fixed = respelled("SELECT count(*) FROM audition WHERE result = 'failed'", concerts)
    assert fixed.sql == "SELECT COUNT(*) FROM audition WHERE result = 'failure'" and fixed.changes == ["'failed' → 'failure'"]
    assert respelled("SELECT count(*) FROM audition WHERE result = 'won'", concerts) is None  # a stem too short
    path = tmp_path / "two.db"
    with sqlite3.connect(path) as conn:
        conn.executescript("CREATE TABLE t (x TEXT); INSERT INTO t VALUES ('failure'), ('failures');")
    two = SQLiteSource(path, time_limit_s=5)
    try:
        assert respelled("SELECT count(*) FROM t WHERE x = 'failed'", two) is None  # two stored forms: not sure
    finally:
        two.close()


def test_what_sqlglot_cannot_read_is_left_alone(concerts):
    for repair in (requalified, joined_in):
        assert repair("SELEC name FROM (", concerts.catalogue(), dialect="sqlite") is None
    assert respelled("SELEC name FROM (", concerts) is None


@pytest.mark.parametrize("second, kept", [
    ("SELECT COUNT(*) FROM countrylanguage WHERE Language = 'Spanish'", False),  # the ranking dropped
    ("SELECT COUNT(*) FROM (SELECT CountryCode FROM countrylanguage WHERE Language = 'Spanish' "
     "ORDER BY Percentage DESC LIMIT 1)", True),
    ("SELECT COUNT(*) FROM countrylanguage", False),  # a condition dropped
])
def test_a_query_told_of_a_problem_is_kept_only_when_it_reads_what_the_first_ranked_and_picked_by(second, kept):
    from agent.strategies.repair import kept_by

    first = "SELECT COUNT(*) FROM countrylanguage WHERE Language = 'Spanish' ORDER BY Percentage DESC LIMIT 1"
    assert kept_by(first, second, "sqlite") is kept
