"""What only the PostgreSQL store has to show: JSONB and its README examples, NULs, an unreachable
server, what the server's deadlocks and time limits mean. Everything both backends share is in
test_conformance.py."""

from __future__ import annotations

import re
import threading
from urllib.parse import quote

import psycopg
import pytest

from agent.state import AgentState, Message, Step
from app.errors import status_of
from app.settings import ROOT
from storage.errors import StoreConflict, StoreTimeout, StoreUnavailable
from storage.conversations import ConversationStore
from storage.postgres.backend import jsonb_text
from tests.fixtures.stores import check_documented_results, seed_documented_conversation

README = (ROOT / "README.md").read_text()


@pytest.fixture
def store(pg_store_url):
    with ConversationStore.open(pg_store_url, AgentState) as store:
        yield store


def test_the_readme_jsonb_examples_run_on_a_real_store(store):
    thread_id, state = seed_documented_conversation(store)
    section = README.split("<!-- jsonb-examples -->")[1].split("<!-- /jsonb-examples -->")[0]
    examples = [sql.replace(":'thread_id'", "%(thread_id)s") for sql in re.findall(r"```sql\n(.*?)```", section, flags=re.S)]
    assert len(examples) == 5
    with store.db.pool.connection() as conn:
        results = [conn.execute(sql, {"thread_id": thread_id}).fetchall() for sql in examples]
    check_documented_results(results, thread_id=thread_id, state=state)


def test_state_is_jsonb_and_the_views_are_read_only(store):
    created = store.create(user_id="u", state=AgentState())
    with store.db.pool.connection() as conn:
        assert conn.execute("SELECT pg_typeof(state_data)::text FROM conversations").fetchone() == ("jsonb",)
        for view in ("v_messages", "v_steps", "v_sql_history"):
            with pytest.raises(psycopg.errors.Error), conn.transaction():
                conn.execute(f"DELETE FROM {view} WHERE thread_id = %s", (created.thread_id,))


def test_a_nul_in_the_state_is_kept_as_a_replacement_character(store):
    state = AgentState(question="a\x00b")
    state.messages.append(Message(role="user", content="x\x00y \\u0000 stays literal"))
    created = store.create(user_id="u", state=state)
    store.append_step(created.thread_id, step_index=0, step=Step(step_index=0, observation="\x00"))
    loaded = store.load(created.thread_id, user_id="u").state
    assert loaded.question == "a\ufffdb" and loaded.messages[0].content == "x\ufffdy \\u0000 stays literal"
    assert store.steps(created.thread_id, user_id="u")[0].data["observation"] == "\ufffd"


@pytest.mark.parametrize(("text", "expected"), [
    ('"\\u0000"', '"\\ufffd"'), ('"\\\\u0000"', '"\\\\u0000"'), ('"\\\\\\u0000"', '"\\\\\\ufffd"'), ('"plain"', '"plain"'),
])
def test_jsonb_text_replaces_only_escaped_nuls(text, expected):
    assert jsonb_text(text) == expected


def test_an_unreachable_server_is_store_unavailable():
    with pytest.raises(StoreUnavailable, match="ASKDB_STORE"):
        ConversationStore.connect("postgresql://nobody@127.0.0.1:1/none", AgentState, timeout_s=1)


# -- what the server's operational errors mean (each keeps PostgreSQL's reason) ---------------------

def test_a_deadlock_is_a_conflict_to_try_again_not_an_unavailable_store(store):
    """Two writes lock two conversations in opposite orders: PostgreSQL rolls one back (deadlock_detected).
    It used to be "the PostgreSQL store is unavailable" (503), as if the server were down."""
    first, second = (store.create(user_id="u", state=AgentState()).thread_id for _ in range(2))
    both_hold_one = threading.Barrier(2)
    outcomes: dict[str, object] = {}

    def rename_both(one: str, other: str) -> None:
        try:
            with store.transaction():
                store.update(one, user_id="u", title=f"by {one}")
                both_hold_one.wait()
                store.update(other, user_id="u", title=f"by {one}")
            outcomes[one] = "committed"
        except Exception as exc:  # noqa: BLE001 - the outcome is the assertion
            outcomes[one] = exc

    writers = [threading.Thread(target=rename_both, args=pair) for pair in ((first, second), (second, first))]
    for writer in writers:
        writer.start()
    for writer in writers:
        writer.join()
    failed = [o for o in outcomes.values() if o != "committed"]
    assert len(failed) == 1 and isinstance(failed[0], StoreConflict), outcomes
    assert "deadlock detected (SQLSTATE 40P01)" in str(failed[0]) and "try again" in str(failed[0])
    assert status_of(failed[0]) == 409
    winner = next(thread for thread, outcome in outcomes.items() if outcome == "committed")
    assert {store.get(t, user_id="u").title for t in (first, second)} == {f"by {winner}"}  # the loser wrote nothing


@pytest.mark.parametrize(("setting", "reason"), [("lock_timeout", "lock timeout"),
                                                 ("statement_timeout", "statement timeout")])
def test_a_time_limit_of_the_stores_role_is_said_as_such(pg_store_url, setting, reason):
    """An operator's session holds a conversation's row; the store's role has a time limit. The save it
    stops was "the store is unavailable" too."""
    url = pg_store_url + quote(f" -c{setting}=200")
    with ConversationStore.open(url, AgentState) as store:
        thread = store.create(user_id="u", state=AgentState()).thread_id
        with psycopg.connect(pg_store_url) as operator:
            operator.execute("SELECT 1 FROM conversations WHERE thread_id = %s FOR UPDATE", (thread,))
            with pytest.raises(StoreTimeout) as stopped:
                store.update(thread, user_id="u", title="late")
        assert f"canceling statement due to {reason}" in str(stopped.value) and setting in str(stopped.value)
        assert store.update(thread, user_id="u", title="in time").title == "in time"  # the pool recovered


def test_a_connection_lost_mid_transaction_is_still_an_unavailable_store(store, postgres_url):
    thread = store.create(user_id="u", state=AgentState()).thread_id
    with pytest.raises(StoreUnavailable) as lost:
        with store.transaction() as tx:
            pid = tx.value("SELECT pg_backend_pid() AS pid")
            with psycopg.connect(postgres_url, autocommit=True) as admin:
                admin.execute("SELECT pg_terminate_backend(%s, 10000)", (pid,))
            store.update(thread, user_id="u", title="lost")
    assert type(lost.value) is StoreUnavailable and "unavailable" in str(lost.value)
    assert store.get(thread, user_id="u").title == ""
