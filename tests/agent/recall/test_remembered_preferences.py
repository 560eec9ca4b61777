"""A time focus and units the user asked askdb to remember are applied by the offline planner to
questions that name none of their own, and said so; where a focus cannot apply, the answer says
that and is not ok (issue 22: "我们只看2020年以后的数据" was remembered, then ignored)."""

from __future__ import annotations

import pytest

from agent.context import QUESTION_MARK
from agent.examples import HEADING
from agent.loop import TurnSetup, run_turn
from agent.memory.user_memory import BLOCK_HEADING
from agent.offline_planner import OfflinePlanner
from agent.planner.focus import Focus, names_own_time, remembered_focus
from agent.planner.units import convert, names_own_unit, remembered_units
from agent.sources.sqlite import SQLiteSource
from agent.tools.registry import tool_schemas
from agent.vocabulary.domain import DomainVocabulary


def _note(*memories: str) -> str:
    return "\n".join([BLOCK_HEADING, *(f"- {m} (preference)" for m in memories)])


@pytest.mark.parametrize("said, relation, year", [
    ("我们只看2020年以后的数据", "since", 2020),
    ("We only look at launches since 2015.", "since", 2015),
    ("I only care about data before 2000", "before", 2000),
    ("只关注2018年以来的发射", "since", 2018),
])
def test_a_remembered_focus_is_read_in_either_language(said, relation, year):
    assert remembered_focus(_note("Call me Ada.", said)) == Focus(relation, year, said)


def test_a_year_that_is_no_focus_is_not_one():
    assert remembered_focus(_note("Our company was founded in 2019.")) is None
    assert remembered_focus("only after 2020, but not among the user's memories") is None


def test_a_question_with_its_own_time_keeps_it():
    assert all(names_own_time(q) for q in ("Launches in 2015?", "How many last year?", "去年有多少次发射？",
                                            "launches in the past 5 years"))
    assert not any(names_own_time(q) for q in ("How many launches per year?", "每年有多少次发射？"))


def _ask(store, db, memory, user, question):
    setup = TurnSetup(store=store, database=SQLiteSource(db), model=OfflinePlanner(SQLiteSource(db)),
                      recall=memory)
    return list(run_turn(setup, user_id=user, question=question))[-1].answer


def test_the_offline_planner_applies_the_focus_and_says_so(store, sample_db_path, memory):
    _ask(store, sample_db_path, memory, "alice", "我们只看2020年以后的数据。")
    answer = _ask(store, sample_db_path, memory, "alice", "How many launches per year?")
    assert answer.ok and "As you asked me to remember ('我们只看2020年以后的数据。')" in answer.data.text
    assert "2020-01-01" in answer.data.sql and min(row[0] for row in answer.data.rows) == "2020"
    # A question naming its own year is answered for that year.
    answer = _ask(store, sample_db_path, memory, "alice", "How many launches in 2015?")
    assert answer.ok and "remember" not in answer.data.text and answer.data.rows == [[88]]
    # Another user's memories are not alice's.
    answer = _ask(store, sample_db_path, memory, "bob", "How many launches per year?")
    assert answer.ok and "remember" not in answer.data.text and min(row[0] for row in answer.data.rows) == "2000"


def test_a_focus_that_cannot_apply_is_said_and_the_answer_is_not_ok(store, sample_db_path, memory):
    _ask(store, sample_db_path, memory, "alice", "We only look at data after 2020.")
    answer = _ask(store, sample_db_path, memory, "alice", "How many countries are there?")
    assert not answer.ok and answer.data.caveat.startswith("Your remembered focus ('We only look at data after 2020.')")
    assert "launch_sites" not in answer.data.sql  # no table joined in only for a date


def test_remembered_units_are_read_in_either_language():
    (tonnes,) = remembered_units(_note("Call me Ada.", "I prefer masses in tonnes."))
    assert (tonnes.unit.name, tonnes.said) == ("tonnes", "I prefer masses in tonnes.")
    assert [p.unit.name for p in remembered_units(_note("质量用吨", "距离用英里"))] == ["tonnes", "miles"]
    assert remembered_units(_note("Our rocket weighs 500 tonnes")) == []  # a fact, not a preference
    assert names_own_unit("average mass in kg?") and names_own_unit("平均质量是多少公斤？")
    assert not names_own_unit("average mass by orbit?")


def test_units_convert_result_columns_and_what_orders_by_them():
    prefs = remembered_units(_note("I prefer masses in tonnes."))
    sql, applied = convert("SELECT m.name, COUNT(*) AS count, SUM(p.mass_kg) AS sum_mass_kg FROM p JOIN m ON p.m = m.id "
                           "GROUP BY m.name ORDER BY sum_mass_kg DESC", prefs, "sqlite")
    assert applied == prefs and "ROUND(SUM(p.mass_kg) * 0.001, 3) AS sum_mass_t" in sql
    assert "COUNT(*) AS count" in sql and "sum_mass_t DESC" in sql and "sum_mass_kg" not in sql
    unchanged = "SELECT name, COUNT(mass_kg) AS n FROM p GROUP BY name"
    assert convert(unchanged, prefs, "sqlite") == (unchanged, [])  # counts stay counts
    union = "SELECT mass_kg FROM p UNION SELECT mass_kg FROM q"
    assert convert(union, prefs, "sqlite") == (union, [])  # both branches or none: none


def test_the_offline_planner_answers_in_the_remembered_unit(store, sample_db_path, memory):
    _ask(store, sample_db_path, memory, "alice", "I prefer masses in tonnes.")
    answer = _ask(store, sample_db_path, memory, "alice", "Top 5 manufacturers by payload mass")
    assert answer.ok and "As you asked me to remember ('I prefer masses in tonnes.'), in tonnes." in answer.data.text
    assert answer.data.columns == ["name", "count", "sum_mass_t"] and answer.data.rows[0] == ["SpaceX", 491, 6498.601]
    # A question naming its own unit keeps it.
    answer = _ask(store, sample_db_path, memory, "alice", "What is the average payload mass by orbit in kg?")
    assert "avg_mass_kg" in answer.data.columns and "tonnes" not in answer.data.text


def test_a_verified_query_is_not_reused_over_a_remembered_focus(sample_db_path):
    """A verified example's SQL runs as it is: with a focus to apply, the planner plans instead."""
    verified = "SELECT COUNT(*) AS count FROM launches"
    examples = f'{HEADING}\n- Q: "How many launches are there?"\n  SQL: {verified}'
    planner = OfflinePlanner(SQLiteSource(sample_db_path), vocabulary=DomainVocabulary.beside(sample_db_path))

    def first_call(*memories: str) -> str:
        note = "\n\n".join(filter(None, [_note(*memories) if memories else "", examples]))
        messages = [{"role": "system", "content": "You are askdb."},
                    {"role": "user", "content": f"{note}{QUESTION_MARK}How many launches are there?"}]
        return planner.complete(messages, tool_schemas()).tool_calls[0].arguments

    assert verified in first_call()  # reused as it is
    assert verified not in first_call("We only look at data after 2020.")
