"""The README is part of the product: its settings table and JSON1 examples are checked."""

from __future__ import annotations

import re
import sqlite3

from agent.state import AgentState, Message, SQLRecord, Step
from app.settings import ROOT, Settings

README = (ROOT / "README.md").read_text()


def _section(marker: str) -> str:
    return README.split(f"<!-- {marker} -->")[1].split(f"<!-- /{marker} -->")[0]


def test_every_setting_is_in_the_readme_table():
    table = _section("settings-table")
    documented = set(re.findall(r"^\| `([A-Z_]+)` \|", table, flags=re.M))
    assert set(Settings.documented_env()) == documented


def test_json1_examples_run_on_a_real_store(store):
    state = AgentState(question="How many launches in 2020?", compressed_summary="Asked about launches.",
                       compressed_message_count=2)
    state.messages += [Message(role="user", content="How many launches in 2020?"),
                       Message(role="assistant", content="There were 97.")]
    state.sql_history += [SQLRecord(sql="SELECT count(*) FROM launchez", ok=False, error="no such table"),
                          SQLRecord(sql="SELECT count(*) FROM launches", ok=True, row_count=1)]
    created = store.create(user_id="default", state=state, title=state.question)
    store.append_step(created.thread_id, step_index=0, step=Step(step_index=0, action="run_sql", duration_ms=3))
    examples = re.findall(r"```sql\n(.*?)```", _section("json1-examples"), flags=re.S)
    assert len(examples) >= 3
    results = [store.db.conn.execute(sql, {"thread_id": created.thread_id}).fetchall() for sql in examples]
    assert results[0][0][2] == 2  # two messages
    assert results[1][0] == ("Asked about launches.", 2)
    assert AgentState.from_json(results[2][0][0]) == state
    assert results[3] == [(created.thread_id, "SELECT count(*) FROM launchez", "no such table")]
    assert results[4][0][:2] == ("run_sql", 1)


def test_views_are_read_only(store):
    store.create(user_id="u", state=AgentState())
    try:
        store.db.conn.execute("DELETE FROM v_messages")
    except sqlite3.OperationalError as exc:
        assert "view" in str(exc)
    else:
        raise AssertionError("a view accepted a DELETE")
