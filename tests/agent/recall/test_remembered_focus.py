"""A time focus the user asked askdb to remember is applied by the offline planner to questions that
name no time of their own, and said so; where it cannot apply, the answer says that and is not ok
(issue 22: "我们只看2020年以后的数据" was remembered, then ignored)."""

from __future__ import annotations

import pytest

from agent.database import AnalyticsDatabase
from agent.loop import TurnSetup, run_turn
from agent.memory.user_memory import BLOCK_HEADING
from agent.offline_planner import OfflinePlanner
from agent.planner.focus import Focus, names_own_time, remembered_focus


def _note(*memories: str) -> str:
    return "\n".join([BLOCK_HEADING, *(f"- {m} (preference)" for m in memories)])


@pytest.mark.parametrize("said, relation, year", [
    ("我们只看2020年以后的数据", "after", 2020),
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
    setup = TurnSetup(store=store, database=AnalyticsDatabase(db), model=OfflinePlanner(AnalyticsDatabase(db)),
                      recall=memory)
    return list(run_turn(setup, user_id=user, question=question))[-1].answer


def test_the_offline_planner_applies_the_focus_and_says_so(store, sample_db_path, memory):
    _ask(store, sample_db_path, memory, "alice", "我们只看2020年以后的数据。")
    answer = _ask(store, sample_db_path, memory, "alice", "How many launches per year?")
    assert answer.ok and "As you asked me to remember ('我们只看2020年以后的数据。')" in answer.data.text
    assert "2021-01-01" in answer.data.sql and min(row[0] for row in answer.data.rows) == "2021"
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
