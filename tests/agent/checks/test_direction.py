"""The order a question asks for against the query's ORDER BY; a journey's ends."""

from types import SimpleNamespace

import pytest

from agent.checks.direction import reversed_order, travel_reversed
from tests.fixtures.spider_dev import dev_questions


@pytest.mark.parametrize("question, sql, expected", [
    ("List the aircraft models from the fastest to the slowest.",
     "SELECT model FROM aircraft ORDER BY max_speed_kmh", "descending"),
    ("List the aircraft models from the fastest to the slowest.",
     "SELECT model FROM aircraft ORDER BY max_speed_kmh DESC", None),
    ("Show the visitors sorted by age from old to young.", "SELECT name FROM visitor ORDER BY age ASC", "descending"),
    # The oldest was born first: ascending by the date of birth is from old to young.
    ("Show the people from the oldest to the youngest.", "SELECT name FROM people ORDER BY birth_date", None),
    ("Show the people from the oldest to the youngest.", "SELECT name FROM people ORDER BY birth_date DESC",
     "ascending"),
    # A key the words cannot fix is not judged.
    ("Show the people from the oldest to the youngest.", "SELECT name FROM people ORDER BY name", None),
    ("List the names in ascending order of height.", "SELECT name FROM people ORDER BY height DESC", "ascending"),
    ("Show the launches, most recent first.", "SELECT * FROM launches ORDER BY launch_date", "descending"),
    ("按质量从大到小列出载荷", "SELECT name FROM payloads ORDER BY mass_kg", "descending"),
    ("按质量升序列出载荷", "SELECT name FROM payloads ORDER BY mass_kg", None),
    ("Which aircraft is the fastest?", "SELECT model FROM aircraft ORDER BY max_speed_kmh LIMIT 1", None),
])
def test_the_order_the_question_asks_for_is_checked(question, sql, expected):
    assert reversed_order(question, sql, dialect="sqlite") == expected


def test_no_spider_gold_query_sorts_against_its_question():
    assert [q["question"] for q in dev_questions()
            if reversed_order(q["question"], q["query"], dialect="sqlite")] == []


_FLIGHTS = [SimpleNamespace(name="flights", columns=[SimpleNamespace(name=n) for n in
                                                     ("Airline", "FlightNo", "SourceAirport", "DestAirport")])]


@pytest.mark.parametrize("question, sql, found", [
    # SParC dev's development sample, 30.1 at adf1121: "from CVO" compared with where the flights land
    ("Which airlines have flights from CVO?", "SELECT Airline FROM flights WHERE DestAirport = ' CVO'",
     ("CVO", "DestAirport")),
    ("Which airlines have flights from CVO?", "SELECT Airline FROM flights WHERE SourceAirport = 'CVO'", None),
    ("How many flights arrive into APG?", "SELECT COUNT(*) FROM flights WHERE SourceAirport = 'APG'",
     ("APG", "SourceAirport")),
    ("How many flights does airline 'JetBlue Airways' have to APG?",
     "SELECT COUNT(*) FROM flights WHERE DestAirport = 'APG'", None),
    ("Which flights does JetBlue run?", "SELECT FlightNo FROM flights WHERE Airline = 'JetBlue'", None),
])
def test_a_journeys_end_is_compared_with_the_column_of_that_end(question, sql, found):
    assert travel_reversed(question, sql, _FLIGHTS, dialect="sqlite") == found
