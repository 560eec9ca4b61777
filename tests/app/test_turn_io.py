"""What one turn costs the store (issue 19), counted on the real SQLite connection of the real service:
a write transaction is a BEGIN, a read a query outside one (bench/turn_io.py's counter)."""

from __future__ import annotations

import sqlite3

from app.core import AskDB
from app.settings import Settings
from bench.turn_io import count_turn

QUESTION = "How many launches per year?"  # the offline planner: list_tables, describe_table, run_sql, answer


def _askdb(tmp_path, sample_db_path) -> AskDB:
    return AskDB(Settings(llm="offline", database=sample_db_path, store=tmp_path / "store.db"))


def test_a_four_step_turn_commits_at_most_six_write_transactions_and_reads_nothing_back(tmp_path, sample_db_path):
    askdb = _askdb(tmp_path, sample_db_path)
    try:
        list(askdb.ask(QUESTION, user_id="warm-up"))  # memory's tables are opened by a server's first turn
        counts, events = count_turn(askdb, QUESTION, user_id="u")
        assert [e.step.action for e, _ in events if e.type == "step"] == [
            "list_tables", "describe_table", "run_sql", "answer"]
        # Begin (conversation, lease, question), 3 steps (the query's result with its step), the answer step
        # with the state and the lease's release, and the episode remembered after it.
        assert counts["write_transactions"] <= 6
        assert counts["reads"] <= 2 and counts["lease_renewals"] == 0
        thread_id = events[0][0].thread_id
        follow_up, again = count_turn(askdb, "And per country?", user_id="u", thread_id=thread_id)
        steps = sum(e.type == "step" for e, _ in again)
        assert follow_up["write_transactions"] <= steps + 2 and follow_up["reads"] <= 2
    finally:
        askdb.close()


def test_each_step_is_stored_before_its_event_and_the_answer_with_the_state(tmp_path, sample_db_path):
    """What the page shows, a killed process has kept: a step is in the store when its event arrives,
    and the step that ends the turn arrives with the final state saved and the lease released."""
    askdb = _askdb(tmp_path, sample_db_path)
    observer = sqlite3.connect(tmp_path / "store.db")
    try:
        for event in askdb.ask(QUESTION, user_id="u"):
            if event.type != "step":
                continue
            stored = [r[0] for r in observer.execute(
                "SELECT step_index FROM conversation_steps WHERE thread_id = ?", (event.thread_id,))]
            assert event.step.step_index in stored
            if event.step.step_type == "answer":
                last = observer.execute("SELECT json_extract(state_data, '$.messages[#-1].role') FROM conversations"
                                        " WHERE thread_id = ?", (event.thread_id,)).fetchone()[0]
                assert last == "assistant"
                assert observer.execute("SELECT count(*) FROM turn_leases").fetchone()[0] == 0
    finally:
        observer.close()
        askdb.close()


def test_the_answer_rests_on_the_result_as_stored_without_reading_it_back(tmp_path, sample_db_path):
    askdb = _askdb(tmp_path, sample_db_path)
    try:
        events = list(askdb.ask(QUESTION, user_id="u"))
        answer = events[-1].answer
        stored = askdb.store.load_result(events[-1].thread_id, answer.data.result_id, user_id="u")
        assert answer.ok and answer.data.rows == stored.rows[:50] and answer.data.row_count == stored.row_count
    finally:
        askdb.close()


def test_a_held_lease_is_renewed_on_a_timer_until_released(tmp_path):
    """Renewal no longer follows the steps: the keeper renews what is held every third of a lease."""
    import time

    from agent.state import AgentState
    from app.service.leases import LeaseKeeper
    from storage.base import opened_store

    with opened_store(tmp_path / "store.db", AgentState) as store:
        thread = store.create(user_id="u", state=AgentState()).thread_id
        keeper = LeaseKeeper(store.leases(seconds=0.9), seconds=0.9)
        lease = keeper.hold()
        lease.take(thread)
        expiry = lambda: store.db.value("SELECT expires_at FROM turn_leases WHERE thread_id = ?", (thread,))  # noqa: E731
        first, deadline = expiry(), time.monotonic() + 30
        while expiry() == first and time.monotonic() < deadline:
            time.sleep(0.05)
        assert expiry() > first
        lease.release()
        keeper.close()
        assert not store.leases(seconds=0.9).is_held(thread)


def test_a_turn_still_running_here_refuses_a_claim_only_to_its_owner_and_saves_nothing(tmp_path, sample_db_path):
    """The claim is one transaction: another user learns nothing (not found, not busy), and the owner's
    refused question is not left in the conversation unanswered."""
    import threading

    import pytest

    from app.turns import TurnInProgress
    from storage.errors import ConversationNotFound

    askdb = _askdb(tmp_path, sample_db_path)
    release = threading.Event()
    try:
        thread_id = list(askdb.ask(QUESTION, user_id="alice"))[0].thread_id
        running = askdb.turns.start(thread_id, lambda turn: iter(lambda: release.wait(), True))  # finishing here
        with pytest.raises(ConversationNotFound):
            askdb.start_turn("Mine now?", user_id="eve", thread_id=thread_id)
        with pytest.raises(TurnInProgress):
            askdb.start_turn("And per country?", user_id="alice", thread_id=thread_id)
        messages = askdb.store.load(thread_id, user_id="alice").state.messages
        assert messages[-1].role == "assistant" and not askdb.leases.is_held(thread_id)
    finally:
        release.set()
        running.wait()
        askdb.close()
