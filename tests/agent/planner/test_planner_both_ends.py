"""Both ends of one ranking asked side by side ("the earliest and latest launch dates", 最早和最晚…分别是哪天？):
the column's MIN and MAX, not the latest alone answered as if it were both (issue 38, the twenty-third re-walk's
C02, asked again on its own)."""

from __future__ import annotations

import pytest

from app.core import AskDB
from app.settings import Settings

from tests.agent.planner.test_planner_followup import planner, sample  # noqa: F401 (fixtures)


@pytest.mark.parametrize("question, gold", [
    ("What are the earliest and latest launch dates?", "SELECT MIN(launch_date), MAX(launch_date) FROM launches"),
    ("最早和最晚的发射分别是哪天？", "SELECT MIN(launch_date), MAX(launch_date) FROM launches"),
    ("What are the heaviest and lightest payload masses?", "SELECT MIN(mass_kg), MAX(mass_kg) FROM payloads"),
])
def test_both_ends_are_the_columns_min_and_max(planner, sample_db_path, question, gold):
    plan = planner.plan(question)
    assert plan.caveat is None
    assert planner.database.execute(plan.sql, max_rows=10).rows == [list(r) for r in sample(sample_db_path, gold)]


@pytest.mark.parametrize("question", ["Which aircraft is the fastest?", "最晚的一次发射是哪天？"])
def test_one_end_is_still_a_ranking(planner, question):
    plan = planner.plan(question)
    assert plan.caveat is None and "ORDER BY" in plan.sql and "MIN(" not in plan.sql


def test_an_answer_giving_one_end_of_two_asked_is_never_ok(sample_db_path, tmp_path):
    """After a question askdb could not answer, "the earliest and the latest one" is read on the latest alone by
    the follow-up reader: the answer says it gives one end (or that it builds on no answer), never ok."""
    askdb = AskDB(Settings(llm="offline", database=sample_db_path, store=tmp_path / "s.db", memory_embedder="none"))
    try:
        thread = None
        for question in ("吉林一号卫星一共发射了多少颗？", "最早和最晚的一颗分别是哪天发射的？"):
            events = list(askdb.ask(question, user_id="u", thread_id=thread))
            thread = events[0].thread_id
        answer = next(e.answer for e in events if e.type == "answer")
    finally:
        askdb.close()
    assert not answer.ok and answer.data.caveat
