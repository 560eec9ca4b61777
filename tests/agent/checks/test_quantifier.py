"""A question about every row of a thing, answered by a query that keeps a thing when any row meets it
(agent.checks.quantifier)."""

import pytest

from agent.checks.quantifier import none_as_not_equal, universal_dropped

ANY_RETIRED = ("SELECT DISTINCT f.name FROM vehicle_families AS f JOIN launch_vehicles AS v ON v.family_id = f.id "
               "WHERE v.status = 'retired'")
ALL_RETIRED = ("SELECT f.name FROM vehicle_families AS f WHERE f.id NOT IN "
               "(SELECT family_id FROM launch_vehicles WHERE status <> 'retired')")


@pytest.mark.parametrize("question, words", [
    ("哪些火箭家族的所有型号都已经退役了？", "所有型号都"),
    ("全部型号都退役的火箭家族有哪些？", "全部型号都"),
    ("Which families have all of their vehicles retired?", "have all of their vehicles retired"),
    ("List the families whose vehicles are all retired.", "whose vehicles are all"),
    ("Families with all their vehicles retired", "with all their vehicles retired"),
    # The fiftieth re-walk's E15 (aircraft, listed by part, marked answered)
    ("Which families had every listed vehicle retired?", "had every listed vehicle retired"),
])
def test_every_row_asked_about_and_any_row_kept_is_found(question, words):
    assert universal_dropped(question, ANY_RETIRED, dialect="sqlite") == words
    assert universal_dropped(question, ALL_RETIRED, dialect="sqlite") is None  # a negation can say "every"


@pytest.mark.parametrize("question", [
    "Show all their ids and names!",  # every row shown, not a condition on each
    "List all the retired launch vehicles.",
    "列出所有退役的运载火箭。",
])
def test_all_as_every_row_shown_is_not_about_each(question):
    assert universal_dropped(question, ANY_RETIRED, dialect="sqlite") is None


def test_no_spider_gold_question_is_read_as_about_every_row(spider_dev):
    questions, _ = spider_dev
    assert [q["question"] for q in questions if universal_dropped(q["question"], q["query"], dialect="sqlite")] == []


ANY_YEAR = ("SELECT s.name, strftime('%Y', l.launch_date) AS y, COUNT(*) FROM launches AS l JOIN launch_sites AS s "
            "ON s.id = l.site_id WHERE l.launch_date BETWEEN '2020-01-01' AND '2025-12-31' GROUP BY s.id, y "
            "HAVING COUNT(*) >= 1")
EVERY_YEAR = ("SELECT s.name FROM launches AS l JOIN launch_sites AS s ON s.id = l.site_id "
              "WHERE l.launch_date BETWEEN '2020-01-01' AND '2025-12-31' GROUP BY s.id "
              "HAVING COUNT(DISTINCT strftime('%Y', l.launch_date)) = 6")


@pytest.mark.parametrize("question, words", [
    ("Which launch sites hosted at least one launch in every year from 2020 through 2025?", "in every year from"),
    ("哪些发射场在2020到2025年每年都有发射？", "每年都"),
])
def test_every_period_of_a_span_needs_a_count_of_distinct_periods(question, words):
    # The twenty-second re-walk's E01: grouped by site and year with HAVING COUNT(*) >= 1 (any year), ok.
    assert universal_dropped(question, ANY_YEAR, dialect="sqlite") == words
    assert universal_dropped(question, EVERY_YEAR, dialect="sqlite") is None


@pytest.mark.parametrize("question", ["How many launches were there in every year from 2020 to 2025?",
                                      "How many launches were there in each year from 2020 to 2025?",
                                      "2020到2025年每年有多少次发射？"])
def test_a_count_per_period_is_a_grouping(question):
    assert universal_dropped(question, ANY_YEAR, dialect="sqlite") is None


@pytest.mark.parametrize("question, sql, words", [
    # The twenty-second re-walk's E12: every role with any model not built in China, ok.
    ("Which aircraft roles have no Chinese-built model?",
     "SELECT DISTINCT a.role FROM aircraft AS a JOIN manufacturers AS m ON m.id = a.manufacturer_id "
     "JOIN countries AS c ON c.id = m.country_id WHERE c.name <> 'China'", "have no"),
    ("Which aircraft roles have no Chinese-built model?",
     "SELECT DISTINCT role FROM aircraft WHERE role NOT IN (SELECT a.role FROM aircraft AS a JOIN manufacturers AS m "
     "ON m.id = a.manufacturer_id JOIN countries AS c ON c.id = m.country_id WHERE c.name = 'China')", None),
    ("Which payloads have no recorded mass?", "SELECT name FROM payloads WHERE mass_kg IS NULL", None),
    ("Which launch sites are not in China?", "SELECT s.name FROM launch_sites AS s JOIN countries AS c "
     "ON c.id = s.country_id WHERE c.name <> 'China'", None),
    # A verb said not to hold, of rows related to those listed (SParC dev's development sample, 50.2 and 130.2 at
    # adf1121: each student with any pet that is not a cat, each channel with any cartoon by someone else).
    ("Of those, who does not own a cat?", "SELECT T1.Fname FROM Student AS T1 JOIN Has_Pet AS T2 ON T1.StuID = T2.StuID "
     "JOIN Pets AS T3 ON T2.PetID = T3.PetID WHERE T3.PetType != 'cat'", "does not own a"),
    ("which countries' tv channels are not playing any cartoon written by Todd Casey?",
     "SELECT DISTINCT T2.Country FROM TV_Channel AS T2 JOIN Cartoon AS T1 ON T1.Channel = T2.id "
     "WHERE T1.Written_by != 'Todd Casey'", "are not playing any"),
    # … and of the rows' own column, which a `<>` says right
    ("Which students do not have a pet type of cat?", "SELECT Fname FROM Student WHERE Major != 600", None),
    ("Which vehicles are not using any reusable stage?",
     "SELECT v.name FROM launch_vehicles AS v JOIN manufacturers AS m ON m.id = v.manufacturer_id "
     "WHERE v.status != 'retired'", None),
])
def test_none_of_some_rows_is_not_a_row_by_row_not_equal(question, sql, words):
    assert none_as_not_equal(question, sql, dialect="sqlite") == words


def test_no_spider_gold_question_is_read_as_none_said_by_not_equal(spider_dev):
    questions, _ = spider_dev
    assert [q["question"] for q in questions if none_as_not_equal(q["question"], q["query"], dialect="sqlite")] == []
