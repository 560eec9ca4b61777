"""The store core (storage/sql.py) on both backends: `?` placeholders everywhere, names checked
before they reach SQL, one timestamp format, a write inside a write joining it."""

from __future__ import annotations

import re

import pytest

from agent.state import AgentState
from storage.sql import identifier
from tests.storage.test_conformance import location, store  # noqa: F401 (the fixtures, both backends)

ISO = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$")


@pytest.mark.parametrize("name", ["conversations", "state_data", "conversations.tags", "item", "_x1"])
def test_an_identifier_of_ours_passes(name):
    assert identifier(name) == name


@pytest.mark.parametrize("name", ["", "Conversations", "tags; DROP TABLE conversations", "a b", "x'--",
                                  "a.b.c", "1x", "t\"x", "x" * 64, "$.messages"])
def test_anything_else_never_reaches_sql(name):
    with pytest.raises(ValueError):
        identifier(name)


def test_placeholders_and_a_literal_percent_mean_the_same_on_both_backends(store):  # noqa: F811
    assert store.db.value("SELECT '100%' || ? AS v", ("!",)) == "100%!"
    assert store.db.value("SELECT CAST(? AS TEXT) AS v", ("?%s",)) == "?%s"


def test_timestamps_read_back_in_one_format(store):  # noqa: F811
    created = store.create(user_id="u", state=AgentState())
    assert ISO.match(created.created_at) and created.created_at == created.updated_at


def test_a_write_inside_a_write_commits_with_it_or_not_at_all(store):  # noqa: F811
    with pytest.raises(RuntimeError), store.db.write():
        store.create(user_id="u", state=AgentState(), thread_id="inner")
        assert store.get("inner", user_id="u").thread_id == "inner"  # seen inside the transaction
        raise RuntimeError("the outer write fails")
    assert store.list(user_id="u").total == 0


def test_a_failed_commit_leaves_no_transaction_for_the_next_write_to_join(tmp_path):
    """A deferred foreign key fails at COMMIT and SQLite keeps the transaction open: without a
    rollback, every later write joined it and never reached the disk (found in review)."""
    from storage.sqlite_backend import SQLiteDatabase

    db = SQLiteDatabase.open(tmp_path / "x.db")
    db.conn.execute("PRAGMA foreign_keys = ON")
    db.conn.executescript("CREATE TABLE parent (id INTEGER PRIMARY KEY);"
                          "CREATE TABLE child (parent_id INTEGER REFERENCES parent (id) DEFERRABLE INITIALLY DEFERRED);")
    with pytest.raises(Exception, match="FOREIGN KEY"):
        with db.write() as tx:
            tx.execute("INSERT INTO child VALUES (?)", (7,))
    assert not db.conn.in_transaction
    with db.write() as tx:
        tx.execute("INSERT INTO parent VALUES (?)", (1,))
    db.close()
    reopened = SQLiteDatabase.open(tmp_path / "x.db")
    assert reopened.conn.execute("SELECT count(*) FROM parent").fetchone()[0] == 1
    assert reopened.conn.execute("SELECT count(*) FROM child").fetchone()[0] == 0
    reopened.close()
