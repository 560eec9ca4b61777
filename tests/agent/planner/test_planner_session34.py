"""Read after the sixty-ninth walk (issue 38): a follow-up comparing the figure before with another year, and a table's
word that is a word of the measured column.

- "How does that compare with 2021?" after a figure of 2024 points back ('that') and compares: both years, each its
  own figure and the difference, not 2021's alone with 'compare' left out (和2023年相比呢？, "Compare that with 2023.").
- "What's the average LEO payload capacity of retired American rockets?" reads `payload_leo_kg`; its "payload" is that
  column's word, not the payloads table left unread (the `table` check); "the average mass of payloads" still is.
"""

from __future__ import annotations

import pytest

from agent.checks.question import table_not_used
from agent.sources.sqlite import SQLiteSource
from tests.agent.planner.test_planner_followup import planner, result, sample, talk  # noqa: F401 (fixtures)


@pytest.mark.parametrize("first, then, rows, said", [
    ("What share of all launches in 2024 were flown by SpaceX rockets?", "How does that compare with 2021?",
     [("2021", 27.19), ("2024", 53.08)], "2024 is 25.89 higher."),
    ("How many launches were there in 2022?", "Compare that with 2023.", [("2022", 162), ("2023", 209)],
     "2023 has 47 more."),
    ("2024年中国发射了多少次？", "和2023年相比呢？", [("2023", 68), ("2024", 72)], "2024多 4"),
])
def test_a_follow_up_compares_the_figure_before_with_another_year(talk, first, then, rows, said):
    talk.ask(first)
    _, answer = talk.ask(then)
    assert result(talk) == rows and said in answer["text"] and "caveat" not in answer
    assert "the grouping" not in answer["text"]  # the answer before had none to keep


def test_a_follow_up_naming_another_year_without_comparing_replaces_it(talk):
    talk.ask("How many launches were there in 2022?")
    talk.ask("And in 2023?")
    assert result(talk) == [(209,)]


def test_gen_with_a_chinese_comparison_is_read(talk):
    """跟 (with) says nothing of its own: 跟2020年比较呢？ is read whole."""
    talk.ask("2024年的载荷平均质量是多少？")
    _, answer = talk.ask("跟2020年比较呢？")
    assert [r[0] for r in result(talk)] == ["2020", "2024"] and "caveat" not in answer


_AVERAGE_LEO = ("SELECT AVG(launch_vehicles.payload_leo_kg) FROM launch_vehicles JOIN manufacturers ON "
                "launch_vehicles.manufacturer_id = manufacturers.id JOIN countries ON manufacturers.country_id = "
                "countries.id WHERE launch_vehicles.status = 'retired' AND countries.name = 'United States'")


@pytest.mark.parametrize("question, unread", [
    ("What's the average LEO payload capacity of retired American rockets?", None),
    ("What is the mean payload to LEO of retired US rockets?", None),
    ("What's the average mass of payloads of retired American rockets?", "payloads"),
])
def test_a_table_word_of_the_measured_column_is_that_column(sample_db_path, question, unread):
    source = SQLiteSource(sample_db_path)
    assert table_not_used(question, _AVERAGE_LEO, source.catalogue, dialect="sqlite") == unread
