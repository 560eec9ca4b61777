"""askdb's fix of a figure asked per group and computed once over all rows."""

import pytest

from agent.checks.grouping import grouped_figure


@pytest.mark.parametrize("question, sql, fixed", [
    ("What is the average payload mass by orbit?", "SELECT AVG(mass_kg) AS average_payload FROM payloads",
     "SELECT orbit, AVG(mass_kg) AS average_payload FROM payloads GROUP BY orbit"),
    ("How many launches for each outcome?", "SELECT COUNT(*) FROM launches",
     "SELECT outcome, COUNT(*) FROM launches GROUP BY outcome"),
    # The words name no one column ("launch site" is site_id's table, not a column's name): left to the model.
    ("How many launches per launch site?", "SELECT COUNT(*) FROM launches", None),
    # One group picked by a value, a join, rows that are not figures: left to the model.
    ("What is the average payload mass by orbit?", "SELECT AVG(mass_kg) FROM payloads WHERE orbit = 'LEO'", None),
    ("What is the average payload mass by orbit?",
     "SELECT AVG(p.mass_kg) FROM payloads AS p JOIN launches AS l ON l.id = p.launch_id", None),
    ("List the payloads by orbit", "SELECT name FROM payloads", None),
])
def test_a_figure_asked_per_group_is_grouped_by_the_column_the_question_names(sample_catalogue, question, sql, fixed):
    assert grouped_figure(question, sql, sample_catalogue, dialect="sqlite") == fixed
