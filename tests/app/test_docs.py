"""The README is part of the product: its settings table and JSON1 examples are checked."""

from __future__ import annotations

import re
import sqlite3

from agent.state import AgentState
from app.settings import ROOT, Settings
from tests.fixtures.stores import check_documented_results, seed_documented_conversation

README = (ROOT / "README.md").read_text()


def _section(marker: str) -> str:
    return README.split(f"<!-- {marker} -->")[1].split(f"<!-- /{marker} -->")[0]


def test_every_setting_is_in_the_readme_table():
    table = _section("settings-table")
    documented = set(re.findall(r"^\| `([A-Z_]+)` \|", table, flags=re.M))
    assert set(Settings.documented_env()) == documented


def test_json1_examples_run_on_a_real_store(store):
    thread_id, state = seed_documented_conversation(store)
    examples = re.findall(r"```sql\n(.*?)```", _section("json1-examples"), flags=re.S)
    assert len(examples) >= 3
    results = [store.db.conn.execute(sql, {"thread_id": thread_id}).fetchall() for sql in examples]
    check_documented_results(results, thread_id=thread_id, state=state)


def test_views_are_read_only(store):
    store.create(user_id="u", state=AgentState())
    try:
        store.db.conn.execute("DELETE FROM v_messages")
    except sqlite3.OperationalError as exc:
        assert "view" in str(exc)
    else:
        raise AssertionError("a view accepted a DELETE")
