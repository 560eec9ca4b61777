"""Turn leases under races (review of the service): two AskDB cores over one store file, as two
servers or worker processes are; a turn of this process still running; a claim or a release that
fails half way. Real SQLite files, the offline planner or the scripted model server."""

from __future__ import annotations

import os
import sqlite3
import threading
import time

import pytest

from agent.recovery import INTERRUPTED_TEXT
from agent.state import AgentState, Message
from app.core import AskDB
from app.settings import Settings
from app.turns import TurnInProgress
from bench.scripted_llm import tool_call
from storage.errors import CorruptState, StoreError

QUESTION = "How many launches were there in 2020?"


def _offline(tmp_path, sample_db_path) -> Settings:
    return Settings(llm="offline", database=sample_db_path, store=tmp_path / "store.db", memory_embedder="none")


def _killed_turn(askdb: AskDB) -> str:
    """A conversation whose question a killed process never answered (and whose lease is gone)."""
    state = AgentState()
    state.messages.append(Message(role="user", content="killed"))
    return askdb.store.create(user_id="u", state=state, title="killed").thread_id


def test_recovery_never_closes_a_turn_another_server_begins_meanwhile(tmp_path, sample_db_path):
    """Server A recovers at start-up while server B begins a turn on the same conversation, after A has
    listed it and before A closes it (A's write transaction begins: SQLite's trace on A's connection).
    A looked at the lease outside the transaction that closed the turn, and closed B's live question."""
    server_a, server_b = AskDB(_offline(tmp_path, sample_db_path)), AskDB(_offline(tmp_path, sample_db_path))
    try:
        thread = _killed_turn(server_a)
        turn_b = server_b.ask(QUESTION, user_id="u", thread_id=thread)
        began = []

        def begin_b_first(statement: str) -> None:
            if statement.startswith("BEGIN") and not began:
                began.append(next(turn_b))  # B's claim: lease, the killed turn closed, its question saved

        server_a.store.db.conn.set_trace_callback(begin_b_first)
        try:
            closed = server_a.recover()
        finally:
            server_a.store.db.conn.set_trace_callback(None)
        assert [e.type for e in began] == ["start"]
        assert closed == 0  # B's turn closed the killed one as it began, and A left B's alone
        rest = list(turn_b)
        assert rest[-1].type == "answer" and rest[-1].answer.ok
        state = server_a.store.load(thread, user_id="u").state
        assert [m.content for m in state.messages[:3]] == ["killed", INTERRUPTED_TEXT, QUESTION]
        assert [s.turn_index for s in state.steps if s.step_type == "interrupted"] == [0]
    finally:
        server_a.close()
        server_b.close()


def test_recovery_closes_a_killed_turn_and_leaves_no_lease(tmp_path, sample_db_path):
    askdb = AskDB(_offline(tmp_path, sample_db_path))
    try:
        thread = _killed_turn(askdb)
        assert askdb.recover() == 1 and askdb.recover() == 0
        assert askdb.store.load(thread, user_id="u").state.messages[-1].content == INTERRUPTED_TEXT
        assert not askdb.leases.is_held(thread) and askdb.lease_keeper.held() == set()
        assert list(askdb.ask(QUESTION, user_id="u", thread_id=thread))[-1].answer.ok
    finally:
        askdb.close()


def test_a_claim_that_fails_after_taking_the_lease_leaves_nothing_to_renew(tmp_path, sample_db_path):
    """The lease is taken, then the conversation's state cannot be read: the claim's transaction is rolled
    back, and the lease it took was left registered for renewal (every third of its length, for ever)."""
    askdb = AskDB(_offline(tmp_path, sample_db_path))
    try:
        thread = askdb.store.create(user_id="u", state=AgentState()).thread_id
        with sqlite3.connect(tmp_path / "store.db") as raw:
            raw.execute("""UPDATE conversations SET state_data = '{"messages": 5}' WHERE thread_id = ?""", (thread,))
        with pytest.raises(CorruptState):
            list(askdb.ask(QUESTION, user_id="u", thread_id=thread))
        assert askdb.lease_keeper.held() == set() and not askdb.leases.is_held(thread)
    finally:
        askdb.close()


def test_a_lease_the_store_refuses_to_release_is_no_longer_renewed(tmp_path, sample_db_path):
    """A release the store refuses (here a trigger; a PostgreSQL restart does the same) stopped nothing: the
    keeper renewed the lease for ever and the conversation refused every question until a restart. Now it
    expires on its own."""
    askdb = AskDB(_offline(tmp_path, sample_db_path))
    try:
        with sqlite3.connect(tmp_path / "store.db") as raw:
            raw.execute("CREATE TRIGGER keep_leases BEFORE DELETE ON turn_leases"
                        " BEGIN SELECT RAISE(ABORT, 'the store refused the release'); END")
        with pytest.raises(StoreError, match="refused the release"):
            list(askdb.ask(QUESTION, user_id="u"))
        assert askdb.lease_keeper.held() == set()
    finally:
        askdb.close()


def test_the_analysts_rerun_is_refused_while_a_web_turn_of_the_conversation_runs(tmp_path, tiny_db, scripted_llm):
    """The web turn's lease has lapsed (renewals the store missed): only this process knows the turn still
    runs, as `start_turn` does. The re-run used to take the lease, save, and make the turn's answer a
    VersionConflict."""
    model_may_answer = threading.Event()
    scripted_llm.responder(lambda request: (model_may_answer.wait(60), tool_call("answer", {"text": "Hi."}))[1])
    askdb = AskDB(Settings(database=tiny_db, store=tmp_path / "store.db", llm="openai",
                           openai_base_url=scripted_llm.base_url, llm_max_retries=0, memory_embedder="none"))
    try:
        thread = askdb.store.create(user_id="u", state=AgentState()).thread_id
        turn = askdb.start_turn("Hello?", user_id="u", thread_id=thread)
        while not scripted_llm.chat_requests:  # the turn waits for the model
            time.sleep(0.02)
        with sqlite3.connect(tmp_path / "store.db") as raw:
            raw.execute("UPDATE turn_leases SET expires_at = 0")
        with pytest.raises(TurnInProgress):
            askdb.run_analyst_sql(thread, user_id="u", sql="SELECT name FROM countries")
        model_may_answer.set()
        turn.wait()
        assert [e.type for e in turn.events][-1] == "answer" and turn.events[-1].answer.data.text.endswith("Hi.")
        assert [m.content for m in askdb.store.load(thread, user_id="u").state.messages if m.role == "user"] == [
            "Hello?"]
    finally:
        model_may_answer.set()
        askdb.close()


def test_the_analysts_rerun_closes_a_question_a_killed_process_left(tmp_path, tiny_db):
    """A re-run after a killed turn put its SQL after an unanswered question, which then never showed as
    interrupted and shifted the turns' numbers."""
    askdb = AskDB(Settings(database=tiny_db, store=tmp_path / "store.db", llm="offline", memory_embedder="none"))
    try:
        thread = _killed_turn(askdb)
        assert askdb.run_analyst_sql(thread, user_id="u", sql="SELECT name FROM countries") == 1
        state = askdb.store.load(thread, user_id="u").state
        assert [m.content for m in state.messages][:2] == ["killed", INTERRUPTED_TEXT]
        assert [(s.turn_index, s.step_type) for s in state.steps] == [(0, "interrupted"), (1, "answer")]
        assert askdb.lease_keeper.held() == set()
    finally:
        askdb.close()


class TwoServers:
    """Server A's web turn waiting for its (scripted) model until `model_may_answer` is set, and server B,
    the offline planner, on the same store file, as another host would be."""

    def __init__(self, tmp_path, tiny_db, scripted_llm, *replies):
        self.model_may_answer, replies = threading.Event(), iter(replies)
        scripted_llm.responder(lambda request: (self.model_may_answer.wait(60), next(replies))[1])
        self.store = tmp_path / "store.db"
        self.a = AskDB(Settings(database=tiny_db, store=self.store, llm="openai", llm_max_retries=0,
                                openai_base_url=scripted_llm.base_url, memory_embedder="none"))
        self.b = AskDB(Settings(database=tiny_db, store=self.store, llm="offline", memory_embedder="none"))
        self.thread = self.a.store.create(user_id="u", state=AgentState()).thread_id
        self.turn_a = self.a.start_turn("Which tables are there?", user_id="u", thread_id=self.thread)
        while not scripted_llm.chat_requests:  # A waits for its model
            time.sleep(0.02)

    def close(self, *, a_closed: bool = False) -> None:
        self.model_may_answer.set()
        if not a_closed:
            self.a.close()
        self.b.close()


def test_a_turn_whose_lease_was_taken_over_writes_nothing_more(tmp_path, tiny_db, scripted_llm):
    """Server A's turn waits for its model past its lease (its renewals failed); server B takes the
    conversation over, closes A's question as interrupted and answers its own. A's steps and answer then
    landed in B's conversation, among B's steps (the final save alone was refused, as a VersionConflict)."""
    servers = TwoServers(tmp_path, tiny_db, scripted_llm, tool_call("list_tables", {}),
                         tool_call("answer", {"text": "A's late answer."}))
    try:
        with sqlite3.connect(servers.store) as raw:
            raw.execute("UPDATE turn_leases SET expires_at = 0")
        assert list(servers.b.ask("How many sites are there?", user_id="u", thread_id=servers.thread))[-1].answer.ok
        steps_b = servers.b.store.steps(servers.thread, user_id="u")
        servers.model_may_answer.set()
        servers.turn_a.wait()
        assert servers.turn_a.events[-1].type == "error" and servers.turn_a.events[-1].message.startswith("LeaseLost")
        assert servers.b.store.steps(servers.thread, user_id="u") == steps_b
        state = servers.b.store.load(servers.thread, user_id="u").state
        assert [m.content for m in state.messages if m.role == "user"] == [
            "Which tables are there?", "How many sites are there?"]
        assert state.messages[1].content == INTERRUPTED_TEXT and state.answer.ok
    finally:
        servers.close()


def test_a_server_shutting_down_mid_turn_lets_another_take_the_conversation_at_once(tmp_path, tiny_db, scripted_llm):
    """Server A is stopped while its turn waits for the model. Its lease stayed until it expired (minutes,
    on another host), the conversation refusing every question meanwhile; now A releases it as it closes."""
    servers = TwoServers(tmp_path, tiny_db, scripted_llm, tool_call("answer", {"text": "Late."}))
    try:
        servers.a.close()
        assert list(servers.b.ask("How many sites are there?", user_id="u", thread_id=servers.thread))[-1].answer.ok
        servers.model_may_answer.set()
        servers.turn_a.wait()
        assert servers.turn_a.events[-1].type == "error"  # A's turn wrote nothing after its server closed
        state = servers.b.store.load(servers.thread, user_id="u").state
        assert [m.content for m in state.messages[:3]] == [
            "Which tables are there?", INTERRUPTED_TEXT, "How many sites are there?"]
        assert not servers.b.leases.is_held(servers.thread)
    finally:
        servers.close(a_closed=True)


def test_stop_on_another_server_ends_the_turn_before_its_next_model_call(tmp_path, tiny_db, scripted_llm):
    """The analyst presses Stop on server B while server A's turn waits for its model: B ran no turn of
    that conversation, so it stopped nothing and said so. Now B sets the stop on A's lease, and A ends
    the turn as stopped when the model's reply comes, keeping its steps."""
    servers = TwoServers(tmp_path, tiny_db, scripted_llm, tool_call("list_tables", {}),
                         tool_call("answer", {"text": "Never given."}))
    try:
        assert servers.b.stop_turn(servers.thread, user_id="u")
        servers.model_may_answer.set()
        servers.turn_a.wait()
        assert servers.turn_a.events[-1].type == "answer" and "Stopped at your request" in \
            servers.turn_a.events[-1].answer.data.text
        assert len(scripted_llm.chat_requests) == 1  # the reply was dropped, and no model call followed
        assert not servers.b.stop_turn(servers.thread, user_id="u")  # no turn runs any more
        # The next turn's lease starts without the stop.
        turn_b = servers.b.start_turn("How many sites are there?", user_id="u", thread_id=servers.thread)
        turn_b.wait()
        assert turn_b.events[-1].type == "answer" and turn_b.events[-1].answer.ok
    finally:
        servers.close()


def test_a_lease_owner_names_its_node_and_process_so_another_container_never_judges_it_gone():
    """Issue 39: owners were host:pid, and a container sharing the host name took over a live turn
    whose pid did not exist in its own namespace. Now only a process of this very node that has
    ended (or whose pid was reused) is gone."""
    import subprocess
    import sys

    from storage import leases

    mine = leases.new_owner()
    node, pid, started, token = mine.split(":")
    assert node == leases.NODE and int(pid) == os.getpid() and started and len(token) == 8
    assert not leases._owner_is_gone(mine)
    other_container = mine.replace(leases.NODE, leases.NODE.rsplit("/", 1)[0] + "/1")
    assert not leases._owner_is_gone(other_container)
    ended = subprocess.run([sys.executable, "-c", "from storage.leases import new_owner; print(new_owner())"],
                           capture_output=True, text=True, check=True).stdout.strip()
    assert leases._owner_is_gone(ended)  # this node, a process that has ended
    reused = f"{node}:{pid}:{int(started) + 1}:{token}"  # this pid, another process's start
    assert leases._owner_is_gone(reused)
    assert not leases._owner_is_gone(f"{node.split('/')[0]}:{pid}:{token}")  # the old form: let it expire
