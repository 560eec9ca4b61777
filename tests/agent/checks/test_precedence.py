"""An OR beside an AND with no parentheses (agent.checks.precedence): found, and fixed with the parentheses."""

import pytest

from agent.checks.precedence import loose_or


@pytest.mark.parametrize("sql, written, fixed", [
    ("SELECT Name FROM countrylanguage WHERE Language = 'English' OR Language = 'Dutch' AND IsOfficial = 'T'",
     "Language = 'English' OR Language = 'Dutch' AND IsOfficial = 'T'",
     "SELECT Name FROM countrylanguage WHERE (Language = 'English' OR Language = 'Dutch') AND IsOfficial = 'T'"),
    ("SELECT 1 FROM t WHERE a = 1 AND b = 2 OR c = 3", "a = 1 AND b = 2 OR c = 3",
     "SELECT 1 FROM t WHERE a = 1 AND (b = 2 OR c = 3)"),
    ("SELECT 1 FROM t WHERE a = 1 OR b = 2 OR c = 3 AND d = 4 AND e = 5", "a = 1 OR b = 2 OR c = 3 AND d = 4 AND e = 5",
     "SELECT 1 FROM t WHERE (a = 1 OR b = 2 OR c = 3) AND d = 4 AND e = 5"),
    # a subquery's conditions, and the outer query's, each fixed
    ("SELECT 1 FROM t WHERE x IN (SELECT y FROM u WHERE a = 1 OR b = 2 AND c = 3) AND (p = 1 OR q = 2 AND r = 3)",
     "p = 1 OR q = 2 AND r = 3",
     "SELECT 1 FROM t WHERE x IN (SELECT y FROM u WHERE (a = 1 OR b = 2) AND c = 3) AND ((p = 1 OR q = 2) AND r = 3)"),
])
def test_a_loose_or_is_found_and_parenthesised(sql, written, fixed):
    assert loose_or(sql, dialect="sqlite") == (written, fixed)


@pytest.mark.parametrize("sql", [
    "SELECT 1 FROM t WHERE a = 1 AND b = 2 OR c = 3 AND d = 4",  # one pair or the other
    "SELECT 1 FROM t WHERE a = 1 OR (b = 2 AND c = 3)",  # parenthesised by the query itself
    "SELECT 1 FROM t WHERE (a = 1 OR b = 2) AND c = 3",
    "SELECT 1 FROM t WHERE a = 1 OR b = 2",
    "SELEC 1 FROM (",
])
def test_ors_the_query_means_are_left_alone(sql):
    assert loose_or(sql, dialect="sqlite") is None


def test_no_spider_gold_query_mixes_or_and_and_loosely(spider_dev):
    questions, _ = spider_dev
    assert [q["query"] for q in questions if loose_or(q["query"], dialect="sqlite")] == []
