"""Text values the query compares with that neither the question nor a lookup gave it."""

import pytest

from agent.checks.unnamed import invented_values
from tests.fixtures.spider_dev import dev_questions


@pytest.mark.parametrize("question, sql, known, expected", [
    # The model's own knowledge: Aruba's code is ABW, and the query asks about India.
    ("How many languages are spoken in Aruba?",
     "SELECT count(DISTINCT language) FROM countrylanguage WHERE countrycode = 'IND'", set(), ["IND"]),
    # A value the question names, whole, by its initials, or word by word by their first four letters.
    ("How many languages are spoken in Aruba?",
     "SELECT count(*) FROM countrylanguage AS l JOIN country AS c ON c.Code = l.CountryCode WHERE c.Name = 'Aruba'",
     set(), []),
    ("How many payloads went to low Earth orbit?", "SELECT count(*) FROM payloads WHERE orbit = 'LEO'", set(), []),
    ("How many launches failed?", "SELECT count(*) FROM launches WHERE outcome = 'failure'", set(), []),
    # A value a lookup of the question's words showed.
    ("Which launch sites are in China?",
     "SELECT name FROM launch_sites WHERE country_id IN (SELECT id FROM countries WHERE code = 'CHN')", {"CHN"}, []),
    # One-letter codes, numbers and dates are for other checks.
    ("How many female students are there?", "SELECT count(*) FROM student WHERE sex = 'F'", set(), []),
    ("How many launches since 2015?", "SELECT count(*) FROM launches WHERE launch_date >= '2015-01-01'", set(), []),
    # A short code is named only as written: "in Europe" does not name 'IN' (the committed local_model run's
    # Spider 809, ok and wrong), "in the US" names 'US'.
    ("Which countries are in Europe?", "SELECT name FROM country WHERE continent = 'Europe' AND code2 = 'IN'", set(),
     ["IN"]),
    ("Which launch sites are in the US?", "SELECT name FROM sites WHERE code = 'US'", set(), []),
    # An adjective of nationality names its country.
    ("Break down French-operated payloads by purpose.", "SELECT purpose, count(*) FROM payloads AS p JOIN countries "
     "AS c ON c.id = p.operator_country_id WHERE c.name = 'France' GROUP BY purpose", set(), []),
    # Chinese questions' values are English as often as not.
    ("中国有几个发射场？", "SELECT count(*) FROM launch_sites AS s JOIN countries AS c ON c.id = s.country_id "
     "WHERE c.name = 'China'", set(), []),
])
def test_a_text_value_nothing_gave_the_query_is_found(question, sql, known, expected):
    assert invented_values(question, sql, known, dialect="sqlite") == expected


def test_no_spider_gold_query_compares_with_a_value_its_question_does_not_name_but_one():
    """Of Spider dev's 1,034 gold queries, one compares with a text value its question names only by
    meaning ('usa' for "the United States"): what this check costs. An adjective of nationality names its
    country ('France' for "French singers")."""
    flagged = [q["question"] for q in dev_questions()
               if invented_values(q["question"], q["query"], set(), dialect="sqlite")]
    assert flagged == ["What is the count of the car models produced in the United States?"]
