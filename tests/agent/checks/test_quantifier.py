"""A question about every row of a thing, answered by a query that keeps a thing when any row meets it
(agent.checks.quantifier)."""

import pytest

from agent.checks.quantifier import universal_dropped

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
