"""What only the PostgreSQL store has to show: JSONB and its README examples, NULs, an unreachable
server. Everything both backends share is in test_conformance.py."""

from __future__ import annotations

import re

import psycopg
import pytest

from agent.state import AgentState, Message, SQLRecord, Step
from app.settings import ROOT
from storage.errors import StoreUnavailable
from storage.conversations import ConversationStore
from storage.postgres.backend import jsonb_text

README = (ROOT / "README.md").read_text()


@pytest.fixture
def store(pg_store_url):
    with ConversationStore.open(pg_store_url, AgentState) as store:
        yield store


def test_the_readme_jsonb_examples_run_on_a_real_store(store):
    state = AgentState(question="How many launches in 2020?", compressed_summary="Asked about launches.",
                       compressed_message_count=2)
    state.messages += [Message(role="user", content="How many launches in 2020?"),
                       Message(role="assistant", content="There were 97.")]
    state.sql_history += [SQLRecord(sql="SELECT count(*) FROM launchez", ok=False, error="no such table"),
                          SQLRecord(sql="SELECT count(*) FROM launches", ok=True, row_count=1)]
    created = store.create(user_id="default", state=state, title=state.question)
    store.append_step(created.thread_id, step_index=0, step=Step(step_index=0, action="run_sql", duration_ms=3))
    section = README.split("<!-- jsonb-examples -->")[1].split("<!-- /jsonb-examples -->")[0]
    examples = [sql.replace(":'thread_id'", "%(thread_id)s") for sql in re.findall(r"```sql\n(.*?)```", section, flags=re.S)]
    assert len(examples) == 5
    with store.db.pool.connection() as conn:
        results = [conn.execute(sql, {"thread_id": created.thread_id}).fetchall() for sql in examples]
    assert results[0][0][2] == 2
    assert results[1][0] == ("Asked about launches.", 2)
    assert AgentState.from_json(results[2][0][0]) == state
    assert results[3] == [(created.thread_id, "SELECT count(*) FROM launchez", "no such table")]
    assert results[4][0][:2] == ("run_sql", 1)


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
